"""(alpha,k)-anonymity (Wong et al. 2006) against exact references (tests/distribution_oracle.py).

Covers: value and verdict against Fractions on random bucketizations, ties at alpha as
written, parameter errors, the per-group verdict equal to the evaluation, the anonymizer
facts (monotone under merging, local, not suppression-monotone: counterexample below), and
that no sensitive value appears in a reason or witness.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.criteria._distribution import fractions_at_most, ratio_at_most
from airflow_privacy.core.criteria.alpha_k_anonymity import (
    alpha_k_anonymity,
    alpha_k_groups_pass,
)
from airflow_privacy.core.criteria.registry import CRITERIA
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError
from tests import distribution_oracle as ref

Rows = list[list[int]]
LABELS = ("ZZ-SECRET-A", "ZZ-SECRET-B", "ZZ-SECRET-C", "ZZ-SECRET-D", "ZZ-SECRET-E")
ALPHAS = [0.2, 0.25, 0.3, 1 / 3, 0.5, 0.6, 0.75, 0.8, 1.0]


@st.composite
def count_rows(draw: st.DrawFn, min_groups: int = 1, max_groups: int = 6) -> Rows:
    v = draw(st.integers(1, 5))
    g = draw(st.integers(min_groups, max_groups))
    rows = [[draw(st.integers(0, 6)) for _ in range(v)] for _ in range(g)]
    for row in rows:
        if sum(row) == 0:
            row[draw(st.integers(0, v - 1))] = 1
    return rows


def bucket(rows: Rows) -> Bucketization:
    return Bucketization.from_group_counts(rows, LABELS[: len(rows[0])])


def _merge(rows: Rows, i: int, j: int) -> Rows:
    merged = [a + b for a, b in zip(rows[i], rows[j], strict=True)]
    return [r for k, r in enumerate(rows) if k not in (i, j)] + [merged]


@settings(max_examples=200, deadline=None)
@given(rows=count_rows(), alpha=st.sampled_from(ALPHAS), k=st.integers(1, 8), pick=st.data())
def test_value_and_verdict_match_the_definition(
    rows: Rows, alpha: float, k: int, pick: st.DataObject
) -> None:
    column = pick.draw(st.sampled_from([None, *range(len(rows[0]))]))
    b = bucket(rows)
    value = None if column is None else LABELS[column]
    res = alpha_k_anonymity(b, alpha, k, value)
    assert res.value == pytest.approx(float(ref.alpha_achieved(rows, column)), abs=1e-12)
    assert res.details["k_achieved"] == min(sum(r) for r in rows)
    expected = [ref.alpha_k_group_ok(r, alpha, k, column) for r in rows]
    assert res.safe == all(expected)
    assert res.details["failing_groups"] == expected.count(False)
    counts = np.asarray(rows, dtype=np.int64)
    got = alpha_k_groups_pass(counts, counts.sum(axis=0), alpha, k, column)
    assert got.tolist() == expected


def test_tie_at_alpha_as_written() -> None:
    b = bucket([[3, 1], [1, 4]])  # shares 3/4 and 4/5
    # a share equal to alpha passes (the alpha-deassociation requirement is <=)
    assert alpha_k_anonymity(b, 0.8, 4).safe
    # 7/10 against 0.7: Fraction(0.7) is below 7/10, the decimal as written is not
    assert alpha_k_anonymity(bucket([[7, 3]]), 0.7, 10).safe
    assert not alpha_k_anonymity(b, 0.7999999999, 4).safe
    assert not alpha_k_anonymity(b, 0.8, 5).safe  # k fails: the first group has 4 records
    assert alpha_k_anonymity(b, 0.75, 4, LABELS[0]).safe  # designated: 3/4 and 1/5
    assert not alpha_k_anonymity(b, 0.75, 4, LABELS[1]).safe  # 4/5 > 0.75
    res = alpha_k_anonymity(b, 0.3, 1, LABELS[0])
    assert not res.safe and res.value == 0.75


def test_designated_value_absent_passes_on_alpha() -> None:
    res = alpha_k_anonymity(bucket([[2, 2], [3, 1]]), 0.1, 4, "not-in-the-release")
    assert res.safe and res.value == 0.0


@pytest.mark.parametrize(
    ("alpha", "k", "value", "message"),
    [
        (0, 2, None, "alpha-k-anonymity: alpha must be a number in (0, 1], got 0"),
        (1.5, 2, None, "alpha-k-anonymity: alpha must be a number in (0, 1], got 1.5"),
        (True, 2, None, "alpha must be a number in (0, 1], got True"),
        ("0.5", 2, None, "alpha must be a number in (0, 1], got '0.5'"),
        (0.5, 0, None, "alpha-k-anonymity: k must be an integer >= 1, got 0"),
        (0.5, 2.5, None, "k must be an integer >= 1, got 2.5"),
        (0.5, 2, 3, "sensitive_value must be a value of the sensitive column"),
    ],
)
def test_parameter_errors(alpha: object, k: object, value: object, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        alpha_k_anonymity(bucket([[1, 1]]), alpha, k, value)  # type: ignore[arg-type]


def test_integral_float_k_accepted() -> None:
    assert alpha_k_anonymity(bucket([[1, 1]]), 0.5, 2.0).parameters == {"alpha": 0.5, "k": 2}  # type: ignore[arg-type]


# ------------------------------------------------------------------ anonymizer facts


def test_declared_facts_are_the_tested_ones() -> None:
    # merge: test_monotone_under_merging; local: test_local*; suppression: the counterexample
    m = CRITERIA["alpha-k-anonymity"].monotonicity  # what the anonymizers read
    assert (m.merge, m.suppression, m.local) == (True, False, True)


@settings(max_examples=200, deadline=None)
@given(
    rows=count_rows(min_groups=2),
    alpha=st.sampled_from(ALPHAS),
    k=st.integers(1, 6),
    pick=st.data(),
)
def test_monotone_under_merging(rows: Rows, alpha: float, k: int, pick: st.DataObject) -> None:
    column = pick.draw(st.sampled_from([None, 0]))
    value = None if column is None else LABELS[0]
    i, j = pick.draw(
        st.sampled_from([(a, c) for a in range(len(rows)) for c in range(a + 1, len(rows))])
    )
    if alpha_k_anonymity(bucket(rows), alpha, k, value).safe:
        assert alpha_k_anonymity(bucket(_merge(rows, i, j)), alpha, k, value).safe


@settings(max_examples=150, deadline=None)
@given(rows=count_rows(), alpha=st.sampled_from(ALPHAS), k=st.integers(1, 6))
def test_local(rows: Rows, alpha: float, k: int) -> None:
    whole = alpha_k_anonymity(bucket(rows), alpha, k).safe
    assert whole == all(alpha_k_anonymity(bucket([r]), alpha, k).safe for r in rows)


def test_not_suppression_monotone_counterexample() -> None:
    # group [2, 2] passes (0.5, 4)-anonymity; merged with the homogeneous [3, 0] it has
    # 5/7 > 0.5 of one value: a passing group does not absorb every group
    assert alpha_k_anonymity(bucket([[2, 2]]), 0.5, 4).safe
    assert not alpha_k_anonymity(bucket([[5, 2]]), 0.5, 4).safe


def test_no_sensitive_value_in_reason_or_witness() -> None:
    rows = [[3, 0, 0], [1, 1, 1], [0, 2, 2]]
    for column in (None, 0, 1):
        value = None if column is None else LABELS[column]
        for alpha, k in ((0.5, 3), (1.0, 1)):
            res = alpha_k_anonymity(bucket(rows), alpha, k, value)
            text = res.reason + json.dumps(res.witness)
            assert not any(label in text for label in LABELS)
            if column is not None:
                assert "share" not in json.dumps(res.witness)


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(st.integers(-(2**40), 2**40), st.integers(1, 2**40)), min_size=1, max_size=8
    ),
    limit=st.sampled_from([0.1, 0.3, 0.5, 1 / 3, 0.123456789, 2.5, 1e-7]),
    scale=st.sampled_from([1, 2**22]),
)
def test_exact_ratio_helpers_match_fractions(
    pairs: list[tuple[int, int]], limit: float, scale: int
) -> None:
    # the int64 path (small products) and the Python-integer path (scale 2**22 pushes the
    # products past 2**62) both decide num / den <= limit as written, exactly
    num = np.asarray([a * scale if abs(a * scale) < 2**62 else a for a, _ in pairs])
    den = np.asarray([b for _, b in pairs])
    expected = [Fraction(int(a), int(b)) <= ref.typed(limit) for a, b in zip(num, den, strict=True)]
    assert fractions_at_most(num, den, limit).tolist() == expected
    # near the limit ratio_at_most defers to the same exact test
    tied = (
        np.asarray([ref.typed(limit).numerator * 7]),
        np.asarray([ref.typed(limit).denominator * 7]),
    )
    assert ratio_at_most(*tied, limit).tolist() == [True]
    assert ratio_at_most(tied[0] + 1, tied[1], limit).tolist() == [False]


def test_designated_value_failure_names_no_group_over_alpha() -> None:
    # group 0 holds the designated value only; the reason counts it, it does not name it
    rows = [[3, 0], [1, 5]]
    res = alpha_k_anonymity(bucket(rows), 0.5, 1, LABELS[0])
    assert not res.safe and res.value == 1.0
    assert "group '" not in res.reason and "1 of 2 groups hold more than 0.5" in res.reason
    assert res.witness is not None and res.witness["groups_over_alpha"] == 1
    # a group too small is named (that discloses nothing about values)
    res = alpha_k_anonymity(bucket(rows), 0.5, 4, LABELS[0])
    assert "group 'group=0' has 3 records" in res.reason
    assert res.details["failing_groups"] == 1
