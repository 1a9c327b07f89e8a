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

from airflow_privacy.gate.risk_classes import class_counts, class_key, estimated_population_sizes


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


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(1, 10**6), min_size=1, max_size=20),
    st.fractions(min_value=Fraction(1, 10**7), max_value=1),
)
def test_estimated_population_sizes_are_floor_of_f_over_pi(sizes: list[int], pi: Fraction) -> None:
    got = estimated_population_sizes(sizes, pi)
    assert got == [max(f, math.floor(Fraction(f) / pi)) for f in sizes]
