"""delta-disclosure privacy (Brickell & Shmatikov 2008) against exact references.

Verdicts against ``r < e^delta and 1/r < e^delta`` decided with Taylor bounds of ``exp``
(tests/distribution_oracle.py), values against ``math.log`` of exact ratios, absent values
(``ln 0``), close calls within the tolerance band, parameter errors, per-group verdicts
equal to the evaluation, the anonymizer facts (monotone under merging, local, not
suppression-monotone: counterexample) and no sensitive value in reasons or witnesses.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.criteria._distribution import log_sign
from airflow_privacy.core.criteria.delta_disclosure import (
    delta_disclosure,
    delta_disclosure_groups_pass,
)
from airflow_privacy.core.criteria.registry import CRITERIA
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError
from tests import distribution_oracle as ref

Rows = list[list[int]]
LABELS = ("ZZ-SECRET-A", "ZZ-SECRET-B", "ZZ-SECRET-C", "ZZ-SECRET-D", "ZZ-SECRET-E")
DELTAS = [0.1, 0.2, 0.5, math.log(2), 0.7, 1.0, 1.5, 2.0]


@st.composite
def count_rows(draw: st.DrawFn, min_groups: int = 1, max_groups: int = 6) -> Rows:
    v = draw(st.integers(1, 4))
    g = draw(st.integers(min_groups, max_groups))
    lo = draw(st.integers(0, 1))  # many releases with every value in every group
    rows = [[draw(st.integers(lo, 6)) for _ in range(v)] for _ in range(g)]
    for row in rows:
        if sum(row) == 0:
            row[draw(st.integers(0, v - 1))] = 1
    return rows


def bucket(rows: Rows) -> Bucketization:
    return Bucketization.from_group_counts(rows, LABELS[: len(rows[0])])


def _merge(rows: Rows, i: int, j: int) -> Rows:
    merged = [a + b for a, b in zip(rows[i], rows[j], strict=True)]
    return [r for k, r in enumerate(rows) if k not in (i, j)] + [merged]


@settings(max_examples=250, deadline=None)
@given(rows=count_rows(), delta=st.sampled_from(DELTAS))
def test_matches_the_definition(rows: Rows, delta: float) -> None:
    tot = ref.table(rows)
    res = delta_disclosure(bucket(rows), delta)
    expected_value = ref.delta_value(rows)
    if math.isinf(expected_value):
        assert res.value == math.inf and res.details["missing_cells"] > 0
    else:
        assert res.value == pytest.approx(expected_value, rel=1e-12, abs=1e-12)
    expected = [ref.delta_group_ok(r, tot, delta) for r in rows]
    assert res.safe == all(expected)
    counts = np.asarray(rows, dtype=np.int64)
    assert delta_disclosure_groups_pass(counts, counts.sum(axis=0), delta).tolist() == expected


def test_absent_value_fails_every_delta() -> None:
    rows = [[3, 1], [4, 0]]
    for delta in (0.5, 10.0, 1e6):
        res = delta_disclosure(bucket(rows), delta)
        assert not res.safe and res.value == math.inf
        assert "lacks a value" in res.reason
    # pyCANON's number: the maximum over the values a group holds
    expected = max(abs(math.log((3 / 4) / (7 / 8))), abs(math.log((1 / 4) / (1 / 8))), 0.0)
    expected = max(expected, abs(math.log(1 / (7 / 8))))
    assert delta_disclosure(bucket(rows), 1).details["max_over_present_values"] == pytest.approx(
        expected
    )


def test_close_calls_at_ln2() -> None:
    # q/p = 1/2 exactly: |ln r| = ln 2 = 0.69314718055994530941...; the float math.log(2)
    # prints as 0.6931471805599453, a decimal just below ln 2, so ln 2 < delta fails for it
    # and holds for the next float up
    rows = [[1, 3], [3, 1]]  # p = 1/2; q = 1/4 for one value: r = 1/2
    below, above = 0.6931471805599453, 0.6931471805599454
    assert not delta_disclosure(bucket(rows), below).safe
    assert delta_disclosure(bucket(rows), above).safe
    counts = np.asarray(rows, dtype=np.int64)
    assert not delta_disclosure_groups_pass(counts, counts.sum(axis=0), below).any()
    assert delta_disclosure_groups_pass(counts, counts.sum(axis=0), above).all()
    assert [ref.delta_group_ok(r, [4, 4], below) for r in rows] == [False, False]
    assert [ref.delta_group_ok(r, [4, 4], above) for r in rows] == [True, True]


def test_strict_inequality_for_the_identical_distribution() -> None:
    # every group has the table's distribution: ln 1 = 0 < delta for every delta > 0
    res = delta_disclosure(bucket([[1, 2], [2, 4]]), 1e-12)
    assert res.safe and res.value == 0.0


@pytest.mark.parametrize("delta", [0, -0.5, math.inf, math.nan, False, "1"])
def test_parameter_errors(delta: object) -> None:
    with pytest.raises(InputError, match=r"^delta-disclosure: delta must be a number > 0, got "):
        delta_disclosure(bucket([[1, 1]]), delta)  # type: ignore[arg-type]


# ------------------------------------------------------------------ anonymizer facts


def test_declared_facts_are_the_tested_ones() -> None:
    # merge: test_monotone_under_merging; local: test_local*; suppression: the counterexample
    m = CRITERIA["delta-disclosure"].monotonicity  # what the anonymizers read
    assert (m.merge, m.suppression, m.local) == (True, False, True)


@settings(max_examples=200, deadline=None)
@given(rows=count_rows(min_groups=2), delta=st.sampled_from(DELTAS), pick=st.data())
def test_monotone_under_merging(rows: Rows, delta: float, pick: st.DataObject) -> None:
    i, j = pick.draw(
        st.sampled_from([(a, c) for a in range(len(rows)) for c in range(a + 1, len(rows))])
    )
    before = delta_disclosure(bucket(rows), delta)
    after = delta_disclosure(bucket(_merge(rows, i, j)), delta)
    if before.safe:
        assert after.safe
    assert after.value <= before.value + 1e-12


@settings(max_examples=150, deadline=None)
@given(rows=count_rows(), delta=st.sampled_from(DELTAS))
def test_local_given_the_table(rows: Rows, delta: float) -> None:
    counts = np.asarray(rows, dtype=np.int64)
    totals = counts.sum(axis=0)
    alone = [
        bool(delta_disclosure_groups_pass(counts[g : g + 1], totals, delta)[0])
        for g in range(len(rows))
    ]
    assert delta_disclosure(bucket(rows), delta).safe == all(alone)


def test_not_suppression_monotone_counterexample() -> None:
    # table [[3, 3], [0, 6], [6, 0]] (p = 1/2, 1/2): [3, 3] passes delta = 0.2 (ratio 1);
    # merged with [0, 6] it has q = 1/4 for one value, |ln(1/2)| = 0.69 > 0.2
    rows = [[3, 3], [0, 6], [6, 0]]
    counts = np.asarray(rows, dtype=np.int64)
    totals = counts.sum(axis=0)
    assert delta_disclosure_groups_pass(counts[:1], totals, 0.2)[0]
    assert not delta_disclosure_groups_pass(counts[:1] + counts[1:2], totals, 0.2)[0]


def test_no_sensitive_value_in_reason_or_witness() -> None:
    for rows in ([[3, 0, 0], [1, 1, 1], [0, 2, 2]], [[2, 2, 1], [1, 1, 1]]):
        for delta in (0.1, 100.0):
            res = delta_disclosure(bucket(rows), delta)
            text = res.reason + json.dumps(res.witness)
            assert not any(label in text for label in LABELS)


def test_log_sign_against_taylor_bounds() -> None:
    # sign(ln r - limit) from the engines' decimal logarithms vs exp(limit) <=> r from
    # the oracle's Taylor bounds, on close calls (ln 2 vs its float, ln 3 vs its neighbours)
    cases = [
        (Fraction(2), Fraction("0.6931471805599453")),
        (Fraction(2), Fraction("0.6931471805599454")),
        (Fraction(3), Fraction(repr(math.log(3)))),
        (Fraction(10**12 + 1, 10**12), Fraction(1, 10**12)),
        (Fraction(7, 5), Fraction(1, 3)),
    ]
    for r, limit in cases:
        assert log_sign(r, limit) == -ref.exp_sign(limit, r)
    assert log_sign(Fraction(1), Fraction(1, 10)) == -1
    assert log_sign(Fraction(1), Fraction(0)) == 0
