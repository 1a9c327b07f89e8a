"""The risk step's equivalence classes (airflow_privacy/gate/risk_classes.py) against their
definitions: the class sizes a count of the rows' text keys gives, and the estimated
population sizes ``floor(f / pi)`` in exact fractions."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.gate.risk_classes import (
    _grouped_counts,
    _numpy_counts,
    class_counts,
    class_key,
    estimated_population_sizes,
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", " a", None]),
            st.one_of(st.none(), st.integers(-3, 3)),
            st.sampled_from([0.5, -0.0, 0.0, 1.0]),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_class_sizes_are_the_counts_of_the_text_keys(
    rows: list[tuple[str | None, int | None, float]],
) -> None:
    table = pa.table(
        {
            "s": pa.array([r[0] for r in rows], pa.string()),
            "i": pa.array([r[1] for r in rows], pa.int64()),
            "f": pa.array([r[2] for r in rows], pa.float64()),
        }
    )
    want = Counter(class_key(r) for r in rows)
    assert class_counts(table, ["s", "i", "f"]) == dict(want)
    # both ways of counting: numpy over dictionary codes, and Arrow's group_by (Acero)
    assert _numpy_counts(table, ["s", "i", "f"]) == dict(want)
    assert _grouped_counts(table, ["s", "i", "f"]) == dict(want)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(1, 10**6), min_size=1, max_size=20),
    st.fractions(min_value=Fraction(1, 10**7), max_value=1),
)
def test_estimated_population_sizes_are_floor_of_f_over_pi(sizes: list[int], pi: Fraction) -> None:
    got = estimated_population_sizes(sizes, pi)
    assert got == [max(f, math.floor(Fraction(f) / pi)) for f in sizes]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.integers(0, 999), min_size=8, max_size=8), min_size=1, max_size=60))
def test_class_sizes_of_many_wide_columns(rows: list[list[int]]) -> None:
    """Eight columns of up to 1,000 values each: their product passes int64, so the key of
    the first columns is re-densified before the next is added."""
    names = [f"q{j}" for j in range(8)]
    # every column holds 0..999, so the key space is 1000^8 whatever the rows
    table = pa.table(
        {
            q: pa.array([r[j] for r in rows] + list(range(1000)), pa.int64())
            for j, q in enumerate(names)
        }
    )
    want = Counter(class_key(r) for r in rows)
    want.update(class_key([v] * 8) for v in range(1000))
    assert _numpy_counts(table, names) == dict(want)
