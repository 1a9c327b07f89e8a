"""Hypothesis strategies of releases for the privacy skyline's property tests (small and medium
releases) and the check that a reported witness is one. Shared by the properties and the
benign-value tests."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import strategies as st

from airflow_privacy.core.criteria.skyline import (
    BreachResult,
)
from airflow_privacy.core.model import Bucketization
from tests.core.criteria.skyline_oracle import Rows, posterior

# Reverse-alphabetical labels, so a label/index mix-up cannot go unnoticed.
LABELS = ("z", "y", "x", "w", "u", "t", "s", "r", "q", "p")


def release(rows: Rows | list[list[int]]) -> Bucketization:
    width = len(rows[0])
    return Bucketization.from_group_counts([list(r) for r in rows], values=LABELS[:width])


# --------------------------------------------------------------------------- strategies
@st.composite
def small_releases(
    draw: st.DrawFn, max_people: int = 7, max_values: int = 4, max_group: int = 4
) -> Rows:
    """Small releases: groups of 1..max_group people (often too small for the congregated
    placement of every known and implied person), values possibly absent from a group."""
    n_values = draw(st.integers(1, max_values))
    budget = draw(st.integers(1, max_people))
    rows: list[tuple[int, ...]] = []
    while budget > 0:
        size = draw(st.integers(1, min(budget, max_group)))
        people = draw(st.lists(st.integers(0, n_values - 1), min_size=size, max_size=size))
        rows.append(tuple(people.count(v) for v in range(n_values)))
        budget -= size
    return tuple(rows)


@st.composite
def medium_releases(draw: st.DrawFn, max_groups: int = 12, max_values: int = 6) -> Rows:
    """Larger releases for the engine alone (and the per-group enumerator)."""
    n_values = draw(st.integers(2, max_values))
    n_groups = draw(st.integers(1, max_groups))
    rows = []
    for _ in range(n_groups):
        row = draw(st.lists(st.integers(0, 6), min_size=n_values, max_size=n_values))
        if sum(row) == 0:
            row[draw(st.integers(0, n_values - 1))] = 1
        rows.append(tuple(row))
    return tuple(rows)


# --------------------------------------------------------------------------- witness check
def witness_breach(rows: Rows, res: BreachResult) -> Fraction | None:
    """The oracle's probability of the engine's witness knowledge (people as the witness
    names them: the target is person 0 of its group, then known, then implied people)."""
    w = res.witness
    v = LABELS.index(w.value)
    known: dict[tuple[int, int], int] = {}
    implied: list[tuple[int, int]] = []
    tg = w.target_group
    for i, y in enumerate(w.known_target):
        known[(tg, 1 + i)] = LABELS.index(y)
    for j in range(w.implied_target):
        implied.append((tg, 1 + len(w.known_target) + j))
    if w.other_group is not None:
        for i, y in enumerate(w.known_other):
            known[(w.other_group, i)] = LABELS.index(y)
        for j in range(w.implied_other):
            implied.append((w.other_group, len(w.known_other) + j))
    excluded = [LABELS.index(x) for x in w.excluded]
    return posterior(rows, (tg, 0), v, excluded, known, implied)


def assert_witness(rows: Rows, res: BreachResult) -> None:
    assert res.witness.other_group != res.witness.target_group
    used = res.witness.pieces
    assert all(u <= p for u, p in zip(used, (res.l, res.k, res.m), strict=True)), used
    assert witness_breach(rows, res) == res.exact
    assert res.breach == pytest.approx(float(res.exact), abs=1e-15)
