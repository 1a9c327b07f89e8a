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
    _counted_rows,
    _grouped_counts,
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
    # both ways of counting: Arrow's group_by (Acero), and numpy over dictionary codes
    # (class_counts gives it the tables without nulls)
    assert _grouped_counts(table, ["s", "i", "f"]) == dict(want)
    if not any(v is None for r in rows for v in r):
        assert _counted_rows(table, ["s", "i", "f"]) == dict(want)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", " a", "None", "nan"]),
            st.integers(-3, 3) | st.integers(-(2**62), 2**62),
            st.sampled_from([0.5, -0.0, 0.0, 1.0, float("nan")]),
        ),
        min_size=1,
        max_size=40,
    ),
    st.booleans(),
)
def test_the_numpy_count_of_a_null_free_table_is_the_counts_of_the_text_keys(
    rows: list[tuple[str, int, float]], dictionary: bool
) -> None:
    """The numpy count (the checks' ``count_rows``) labels each value by its text, as
    class_key does: small and wide integer ranges, signed zeros, NaN, text that reads
    "None", plain and dictionary-encoded text columns."""
    text = pa.array([r[0] for r in rows], pa.string())
    table = pa.table(
        {
            "s": text.dictionary_encode() if dictionary else text,
            "i": pa.array([r[1] for r in rows], pa.int64()),
            "f": pa.array([r[2] for r in rows], pa.float64()),
        }
    )
    want = Counter(class_key(r) for r in rows)
    assert _counted_rows(table, ["s", "i", "f"]) == dict(want)
    assert class_counts(table, ["s", "i", "f"]) == dict(want)


def test_a_null_in_a_dictionary_is_a_class_value_of_its_own() -> None:
    """A dictionary column whose dictionary holds a null (no row is null): that value is
    null, not the text "None"."""
    column = pa.DictionaryArray.from_arrays(
        pa.array([0, 1, 1, 2], pa.int32()), pa.array(["a", None, "None"], pa.string())
    )
    table = pa.table({"s": column})
    assert class_counts(table, ["s"]) == {("a",): 1, (None,): 2, ("None",): 1}


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
    assert _counted_rows(table, names) == dict(want)
