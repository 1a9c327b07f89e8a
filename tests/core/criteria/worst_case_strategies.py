"""Hypothesis strategies of bucketizations for the worst-case engine's property tests (small,
diverse and large releases), and their translation for the exhaustive oracle
(tests/oracle.py). Shared by the properties and the benign-value tests."""

from __future__ import annotations

from hypothesis import strategies as st

from airflow_privacy.core.criteria.worst_case import (
    Atom,
)
from airflow_privacy.core.model import Bucketization
from tests.oracle import (
    OAtom,
)

# Reverse-alphabetical labels, so a label/index mix-up in the engine cannot go unnoticed.
LABELS = ("z", "y", "x", "w", "u", "t", "s", "r")


Rows = tuple[tuple[int, ...], ...]


@st.composite
def bucketizations(
    draw: st.DrawFn, max_people: int = 7, max_values: int = 4, max_groups: int = 7
) -> Rows:
    """Small bucketizations: every group non-empty, values may be absent from a group."""
    n_values = draw(st.integers(1, max_values))
    budget = draw(st.integers(1, max_people))
    rows: list[tuple[int, ...]] = []
    while budget > 0 and len(rows) < max_groups:
        size = draw(st.integers(1, budget))
        people = draw(st.lists(st.integers(0, n_values - 1), min_size=size, max_size=size))
        rows.append(tuple(people.count(v) for v in range(n_values)))
        budget -= size
    return tuple(rows)


@st.composite
def diverse_bucketizations(draw: st.DrawFn, max_people: int = 7, max_values: int = 5) -> Rows:
    """Small bucketizations whose groups hold at least three distinct values.

    A group with one value is disclosed by one implication (from a sure atom), one with two
    values by one negation and one with three by two negations; only diverse groups make
    the maximum for k >= 1 fall below 1 and the choice of knowledge matter.
    """
    n_values = draw(st.integers(3, max_values))
    budget = max_people if n_values < 5 else min(max_people, 6)  # keeps the oracle fast
    rows: list[tuple[int, ...]] = []
    while budget >= 3 and (not rows or draw(st.booleans())):
        size = draw(st.integers(3, budget))
        distinct = draw(st.integers(3, min(size, n_values)))
        order = draw(st.permutations(range(n_values)))
        people = list(order[:distinct])
        people += draw(
            st.lists(st.sampled_from(people), min_size=size - distinct, max_size=size - distinct)
        )
        rows.append(tuple(people.count(v) for v in range(n_values)))
        budget -= size
    return tuple(rows)


@st.composite
def large_bucketizations(draw: st.DrawFn, max_groups: int = 20, max_values: int = 6) -> Rows:
    """Bucketizations beyond the oracle's reach (up to 20 groups of up to 30 people)."""
    n_values = draw(st.integers(1, max_values))
    n_groups = draw(st.integers(2, max_groups))
    rows: list[tuple[int, ...]] = []
    for _ in range(n_groups):
        row = draw(st.lists(st.integers(0, 5), min_size=n_values, max_size=n_values))
        if sum(row) == 0:
            row[draw(st.integers(0, n_values - 1))] = 1
        rows.append(tuple(row))
    return tuple(rows)


def build(rows: Rows) -> Bucketization:
    return Bucketization.from_group_counts([list(r) for r in rows], values=LABELS[: len(rows[0])])


def to_oracle(b: Bucketization, a: Atom) -> OAtom:
    return (a.group, a.person, b.values.index(a.value))
