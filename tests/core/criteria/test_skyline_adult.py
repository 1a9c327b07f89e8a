"""The Adult case study (slides "Case Study: l-Diverse Dataset"): a recursive
(3, 6)-diverse Mondrian release of Adult, Occupation sensitive, and its skyline at c = 0.95
(docs/skyline.md records the table; benchmarks/bench_skyline_adult.py times it)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from airflow_privacy.core.anonymize import AnonymizationResult
from airflow_privacy.core.criteria.classic import recursive_cl_diversity
from airflow_privacy.core.criteria.skyline import (
    BreachResult,
    breach_cube,
    find_skyline,
    max_breach,
)
from airflow_privacy.core.model import Bucketization
from benchmarks.bench_skyline_adult import diverse_adult
from tests.core.criteria.skyline_oracle import group_probability

C = 0.95


@pytest.fixture(scope="module")
def adult() -> AnonymizationResult:
    return diverse_adult()


def by_groups(b: Bucketization, res: BreachResult) -> Fraction:
    """The witness's probability from per-group counting (the oracle's inclusion-exclusion):
    ``Pr(t = s, K) / Pr(K)`` with the groups' factors multiplied."""
    w = res.witness
    s = b.values.index(w.value)
    x = tuple(b.values.index(v) for v in w.excluded)
    row = tuple(int(c) for c in b.counts[w.target_group])
    known = tuple(b.values.index(v) for v in w.known_target)
    a = group_probability(row, s, x, known, 0, s)
    d = group_probability(row, -1, x, known, w.implied_target, s)
    if w.other_group is not None:
        other = tuple(int(c) for c in b.counts[w.other_group])
        known_o = tuple(b.values.index(v) for v in w.known_other)
        a *= group_probability(other, None, (), known_o, 0, s)
        d *= group_probability(other, None, (), known_o, w.implied_other, s)
    return a / (a + d)


def test_the_release_is_recursive_3_6_diverse(adult: AnonymizationResult) -> None:
    b = adult.bucketization
    assert b.n_records == 30_162 and b.values and "Prof-specialty" in b.values
    assert recursive_cl_diversity(b, 3, 6).safe
    # (c, l)-diversity is the skyline point (l - 2, 0, 0) at confidence c / (c + 1)
    assert max_breach(b, 4, 0, 0).breach < 3 / 4


def test_skyline_at_095_is_the_set_of_maximal_safe_points(adult: AnonymizationResult) -> None:
    b = adult.bucketization
    bound = 6
    found = find_skyline(b, C, bound, bound, bound)
    values = breach_cube(b, bound, bound, bound)
    cube = list(itertools.product(range(bound + 1), repeat=3))
    safe = {p for p in cube if values[p] < C}
    maximal = {
        p for p in safe
        if not any(q != p and all(a >= x for a, x in zip(q, p, strict=True)) for q in safe)
    }  # fmt: skip
    assert set(found.points) == maximal
    assert found.evaluations < len(cube) // 4
    for res in found.breaches:
        assert res.breach < C
        assert by_groups(b, res) == res.exact
        for step in ((1, 0, 0), (0, 1, 0), (0, 0, 1)):
            up = (res.l + step[0], res.k + step[1], res.m + step[2])
            if max(up) <= bound:
                beyond = max_breach(b, *up)
                assert beyond.breach >= C
                assert by_groups(b, beyond) == beyond.exact
