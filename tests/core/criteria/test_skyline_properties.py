"""Property tests: the privacy-skyline engine against the exhaustive enumerators.

The enumerators (tests/core/criteria/test_skyline_oracle.py) are written from the definitions of
Chen, LeFevre, Ramakrishnan 2007 only (random worlds, ``L_{t,s}(l, k, m)``), with exact
arithmetic. On small random releases, including groups too small to hold the congregated
placements, the engine's maximum breach must equal theirs exactly and its witness must
attain it; the slides' special cases (k-anonymity, (c,l)-diversity) and the relations to the
(c,k)-safety engine hold on larger releases.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import airflow_privacy.core.criteria.skyline_scan as scan_module
from airflow_privacy.core.criteria.classic import k_anonymity, recursive_cl_diversity
from airflow_privacy.core.criteria.skyline import (
    _evaluate,
    _Tables,
    check_skyline,
    find_skyline,
    max_breach,
    max_breaches,
)
from airflow_privacy.core.criteria.worst_case import max_disclosure
from airflow_privacy.core.model import Bucketization
from tests.core.criteria.skyline_oracle import Rows, breach_by_groups, breach_table, posterior
from tests.core.criteria.skyline_strategies import (
    assert_witness,
    medium_releases,
    release,
    small_releases,
)

TOL = 1e-9


# --------------------------------------------------------------------------- vs enumerator
BOUNDS = (2, 2, 2)


@settings(max_examples=150, deadline=None)
@given(small_releases())
def test_max_breach_equals_the_enumerator(rows: Rows) -> None:
    """Every point of the (2, 2, 2) box, exact equality with world counting."""
    _, table = breach_table(rows, BOUNDS)
    points = sorted(table)
    results = max_breaches(release(rows), points)
    for point, res in zip(points, results, strict=True):
        assert res.exact == table[point][0], (point, table[point], res.witness)
        assert_witness(rows, res)


@settings(max_examples=60, deadline=None)
@given(small_releases(max_people=8, max_values=3, max_group=3))
def test_small_groups_many_pieces(rows: Rows) -> None:
    """Groups of at most 3 people and up to 4 known / implied people: the congregated
    placements rarely fit, the engine must still find the true maximum."""
    _, table = breach_table(rows, (1, 3, 4))
    for point in [(0, 3, 0), (0, 0, 4), (1, 2, 3), (0, 3, 4), (1, 1, 4), (0, 2, 2)]:
        res = max_breach(release(rows), *point)
        assert res.exact == table[point][0], (point, table[point], res.witness)
        assert_witness(rows, res)


@settings(max_examples=40, deadline=None)
@given(medium_releases(max_groups=5, max_values=4))
def test_against_the_per_group_enumerator(rows: Rows) -> None:
    """More and bigger groups than world counting reaches: every allocation of the known and
    implied people to groups, per-group counting (tests/core/criteria/test_skyline_oracle.py)."""
    for point in [(1, 1, 1), (0, 2, 2), (2, 1, 2), (1, 2, 3)]:
        value, _ = breach_by_groups(rows, point)
        res = max_breach(release(rows), *point)
        assert res.exact == value, (point, res.witness)


# The placement the slides' congregation case 2 calls "t and u's in B, v's
# in G", found by a search over small releases: one exclusion leaves few values competing
# with s in group 0, and group 1 is denser in s than what is left of group 0. World
# counting: 29,400 worlds.
MIXED = ((0, 3, 0, 3, 1, 0), (0, 4, 1, 1, 0, 1))


def test_implications_in_another_group_win() -> None:
    b = release(MIXED)
    res = max_breach(b, 1, 0, 1)
    w = res.witness
    # t in group 0 has 'y', 'w' excluded; the implication is about a person of group 1
    assert (w.target_group, w.value, w.excluded) == (0, "y", ("w",))
    assert (w.implied_target, w.other_group, w.implied_other) == (0, 1, 1)
    # 1 / (1 + R / n_s * H(7, 4, 1)) = 1 / (1 + 1/3 * 3/7)
    assert res.exact == Fraction(7, 8)
    assert_witness(MIXED, res)
    _, table = breach_table(MIXED, (1, 0, 1))
    assert table[(1, 0, 1)][0] == Fraction(7, 8)
    # the implication inside group 0 gives only 1 / (1 + 1/3 * 3/6) = 6/7
    inside = posterior(MIXED, (0, 0), 1, excluded=[3], implied=[(0, 1)])
    assert inside == Fraction(6, 7)


# "t and the known people in B, the implication in G" strictly beats the other corners here
# (found by a random search over Dirichlet releases; 63 people, checked by per-group
# counting): 25/27 against 126/137 with everything in one group.
MIXED_WITH_KNOWN = ((11, 10, 3, 14), (5, 6, 3, 11))


def test_known_people_in_the_target_group_implication_elsewhere() -> None:
    res = max_breach(release(MIXED_WITH_KNOWN), 2, 1, 1)
    w = res.witness
    assert (w.target_group, len(w.excluded), len(w.known_target)) == (0, 2, 1)
    assert (w.other_group, w.implied_other, w.implied_target) == (1, 1, 0)
    assert res.exact == Fraction(25, 27)
    assert breach_by_groups(MIXED_WITH_KNOWN, (2, 1, 1))[0] == Fraction(25, 27)
    every = _evaluate(_Tables(release(MIXED_WITH_KNOWN), all_splits=True), 2, 1, 1)
    assert every.exact == Fraction(25, 27)


# "t alone in B, the known person and the implications in G" strictly beats the other
# corners (found by a search over structured releases; per-group counting): 3/4 against
# 440/587. The slides' third case ("t and the v's in one group, the u's in another") is not
# this placement (docs/paper-errata.md).
ALONE = ((8, 8, 2, 2, 2, 2, 0, 0, 0), (4, 0, 1, 1, 1, 1, 1, 1, 1))


def test_target_alone_known_and_implied_people_elsewhere() -> None:
    res = max_breach(release(ALONE), 1, 1, 2)
    w = res.witness
    assert (w.target_group, w.excluded, w.known_target, w.implied_target) == (0, ("y",), (), 0)
    assert (w.other_group, len(w.known_other), w.implied_other) == (1, 1, 2)
    assert res.exact == Fraction(3, 4)
    assert breach_by_groups(ALONE, (1, 1, 2))[0] == Fraction(3, 4)


def test_target_group_never_serves_as_the_other_group() -> None:
    """A single group: implications can only be about the target's own group (G != B).
    {z: 2, y: 2}: 1 / (1 + 2 * H(3, 2, 1) / 2) = 3/4 (with G = B allowed: 2/3 and wrong)."""
    res = max_breach(release([[2, 2]]), 0, 0, 1)
    assert res.exact == Fraction(3, 4)
    assert res.witness.other_group is None
    # two groups where the best target group is also the densest in s: the second-best
    # other group must be used
    rows = ((3, 1, 0), (1, 2, 3))
    _, table = breach_table(rows, (0, 0, 1))
    assert max_breach(release(rows), 0, 0, 1).exact == table[(0, 0, 1)][0]


# ----------------------------------------------------------------------- larger releases
@settings(max_examples=100, deadline=None)
@given(medium_releases(max_groups=30, max_values=6), st.integers(0, 3), st.integers(0, 4),
       st.integers(0, 4))  # fmt: skip
def test_corners_equal_every_split(rows: Rows, l: int, k: int, m: int) -> None:  # noqa: E741
    """The congregation argument (docs/skyline.md): comparing the three corner placements
    gives the same maximum as comparing every split of the budget between the target's
    group and one other group."""
    b = release(rows)
    corners = _evaluate(_Tables(b), l, k, m)
    every = _evaluate(_Tables(b, all_splits=True), l, k, m)
    assert corners.exact == every.exact


@settings(max_examples=40, deadline=None)
@given(medium_releases(max_groups=30, max_values=6))
def test_monotone_in_each_dimension(rows: Rows) -> None:
    b = release(rows)
    box = list(itertools.product(range(3), range(4), range(4)))
    values = dict(zip(box, (r.exact for r in max_breaches(b, box)), strict=True))
    for p, v in values.items():
        for nxt in ((p[0] + 1, p[1], p[2]), (p[0], p[1] + 1, p[2]), (p[0], p[1], p[2] + 1)):
            if nxt in values:
                assert values[nxt] >= v, (nxt, p)


@settings(max_examples=30, deadline=None)
@given(medium_releases(max_groups=30, max_values=6), st.integers(0, 4))
def test_relations_to_the_worst_case_engine(rows: Rows, k: int) -> None:
    """Exclusions about the target are the negated atoms of the l-diversity adversary, and
    exclusions plus implications ``v = s -> t = s`` are simple implications with one
    consequent (Martin et al.), so: breach(l, 0, 0) = negation disclosure(l), breach(0, 0, 0)
    = disclosure(0), breach(l, 0, m) <= implication disclosure(l + m)."""
    b = release(rows)
    assert max_breach(b, k, 0, 0).breach == pytest.approx(
        max_disclosure(b, k, "negations").max_disclosure, abs=TOL
    )
    assert max_breach(b, 0, 0, 0).breach == pytest.approx(max_disclosure(b, 0).max_disclosure)
    for l in range(k + 1):  # noqa: E741
        assert max_breach(b, l, 0, k - l).breach <= max_disclosure(b, k).max_disclosure + TOL


def test_chunking_does_not_change_results(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 5, size=(300, 5))
    counts[counts.sum(axis=1) == 0, 0] = 1
    b = Bucketization.from_group_counts(counts)
    points = [(0, 0, 0), (1, 2, 1), (2, 1, 3), (0, 3, 3)]
    whole = max_breaches(b, points)
    monkeypatch.setattr(scan_module, "_CHUNK_ELEMENTS", 7)  # one group per chunk
    chunked = max_breaches(b, points)
    assert whole == chunked


# --------------------------------------------------------------------- special cases
@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 8), min_size=1, max_size=12), st.integers(2, 9))
def test_k_anonymity_is_a_special_case(sizes: list[int], k: int) -> None:
    """Slides, "Related Work": give each person a unique sensitive value; then the release is
    safe at knowledge (0, k - 2, 0) and confidence 1 iff it is k-anonymous."""
    total = sum(sizes)
    counts = np.zeros((len(sizes), total), dtype=np.int64)
    person = 0
    for g, size in enumerate(sizes):
        counts[g, person : person + size] = 1
        person += size
    b = Bucketization.from_group_counts(counts)
    skyline_safe = check_skyline(b, [(0, k - 2, 0, 1.0)]).safe
    assert skyline_safe == k_anonymity(b, k).safe


@settings(max_examples=60, deadline=None)
@given(medium_releases(max_groups=15, max_values=7), st.sampled_from([1, 3, 7]),
       st.integers(2, 6))  # fmt: skip
def test_recursive_cl_diversity_is_a_special_case(rows: Rows, c: int, l: int) -> None:  # noqa: E741
    """Slides, "Related Work": (c,l)-diversity is the skyline point (l - 2, 0, 0) at
    confidence c / (c + 1). (c = 1, 3, 7 keep c / (c + 1) exact in binary.)"""
    b = release(rows)
    skyline_safe = check_skyline(b, [(l - 2, 0, 0, c / (c + 1))]).safe
    assert skyline_safe == recursive_cl_diversity(b, c, l).safe


# ------------------------------------------------------------------------- explorer
def brute_force_skyline(
    b: Bucketization, c: float, bounds: tuple[int, int, int]
) -> set[tuple[int, int, int]]:
    box = [(a, b_, c_) for a in range(bounds[0] + 1) for b_ in range(bounds[1] + 1)
           for c_ in range(bounds[2] + 1)]  # fmt: skip
    safe = {p for p, r in zip(box, max_breaches(b, box), strict=True) if r.breach < c}
    return {
        p
        for p in safe
        if not any(q != p and all(a >= b_ for a, b_ in zip(q, p, strict=True)) for q in safe)
    }


@settings(max_examples=40, deadline=None)
@given(medium_releases(max_groups=20, max_values=6),
       st.sampled_from([0.3, 0.5, 0.6, 0.75, 0.9, 0.95, 1.0]))  # fmt: skip
def test_explorer_finds_exactly_the_maximal_safe_points(rows: Rows, c: float) -> None:
    b = release(rows)
    bounds = (3, 4, 4)
    found = find_skyline(b, c, *bounds)
    assert set(found.points) == brute_force_skyline(b, c, bounds)
    box_size = (bounds[0] + 1) * (bounds[1] + 1) * (bounds[2] + 1)
    assert found.evaluations <= box_size
    for p, res in zip(found.points, found.breaches, strict=True):
        assert (res.l, res.k, res.m) == p and res.breach < c


@settings(max_examples=20, deadline=None)
@given(small_releases(max_people=6, max_values=3), st.sampled_from([0.5, 0.7, 0.9, 1.0]))
def test_explorer_against_the_enumerator(rows: Rows, c: float) -> None:
    bounds = (1, 2, 2)
    _, table = breach_table(rows, bounds)
    safe = {p for p, (v, _) in table.items() if v < Fraction(c)}
    maximal = {
        p for p in safe
        if not any(q != p and all(a >= b for a, b in zip(q, p, strict=True)) for q in safe)
    }  # fmt: skip
    assert set(find_skyline(release(rows), c, *bounds).points) == maximal


def test_explorer_visits_a_staircase_not_the_cube() -> None:
    rng = np.random.default_rng(3)
    counts = rng.multinomial(60, rng.dirichlet(np.full(10, 2.0)), size=200)
    b = Bucketization.from_group_counts(counts)
    found = find_skyline(b, 0.9, 10, 10, 10)
    assert found.points
    # O(L (K + M)) evaluations, far from the 1,331 points of the cube
    assert found.evaluations <= 11 * (11 + 11 + 1)
    for l, row in enumerate(found.staircase):  # noqa: E741
        assert all(row[i] >= row[i + 1] for i in range(len(row) - 1))
        if l:
            assert all(a <= b for a, b in zip(row, found.staircase[l - 1], strict=True))


def test_nothing_safe_and_everything_safe() -> None:
    b = release([[1, 0], [0, 1]])  # singletons: certain disclosure without knowledge
    none = find_skyline(b, 0.99, 2, 2, 2)
    assert none.points == () and none.unsafe_example is not None
    assert none.unsafe_example.breach == 1.0
    b = release([[5, 5, 5], [5, 5, 5]])
    everything = find_skyline(b, 1.0, 0, 1, 1)  # breach < 1 for every point of the box
    assert everything.points == ((0, 1, 1),)


# --------------------------------------------------------------------------- verdicts at c
@pytest.mark.parametrize("rows", [((3, 1), (1, 1)), ((2, 1, 0), (1, 1, 1)), ((1, 1, 1, 2),)])
def test_breach_equal_to_c_is_unsafe_exactly(rows: Rows) -> None:
    """Safe iff breach < c (slide "Basic 3D Privacy Criterion"), with the breach an exact
    fraction (here from the enumerator) and c the decimal it was written as: a breach equal
    to c is unsafe even when its float is below c; one ulp above the breach is safe."""
    b = release(rows)
    _, at_most = breach_table(rows, (1, 1, 1))
    for point, (want, _) in at_most.items():
        if want == 1:
            continue
        decimal = float(want)
        typed_equal = Fraction(repr(decimal)) == want  # c can be written as exactly the breach
        res = check_skyline(b, [(*point, decimal)])
        assert res.details["decision"] == "exact" and res.details["tolerance"] == 1e-9
        assert res.safe == (want < Fraction(repr(decimal))), (rows, point, want)
        if typed_equal:
            assert not res.safe
        up = math.nextafter(decimal, 2.0)
        assert check_skyline(b, [(*point, up)]).safe == (want < Fraction(repr(up)))
        assert check_skyline(b, [(*point, up)]).safe  # exact: no band for the breach
        # the explorer agrees at the boundary
        found = find_skyline(b, decimal, *point)
        if want >= Fraction(repr(decimal)):
            assert point not in found.points
