"""Benign sensitive values in the worst-case engine ((c,k)-safety, negation-safety).

A breach is a disclosure of a value that is not benign: the adversary's success is his
largest posterior over target atoms with a non-benign value, his knowledge may still name
benign values (Martin et al. 2007, Definition 6 with the target atoms restricted). The
engine's per-bucket worst case (docs/worst-case-engine.md, "Benign values") is checked here
against the exhaustive possible-worlds oracle (tests/oracle.py, exact fractions), which
only restricts the targets and searches all knowledge; plus the properties the definition
implies: no benign value = the numbers without the option, every value benign = 0, and
declaring more values benign never raises the disclosure of the others.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.criteria.worst_case import (
    NO_TARGET,
    Knowledge,
    check_ck_safety,
    check_negation_safety,
    disclosure_curve,
    max_disclosure,
    posterior,
    saturation_point,
)
from airflow_privacy.core.model import Bucketization
from tests.core.criteria.worst_case_strategies import (
    LABELS,
    Rows,
    bucketizations,
    build,
    diverse_bucketizations,
    large_bucketizations,
    to_oracle,
)
from tests.oracle import (
    count_basic_implications,
    max_disclosure_basic,
    max_disclosure_negations,
    max_disclosure_simple,
)

TOL = 1e-9
KINDS: tuple[Knowledge, ...] = ("implications", "negations")


@st.composite
def with_benign(
    draw: st.DrawFn, rows_strategy: st.SearchStrategy[Rows]
) -> tuple[Rows, frozenset[int]]:
    rows = draw(rows_strategy)
    width = len(rows[0])
    benign = draw(st.sets(st.integers(0, width - 1), max_size=width))
    return rows, frozenset(benign)


def bk(rows: Rows, benign: frozenset[int]) -> Bucketization:
    return build(rows).with_benign(LABELS[v] for v in benign)


def oracle(rows: Rows, k: int, kind: Knowledge, benign: frozenset[int]) -> Fraction:
    if kind == "implications":
        return max_disclosure_simple(rows, k, benign).value
    return max_disclosure_negations(rows, k, benign).value


def k0_from_definition(rows: Rows, benign: frozenset[int], kind: Knowledge) -> int:
    """Saturation point written from its definition: the least k with disclosure 1."""
    k = 0
    while oracle(rows, k, kind, benign) < 1:
        k += 1
    return k


EXAMPLES: list[tuple[Rows, frozenset[int]]] = [
    (((3, 1, 1),), frozenset({0})),  # most frequent value benign
    (((2, 2, 1), (1, 1, 1)), frozenset({0})),  # tie between a benign and a sensitive value
    (((4, 1, 1, 1), (0, 2, 1, 0)), frozenset({0})),
    (((2, 0), (1, 1)), frozenset({0})),  # an all-benign group holds knowledge
    (((1, 0), (0, 1)), frozenset({0})),  # K0 from the other group
    (((3, 1, 1), (3, 1, 1)), frozenset({0, 1})),
    (((1, 1), (2, 0)), frozenset({0, 1})),  # every value benign
]


def _compare(rows: Rows, benign: frozenset[int], ks: range) -> None:
    b = bk(rows, benign)
    for kind in KINDS:
        for k in ks:
            got = max_disclosure(b, k, kind)
            want = oracle(rows, k, kind, benign)
            msg = f"{rows} benign={sorted(benign)} {kind} k={k}: {got} vs {want}"
            assert math.isclose(got.max_disclosure, float(want), abs_tol=TOL), msg
            assert got.exact == want or abs(got.exact - want) <= TOL, msg
            w = got.witness
            assert len(w.atoms) <= k, msg
            if want == 0:
                continue
            assert w.target.value not in b.benign, msg
            # the witness attains the reported value, exactly and per the oracle
            assert posterior(b, w.target, w.atoms, kind) == got.exact, msg
            assert to_oracle(b, w.target)[2] not in benign


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(with_benign(st.one_of(bucketizations(), diverse_bucketizations())))
def test_engine_matches_the_oracle(case: tuple[Rows, frozenset[int]]) -> None:
    rows, benign = case
    _compare(rows, benign, range(4))


@st.composite
def benign_on_top(draw: st.DrawFn) -> tuple[Rows, frozenset[int]]:
    """Diverse groups whose most frequent value is benign (value 0, sometimes value 1 too):
    the target group's constrained worst case with several atoms (docs: nested sets)."""
    n_values = draw(st.integers(4, 5))
    rows: list[tuple[int, ...]] = []
    budget = 8
    while budget >= 3 and (not rows or draw(st.booleans())):
        top = draw(st.integers(2, 3))
        rest = draw(st.lists(st.integers(0, 1), min_size=n_values - 1, max_size=n_values - 1))
        row = (top, *rest)
        if sum(row) > budget:
            row = (min(top, budget - 1), 1, *([0] * (n_values - 2)))
        rows.append(row)
        budget -= sum(row)
    benign = frozenset({0} | ({1} if draw(st.booleans()) else set()))
    return tuple(rows), benign


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(benign_on_top())
def test_engine_matches_the_oracle_below_a_benign_value(
    case: tuple[Rows, frozenset[int]],
) -> None:
    rows, benign = case
    _compare(rows, benign, range(4))


def test_every_small_group_below_a_benign_value() -> None:
    """Every group of four present values whose most frequent one is benign, up to 8 people,
    k = 0..3, against the oracle: the nested-sets worst case with up to four atoms."""
    import itertools

    seen = 0
    for top in (2, 3):
        for rest in itertools.product((1, 2), repeat=3):
            if top + sum(rest) > 8 or max(rest) > top:
                continue
            _compare(((top, *rest),), frozenset({0}), range(4))
            _compare(((top, *rest), (1, 1, 0, 0)), frozenset({0}), range(3))
            seen += 1
    for row in (
        (2, 1, 1, 1, 1),
        (3, 1, 1, 1, 1),
        (2, 2, 1, 1, 1),
        (3, 2, 1, 1, 1),
        (2, 2, 2, 1, 1),
    ):
        for benign in (frozenset({0}), frozenset({0, 1})):
            _compare((row,), benign, range(4))
            seen += 1
    assert seen >= 16


def test_engine_matches_the_oracle_on_examples() -> None:
    for rows, benign in EXAMPLES:
        _compare(rows, benign, range(4))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(with_benign(bucketizations(max_people=5, max_values=3, max_groups=4)))
@example((((2, 1, 1),), frozenset({0})))
@example((((2, 1, 0), (0, 1, 1)), frozenset({0})))
def test_simple_implications_suffice_with_benign_values(
    case: tuple[Rows, frozenset[int]],
) -> None:
    """Theorem 9 with the targets restricted: the maximum over every conjunction of k basic
    implications equals the one over k simple implications, which the engine computes."""
    rows, benign = case
    for k in (0, 1, 2):
        if k == 2 and count_basic_implications(rows) > 1500:
            continue
        basic = max_disclosure_basic(rows, k, benign).value
        assert basic == max_disclosure_simple(rows, k, benign).value, (rows, benign, k)
        assert math.isclose(
            max_disclosure(bk(rows, benign), k).max_disclosure, float(basic), abs_tol=TOL
        )


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(with_benign(bucketizations(max_people=6, max_values=4, max_groups=5)))
def test_saturation_point_with_benign_values(case: tuple[Rows, frozenset[int]]) -> None:
    rows, benign = case
    b = bk(rows, benign)
    for kind in KINDS:
        k0 = saturation_point(b, kind)
        if oracle(rows, 0, kind, benign) == 0 and not any(
            rows[g][v] for g in range(len(rows)) for v in range(len(rows[0])) if v not in benign
        ):
            assert k0 == NO_TARGET
            assert max_disclosure(b, 5, kind).exact == 0
            continue
        assert k0 == k0_from_definition(rows, benign, kind), (rows, benign, kind)
        for k in (k0, k0 + 1, k0 + 3):
            got = max_disclosure(b, k, kind)
            assert got.exact == 1
            assert posterior(b, got.witness.target, got.witness.atoms, kind) == 1
            assert len(got.witness.atoms) == k0
            assert got == dataclasses.replace(max_disclosure(b, k0, kind), k=k)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(large_bucketizations(), st.data())
def test_monotone_in_the_benign_set(rows: Rows, data: st.DataObject) -> None:
    """Declaring more values benign never raises the disclosure of the others (the maximum
    runs over fewer targets), and an unknown label changes nothing; the witness always
    attains the reported value exactly, also at sizes the oracle cannot reach."""
    width = len(rows[0])
    small = data.draw(st.sets(st.integers(0, width - 1)))
    large = small | data.draw(st.sets(st.integers(0, width - 1)))
    plain = build(rows)
    b1, b2 = bk(rows, frozenset(small)), bk(rows, frozenset(large))
    for kind in KINDS:
        for k in range(4):
            base = max_disclosure(plain, k, kind)
            assert max_disclosure(plain.with_benign(["not-a-value"]), k, kind) == base
            d1, d2 = max_disclosure(b1, k, kind), max_disclosure(b2, k, kind)
            assert d2.max_disclosure <= d1.max_disclosure + TOL <= base.max_disclosure + 2 * TOL
            for d, bb in ((d1, b1), (d2, b2)):
                w = d.witness
                per_group = max(sum(1 for a in w.atoms if a.group == g) for g in w.groups)
                if d.exact > 0 and per_group < 12:
                    assert posterior(bb, w.target, w.atoms, kind) == d.exact


@settings(max_examples=40, deadline=None)
@given(with_benign(large_bucketizations(max_groups=8)), st.integers(0, 6))
def test_curve_equals_individual_calls(case: tuple[Rows, frozenset[int]], k_max: int) -> None:
    rows, benign = case
    b = bk(rows, benign)
    for point in disclosure_curve(b, k_max):
        assert point.implications == max_disclosure(b, point.k, "implications")
        assert point.negations == max_disclosure(b, point.k, "negations")


def test_every_value_benign_is_always_safe() -> None:
    b = build(((3, 1), (1, 2))).with_benign(LABELS[:2])
    for k in (0, 1, 5, 10**6):
        for check in (check_ck_safety, check_negation_safety):
            r = check(b, 0.01, k)
            assert r.safe and r.value == 0.0
            assert r.parameters["benign"] == sorted(LABELS[:2])
            assert "benign" in r.reason
    assert [p.implications.max_disclosure for p in disclosure_curve(b, 3)] == [0.0] * 4


def test_a_frequent_benign_value_no_longer_fails_the_release() -> None:
    """The issue's case: 'none' in most records of every group breaks (c,k)-safety for any
    useful c, though it is no breach; the rare values are what must be protected."""
    rows = ((4, 1, 1, 1), (4, 1, 1, 1))
    plain = build(rows)
    benign = plain.with_benign([LABELS[0]])
    assert not check_ck_safety(plain, 0.5, 1).safe
    r = check_ck_safety(benign, 0.5, 1)
    assert r.safe, r.reason
    # the rare values keep their exact protection: the oracle's number, not a looser one
    assert r.details["exact"] == str(oracle(rows, 1, "implications", frozenset({0})))
    absent = benign.with_benign([LABELS[0], "unseen"])
    assert check_ck_safety(absent, 0.5, 1).details["benign_absent"] == ["unseen"]
