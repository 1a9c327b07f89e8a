"""Saturation of the worst-case disclosure, and the bounds on k (docs/worst-case-engine.md,
"Saturation").

``K0 = min_b d_b - 1`` (``d_b``: distinct values of group ``b``) is checked against the
exhaustive possible-worlds oracle (tests/oracle.py, written from the definitions of Martin et
al. 2007 only): the maximum disclosure is 1 from ``K0`` on, below 1 before, for implications
(all simple implications; all basic implications on tiny inputs) and for negated atoms. The
engine, which clamps ``k`` to ``K0``, must agree with the oracle at ``K0``, ``K0 + 1`` and
``K0 + 2``, and must answer a huge ``k`` at once.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.criteria.registry import MAX_K, MAX_K_CURVE
from airflow_privacy.core.criteria.worst_case import (
    Knowledge,
    check_ck_safety,
    check_negation_safety,
    disclosure_curve,
    max_disclosure,
    posterior,
    saturation_point,
)
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError, speaking
from tests.oracle import (
    OracleResult,
    count_basic_implications,
    max_disclosure_basic,
    max_disclosure_negations,
    max_disclosure_simple,
)

Rows = tuple[tuple[int, ...], ...]
LABELS = ("z", "y", "x", "w", "u")


@st.composite
def tiny(draw: st.DrawFn, max_people: int = 5, max_values: int = 4) -> Rows:
    n_values = draw(st.integers(1, max_values))
    budget = draw(st.integers(1, max_people))
    rows: list[tuple[int, ...]] = []
    while budget > 0:
        size = draw(st.integers(1, budget))
        people = draw(st.lists(st.integers(0, n_values - 1), min_size=size, max_size=size))
        rows.append(tuple(people.count(v) for v in range(n_values)))
        budget -= size
    return tuple(rows)


def k0_from_definition(rows: Rows) -> int:
    return min(sum(1 for c in r if c > 0) for r in rows) - 1


def build(rows: Rows) -> Bucketization:
    return Bucketization.from_group_counts([list(r) for r in rows], values=LABELS[: len(rows[0])])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny())
@example(((1, 1, 1, 1),))  # K0 = 3
@example(((1, 1, 1), (2, 1, 0)))  # K0 = 1, the second group decides
@example(((2, 1, 1), (1, 1, 1)))  # K0 = 2
@example(((3,),))  # K0 = 0
def test_saturation_point_against_the_oracle(rows: Rows) -> None:
    b = build(rows)
    k0 = saturation_point(b)
    assert k0 == k0_from_definition(rows)
    cases: tuple[tuple[Knowledge, Callable[[Rows, int], OracleResult]], ...] = (
        ("implications", max_disclosure_simple),
        ("negations", max_disclosure_negations),
    )
    for kind, oracle in cases:
        at_k0 = oracle(rows, k0).value
        assert at_k0 == 1, (rows, kind)  # certainty at K0 ...
        if k0 > 0:
            assert oracle(rows, k0 - 1).value < 1, (rows, kind)  # ... and not before
        for k in (k0, k0 + 1, k0 + 2):
            assert oracle(rows, k).value == at_k0, (rows, kind, k)  # more knowledge: no gain
            got = max_disclosure(b, k, kind)
            assert got.k == k and got.exact == at_k0 and got.max_disclosure == 1.0
            # the witness attains it (exact evaluation) with the fewest atoms, K0
            w = got.witness
            assert posterior(b, w.target, w.atoms, kind) == 1
            assert len(w.atoms) == k0
            # the result beyond K0 is the result at K0, reporting the k asked for
            assert got == dataclasses.replace(max_disclosure(b, k0, kind), k=k)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny(max_people=4, max_values=3))
@example(((1, 1, 1),))
@example(((1, 1, 0), (0, 1, 1)))
def test_saturation_holds_over_all_basic_implications(rows: Rows) -> None:
    """Not only simple implications: the maximum over every conjunction of k basic
    implications (Definition 4) is also 1 at K0, below 1 before, and stays 1 after."""
    k0 = k0_from_definition(rows)
    if count_basic_implications(rows) > 1500 or k0 + 1 > 2:
        return
    assert max_disclosure_basic(rows, k0).value == 1
    assert max_disclosure_basic(rows, k0 + 1).value == 1
    if k0 > 0:
        assert max_disclosure_basic(rows, k0 - 1).value < 1


def test_paper_section_4_remark_is_the_table_wide_bound() -> None:
    """Section 4: "maximum disclosure certainly reaches 1 at k = 13 because there are only
    fourteen possible sensitive values". K0 is that bound for the least diverse group."""
    rng = np.random.default_rng(11)
    counts = np.array(rng.integers(1, 4, size=(25, 14)), dtype=np.int64)
    b = Bucketization.from_group_counts(counts)
    assert saturation_point(b) == 13
    assert max_disclosure(b, 12).max_disclosure < 1.0
    assert max_disclosure(b, 13).max_disclosure == 1.0
    counts = counts.copy()
    counts[7, 3:] = 0  # one group with 3 values saturates at 2
    b = Bucketization.from_group_counts(counts)
    assert saturation_point(b) == 2
    res = max_disclosure(b, 2)
    assert res.exact == 1 and res.witness.target.group == 7


# ------------------------------------------------------------------ cost of a huge k
def release_300(distinct_per_group: int, groups: int) -> Bucketization:
    """A 300-row release: ``groups`` groups, each with ``distinct_per_group`` values."""
    rng = np.random.default_rng(5)
    counts = np.zeros((groups, 40), dtype=np.int64)
    size = 300 // groups
    for g in range(groups):
        vals = rng.choice(40, size=distinct_per_group, replace=False)
        counts[g, vals] = 1
        extra = rng.choice(vals, size=size - distinct_per_group)
        np.add.at(counts[g], extra, 1)
    assert int(counts.sum()) == 300
    return Bucketization.from_group_counts(counts)


@pytest.mark.parametrize(("distinct", "groups"), [(14, 10), (30, 1), (6, 50)])
def test_a_million_pieces_of_knowledge_on_300_rows_is_instant(distinct: int, groups: int) -> None:
    b = release_300(distinct, groups)
    assert saturation_point(b) == distinct - 1
    start = time.process_time()
    ck = check_ck_safety(b, 0.9, 10**6)
    neg = check_negation_safety(b, 0.9, 10**6)
    curve = disclosure_curve(b, 1000)
    elapsed = time.process_time() - start  # CPU time: load does not count
    assert elapsed < 2.0, elapsed
    assert not ck.safe and ck.value == 1.0 and ck.parameters["k"] == 10**6
    assert ck.details["saturated"] is True and ck.details["saturation_k"] == distinct - 1
    assert not neg.safe and neg.value == 1.0 and neg.parameters["k"] == 10**6
    assert len(ck.witness["atoms"]) == distinct - 1  # type: ignore[index]
    assert [p.k for p in curve] == list(range(1001))
    assert all(p.implications.max_disclosure == 1.0 for p in curve[distinct - 1 :])


def test_curve_extends_flat_and_equals_single_calls() -> None:
    b = release_300(5, 20)
    k0 = saturation_point(b)
    curve = disclosure_curve(b, k0 + 5)
    for p in curve:
        assert p.implications == max_disclosure(b, p.k, "implications")
        assert p.negations == max_disclosure(b, p.k, "negations")
    assert [p.implications.max_disclosure < 1.0 for p in curve] == [k < k0 for k in range(k0 + 6)]
    start = time.process_time()
    long = disclosure_curve(b, MAX_K_CURVE)
    assert time.process_time() - start < 10.0
    assert len(long) == MAX_K_CURVE + 1 and long[-1].k == MAX_K_CURVE
    assert long[-1].implications.witness == long[k0].implications.witness


def test_absurd_k_is_bad_input_before_any_work() -> None:
    b = release_300(14, 10)
    assert max_disclosure(b, MAX_K).exact == 1
    calls: tuple[Callable[[], object], ...] = (
        lambda: max_disclosure(b, MAX_K + 1),
        lambda: max_disclosure(b, 10**30, "negations"),
    )
    for call in calls:
        start = time.process_time()
        with pytest.raises(InputError) as info:
            call()
        assert time.process_time() - start < 1.0
        assert str(info.value).startswith("--k must be at most 1,000,000,000")
    with pytest.raises(InputError) as info:
        disclosure_curve(b, 1_000_000)  # `report --k-max 1000000` once asked for 29 TiB
    assert str(info.value).startswith("--k-max must be at most 10,000, got 1,000,000")
    with speaking("airflow"):
        assert str(info.value).startswith("k_max must be at most 10,000")
    with pytest.raises(InputError, match=r"^ck-safety: k must be at most"):
        check_ck_safety(b, 0.5, MAX_K + 1)
    with pytest.raises(InputError, match=r"^negation-safety: c must be in \(0, 1\], got 2"):
        check_negation_safety(b, 2, 1)
    with pytest.raises(InputError, match=r"^--k-max must be >= 0, got -1"):
        disclosure_curve(b, -1)


def test_saturated_exact_value_is_one() -> None:
    b = Bucketization.from_group_counts([[2, 1, 1], [3, 3, 0]], values=["a", "b", "c"])
    assert saturation_point(b) == 1
    res = max_disclosure(b, 1)
    assert res.exact == Fraction(1) and res.witness.target.group == 1
    assert [a.value for a in res.witness.atoms] == ["b"]
    assert max_disclosure(b, 0).exact == Fraction(1, 2)  # 3/6: below 1 before K0


# ------------------------------------------------------------------ verdicts at c
def test_ck_and_negation_safety_at_c_exactly() -> None:
    """Definition 13: safe iff disclosure < c. The disclosure is compared as an exact
    fraction (from the oracle here) with the decimal c was written as."""
    rows = ((7, 3),)
    b = build(rows)
    assert max_disclosure_simple(rows, 0).value == Fraction(7, 10)
    assert max_disclosure_negations(rows, 0).value == Fraction(7, 10)
    for check in (check_ck_safety, check_negation_safety):
        res = check(b, 0.7, 0)
        assert res.value == 0.7 and not res.safe, res.criterion  # 7/10 is not below 0.7
        assert res.details["tolerance"] == 1e-9 and res.details["exact"] == "7/10"
        assert check(b, 0.7 + 2e-9, 0).safe
        assert not check(b, 0.7 - 1e-15, 0).safe
    # c one ulp above 7/10: exactly below c. Negations are exactly maximal: safe. The
    # implication search is maximal up to float noise, so inside the band it is unsafe.
    up = math.nextafter(0.7, 1.0)
    assert check_negation_safety(b, up, 0).safe
    assert check_negation_safety(b, up, 0).details["decision"] == "exact"
    assert not check_ck_safety(b, up, 0).safe
    assert check_ck_safety(b, up, 0).details["decision"] == "exact value, float band"


def test_ck_safety_when_the_float_of_the_disclosure_is_one_ulp_below_it() -> None:
    """Figure 3 under one implication: the disclosure is 2/3 (docs/paper-errata.md); its
    float 0.6666666666666666 is below 2/3, and so is the decimal c = 0.6666666666666666."""
    rows = ((2, 2, 1, 0, 0, 0), (2, 0, 0, 1, 1, 1))
    b = build_named(rows)
    want = max_disclosure_simple(rows, 1).value
    assert want == Fraction(2, 3) and Fraction(float(want)) < want
    res = check_ck_safety(b, float(want), 1)
    assert res.value == float(want) and not res.safe
    assert not check_ck_safety(b, 0.6666666666666667, 1).safe  # exactly above 2/3, in band
    assert check_ck_safety(b, 0.666667, 1).safe


def build_named(rows: Rows) -> Bucketization:
    return Bucketization.from_group_counts(
        [list(r) for r in rows], values=[f"s{j}" for j in range(len(rows[0]))]
    )
