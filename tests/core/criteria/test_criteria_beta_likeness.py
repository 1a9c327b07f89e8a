"""Basic and enhanced beta-likeness (Cao & Karras 2012) against exact references.

Values and verdicts against Fractions (and Taylor bounds of ``exp`` for the ``-ln p`` cap,
tests/distribution_oracle.py) on random bucketizations, ties at beta as written, the cap
deciding alone, parameter errors, per-group verdicts equal to the evaluation, the anonymizer
facts (monotone under merging, local given the table's distribution, not monotone with a
suppression budget: counterexample), and no sensitive value in reasons or witnesses.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.criteria.beta_likeness import (
    basic_beta_groups_pass,
    basic_beta_likeness,
    enhanced_beta_groups_pass,
    enhanced_beta_likeness,
)
from airflow_privacy.core.criteria.registry import CRITERIA
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError
from tests import distribution_oracle as ref

Rows = list[list[int]]
LABELS = ("ZZ-SECRET-A", "ZZ-SECRET-B", "ZZ-SECRET-C", "ZZ-SECRET-D", "ZZ-SECRET-E")
BETAS = [0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0]


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


@settings(max_examples=250, deadline=None)
@given(rows=count_rows(), beta=st.sampled_from(BETAS))
def test_basic_matches_the_definition(rows: Rows, beta: float) -> None:
    tot = ref.table(rows)
    res = basic_beta_likeness(bucket(rows), beta)
    assert res.value == pytest.approx(float(ref.basic_beta(rows)), rel=1e-12, abs=1e-12)
    expected = [ref.basic_group_ok(r, tot, beta) for r in rows]
    assert res.safe == all(expected)
    counts = np.asarray(rows, dtype=np.int64)
    assert basic_beta_groups_pass(counts, counts.sum(axis=0), beta).tolist() == expected


@settings(max_examples=250, deadline=None)
@given(rows=count_rows(), beta=st.sampled_from(BETAS))
def test_enhanced_matches_the_definition(rows: Rows, beta: float) -> None:
    tot = ref.table(rows)
    res = enhanced_beta_likeness(bucket(rows), beta)
    if ref.enhanced_feasible(rows):
        assert res.value == pytest.approx(float(ref.basic_beta(rows)), rel=1e-12, abs=1e-12)
    else:
        assert res.value == math.inf and res.details["log_cap_violations"] > 0
    expected = [ref.enhanced_group_ok(r, tot, beta) for r in rows]
    assert res.safe == all(expected)
    counts = np.asarray(rows, dtype=np.int64)
    assert enhanced_beta_groups_pass(counts, counts.sum(axis=0), beta).tolist() == expected
    # enhanced is the stricter criterion
    if res.safe:
        assert basic_beta_likeness(bucket(rows), beta).safe


def test_tie_at_beta_as_written() -> None:
    # table 10 x 10 records: p = 1/2; group [3, 1]: q = 3/4, D = 1/2 exactly
    rows = [[3, 1], [1, 3], [6, 6]]
    assert basic_beta_likeness(bucket(rows), 0.5).safe
    assert not basic_beta_likeness(bucket(rows), 0.4999999999).safe
    # -ln(1/2) = 0.693 > 1/2: the cap does not bind, enhanced agrees
    assert enhanced_beta_likeness(bucket(rows), 0.5).safe
    # the same tie with counts whose products pass 2**62 (the Python-integer path)
    m = 10**9
    rows = [[3 * m, m], [m, 3 * m]]
    assert basic_beta_likeness(bucket(rows), 0.5).safe
    assert not basic_beta_likeness(bucket(rows), 0.4999999999).safe
    # D = 3/10 (q = 13/20 vs p = 1/2) against beta = 0.3 (Fraction(0.3) < 3/10)
    rows = [[13, 7], [7, 13]]
    assert basic_beta_likeness(bucket(rows), 0.3).safe
    assert basic_beta_likeness(bucket(rows), 0.3).value == pytest.approx(0.3)


def test_log_cap_decides_alone() -> None:
    # p = 1/2, a homogeneous group has q = 1, D = 1 > -ln(1/2) = 0.693: no beta helps
    rows = [[2, 0], [0, 2]]
    assert basic_beta_likeness(bucket(rows), 1).safe
    for beta in (1, 5, 1000):
        res = enhanced_beta_likeness(bucket(rows), beta)
        assert not res.safe and res.value == math.inf
        assert "min(" in res.reason


def test_log_cap_close_call_settled_exactly() -> None:
    # value 0 has p = 1/4 (ln 4 = 1.3862943611198906...); a group of n = 10^10 records with c
    # of them has D = 4c/n - 1, which moves by 4e-10 per record: the two c around
    # n (1 + ln 4) / 4 put D within the tolerance band of ln 4, on either side of it, where
    # only an exact comparison can tell
    n = 10**10
    c_hi = math.floor(n * (1 + math.log(4)) / 4) + 1
    for c in (c_hi - 2, c_hi - 1, c_hi, c_hi + 1):
        rows = [[c, n - c], [n - c, 3 * n - (n - c)]]
        tot = ref.table(rows)
        assert tot == [n, 3 * n]
        d = 4 * c / n - 1
        assert abs(d - math.log(4)) < 2e-9
        ok = ref.enhanced_group_ok(rows[0], tot, 5.0)
        counts = np.asarray(rows, dtype=np.int64)
        assert bool(enhanced_beta_groups_pass(counts, counts.sum(axis=0), 5.0)[0]) == ok
        assert enhanced_beta_likeness(bucket(rows), 5.0).safe == (
            ok and ref.enhanced_group_ok(rows[1], tot, 5.0)
        )
    # both sides occur among the four
    oks = [ref.enhanced_group_ok([c, n - c], [n, 3 * n], 5.0) for c in range(c_hi - 2, c_hi + 2)]
    assert True in oks and False in oks


@pytest.mark.parametrize("fn", [basic_beta_likeness, enhanced_beta_likeness])
@pytest.mark.parametrize("beta", [0, -1, math.inf, math.nan, True, "1"])
def test_parameter_errors(fn: Callable[[Bucketization, Any], Any], beta: object) -> None:
    name = fn.__name__.replace("_", "-")
    with pytest.raises(InputError, match=rf"^{name}: beta must be a number > 0, got "):
        fn(bucket([[1, 1]]), beta)


# ------------------------------------------------------------------ anonymizer facts


def test_declared_facts_are_the_tested_ones() -> None:
    # merge: test_monotone_under_merging; local: test_local_given_the_table; suppression:
    # test_not_suppression_monotone_counterexample
    for name in ("basic-beta-likeness", "enhanced-beta-likeness"):
        m = CRITERIA[name].monotonicity  # what the anonymizers read
        assert (m.merge, m.suppression, m.local) == (True, False, True)


FNS = {"basic": basic_beta_likeness, "enhanced": enhanced_beta_likeness}


@pytest.mark.parametrize("form", list(FNS))
@settings(max_examples=200, deadline=None)
@given(rows=count_rows(min_groups=2), beta=st.sampled_from(BETAS), pick=st.data())
def test_monotone_under_merging(form: str, rows: Rows, beta: float, pick: st.DataObject) -> None:
    fn = FNS[form]
    i, j = pick.draw(
        st.sampled_from([(a, c) for a in range(len(rows)) for c in range(a + 1, len(rows))])
    )
    if fn(bucket(rows), beta).safe:
        assert fn(bucket(_merge(rows, i, j)), beta).safe
    # the level itself never rises under merging (basic: convexity of max D)
    before = basic_beta_likeness(bucket(rows), beta).value
    assert basic_beta_likeness(bucket(_merge(rows, i, j)), beta).value <= before + 1e-12


@pytest.mark.parametrize("form", list(FNS))
@settings(max_examples=150, deadline=None)
@given(rows=count_rows(), beta=st.sampled_from(BETAS))
def test_local_given_the_table(form: str, rows: Rows, beta: float) -> None:
    fn = FNS[form]
    group_test = basic_beta_groups_pass if form == "basic" else enhanced_beta_groups_pass
    counts = np.asarray(rows, dtype=np.int64)
    totals = counts.sum(axis=0)
    alone = [bool(group_test(counts[g : g + 1], totals, beta)[0]) for g in range(len(rows))]
    assert fn(bucket(rows), beta).safe == all(alone)


@pytest.mark.parametrize("form", list(FNS))
def test_not_suppression_monotone_counterexample(form: str) -> None:
    # table [[3, 3], [0, 6], [6, 0]] (p = 1/2, 1/2): the group [3, 3] has the table's
    # distribution and passes beta = 0.4; merged with [0, 6] it has q = 3/4, D = 1/2 > 0.4.
    # A passing group does not absorb every group, so the records a coarser node must
    # suppress need not be among a finer node's (monotone.py, "suppression")
    fn = FNS[form]
    rows = [[3, 3], [0, 6], [6, 0]]
    group_test = basic_beta_groups_pass if form == "basic" else enhanced_beta_groups_pass
    counts = np.asarray(rows, dtype=np.int64)
    totals = counts.sum(axis=0)
    assert group_test(counts[:1], totals, 0.4)[0]
    assert not group_test(counts[:1] + counts[1:2], totals, 0.4)[0]
    assert not fn(bucket(_merge(rows, 0, 1)), 0.4).safe


def test_no_sensitive_value_in_reason_or_witness() -> None:
    rows = [[3, 0, 0], [1, 1, 1], [0, 2, 2]]
    for fn in (basic_beta_likeness, enhanced_beta_likeness):
        for beta in (0.2, 100.0):
            res = fn(bucket(rows), beta)
            text = res.reason + json.dumps(res.witness)
            assert not any(label in text for label in LABELS)
