"""The skyline oracle (:mod:`tests.core.criteria.skyline_oracle`) checked on the slides'
example, by enumeration and against the definitions."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.criteria.skyline_oracle import (
    Rows,
    breach_by_groups,
    breach_table,
    breach_table_all,
    group_probability,
    group_probability_by_worlds,
    posterior,
)


def _tom() -> list[list[int]]:
    """The slides' example: group 1 {AIDS, Flu, Flu, AIDS}, group 2 {Flu, Cancer, Cancer,
    AIDS}; values AIDS = 0, Flu = 1, Cancer = 2. Tom is in group 2, Ed too."""
    return [[2, 2, 0], [1, 1, 2]]


def test_slides_example_tom() -> None:
    counts = _tom()
    # without knowledge Pr(Tom has AIDS) = 1/4
    assert posterior(counts, (1, 0), 0) == Fraction(1, 4)
    # "Tom does not have Cancer and Ed has Flu" -> Tom has AIDS for sure
    assert posterior(counts, (1, 0), 0, excluded=[2], known={(1, 1): 1}) == 1
    # "Ann has the same sensitive value as Tom" read as an implication about AIDS
    assert posterior(counts, (1, 0), 0, implied=[(0, 0)]) == Fraction(1, 4) / (
        Fraction(1, 4) + Fraction(3, 4) * Fraction(1, 2)
    )
    _, table = breach_table(counts, (1, 1, 1))
    assert table[(0, 0, 0)][0] == Fraction(1, 2)  # Cancer in group 2, AIDS / Flu in group 1
    assert table[(1, 1, 0)][0] == 1


def test_posterior_rejects_impossible_knowledge() -> None:
    # group {a, b}: "u has c" is impossible
    assert posterior([[1, 1, 0]], (0, 0), 0, known={(0, 1): 2}) is None
    with pytest.raises(AssertionError):
        posterior([[1, 1]], (0, 0), 0, known={(0, 0): 1})  # the target as a known person


@st.composite
def tiny_releases(draw: st.DrawFn, max_people: int = 5, max_values: int = 3) -> Rows:
    n_values = draw(st.integers(1, max_values))
    budget = draw(st.integers(1, max_people))
    rows: list[tuple[int, ...]] = []
    while budget > 0:
        size = draw(st.integers(1, budget))
        people = draw(st.lists(st.integers(0, n_values - 1), min_size=size, max_size=size))
        rows.append(tuple(people.count(v) for v in range(n_values)))
        budget -= size
    return tuple(rows)


@settings(max_examples=25, deadline=None)
@given(tiny_releases())
def test_exchangeable_enumeration_equals_the_definition(rows: Rows) -> None:
    """Taking people in order within groups loses no knowledge (every exactly-sized
    maximum agrees with the verbatim enumeration)."""
    bounds = (1, 2, 2)
    exact_all, all_table = breach_table_all(rows, bounds)
    exact_canon, canon_table = breach_table(rows, bounds)
    assert {p: v[0] for p, v in exact_all.items()} == {p: v[0] for p, v in exact_canon.items()}
    assert {p: v[0] for p, v in all_table.items()} == {p: v[0] for p, v in canon_table.items()}


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=7).map(
        lambda people: tuple(people.count(v) for v in range(4))
    ),
    st.data(),
)
def test_group_probability_counts_arrangements(row: tuple[int, ...], data: st.DataObject) -> None:
    n = sum(row)
    value = data.draw(st.integers(0, 3))
    target = data.draw(st.sampled_from([None, -1, 0, 1, 2, 3]))
    first = 0 if target is None else 1
    excluded = tuple(data.draw(st.sets(st.integers(0, 3), max_size=2)) - {value})
    known = tuple(data.draw(st.lists(st.integers(0, 3), max_size=n - first)))
    implied = data.draw(st.integers(0, n - first - len(known)))
    args = (row, target, excluded, known, implied, value)
    assert group_probability(*args) == group_probability_by_worlds(*args)


@settings(max_examples=30, deadline=None)
@given(tiny_releases(max_people=7, max_values=3))
def test_group_product_equals_world_counting(rows: Rows) -> None:
    _, table = breach_table(rows, (1, 2, 2))
    for point in [(0, 0, 0), (1, 0, 1), (0, 2, 1), (1, 1, 2), (0, 1, 2)]:
        assert breach_by_groups(rows, point)[0] == table[point][0], point


def test_breach_is_monotone_even_with_exact_sizes() -> None:
    """Where "exactly (l, k, m) pieces" is possible it is never below "exactly fewer": the
    at-most reading loses nothing (also checked on random releases in
    test_skyline_properties.py)."""
    rows = ((1, 2, 1), (2, 0, 1), (0, 1, 1))
    exact, _ = breach_table(rows, (2, 2, 2))
    for point, (value, _) in exact.items():
        for step in ((1, 0, 0), (0, 1, 0), (0, 0, 1)):
            nxt = (point[0] + step[0], point[1] + step[1], point[2] + step[2])
            if nxt in exact:
                assert exact[nxt][0] >= value, (nxt, point)
