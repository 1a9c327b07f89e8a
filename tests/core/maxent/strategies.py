"""Hypothesis strategies of small releases for MaxEnt's property tests. Shared by the properties
and the benign-value tests."""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from tests import maxent_oracle as oracle


@st.composite
def releases(draw: st.DrawFn, max_records: int = 9) -> oracle.Buckets:
    """1-3 buckets of 1-4 records; QI = two attributes, three sensitive values."""
    buckets = []
    for _ in range(draw(st.integers(1, 3))):
        size = draw(st.integers(1, 4))
        buckets.append(
            [
                (
                    (draw(st.sampled_from("xy")), draw(st.sampled_from("uv"))),
                    draw(st.sampled_from("abc")),
                )
                for _ in range(size)
            ]
        )
    assume(oracle.n_records(buckets) <= max_records)
    return buckets
