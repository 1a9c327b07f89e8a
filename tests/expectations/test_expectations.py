"""Great Expectations custom expectations, run through an ephemeral GX context on pandas."""

from __future__ import annotations

from collections import Counter
from typing import Any

import great_expectations as gx
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.criteria.worst_case import max_disclosure
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.expectations import (
    ExpectColumnValuesToBeInGroupsOfAtLeastK,
    ExpectColumnValuesToNotBeDirectIdentifiers,
    ExpectReleaseToBeCKSafe,
    ExpectRowsToBeInGroupsOfAtLeastK,
)

CONTEXT = gx.get_context(mode="ephemeral")
_counter = iter(range(10**6))


def validate(df: pd.DataFrame, expectation: Any) -> Any:
    name = f"src{next(_counter)}"
    batch = (
        CONTEXT.data_sources.add_pandas(name)
        .add_dataframe_asset("release")
        .add_batch_definition_whole_dataframe("all")
        .get_batch(batch_parameters={"dataframe": df})
    )
    result = batch.validate(expectation, result_format="COMPLETE")
    assert not result.exception_info.get("raised_exception", False), result.exception_info
    return result


FIG3 = pd.DataFrame(
    {
        "sex": ["M"] * 5 + ["F"] * 5,
        "zip": ["1485*"] * 10,
        "disease": ["Flu", "LC", "Mumps", "Flu", "LC", "Flu", "BC", "Flu", "HD", "OC"],
    }
)


def test_ck_safety_matches_the_engine() -> None:
    ok = validate(
        FIG3, ExpectReleaseToBeCKSafe(sensitive="disease", group_columns=["sex"], c=0.7, k=1)
    )
    assert ok.success is True
    assert ok.result["observed_value"] == pytest.approx(2 / 3)
    bad = validate(
        FIG3, ExpectReleaseToBeCKSafe(sensitive="disease", group_columns=["sex"], c=0.6, k=1)
    )
    assert bad.success is False
    assert "an adversary who knows that" in bad.result["details"]["witness"]


def test_direct_identifiers_fail_exactly_the_leaking_rows() -> None:
    notes = ["routine visit", "call 555-123-4567", "ok", "jane.doe@example.org", "123-45-6789",
             "4111 1111 1111 1111", "age 42", "2026-01-05"]  # fmt: skip
    df = pd.DataFrame({"note": notes})
    result = validate(df, ExpectColumnValuesToNotBeDirectIdentifiers(column="note"))
    assert result.success is False
    assert result.result["unexpected_index_list"] == [1, 3, 4, 5]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ab"), st.sampled_from("xyz")), min_size=1, max_size=30),
       st.integers(1, 4))  # fmt: skip
def test_small_groups_fail_exactly_their_rows(rows: list[tuple[str, str]], k: int) -> None:
    df = pd.DataFrame(rows, columns=["g1", "g2"])
    sizes = Counter(rows)
    expected = [i for i, row in enumerate(rows) if sizes[row] < k]
    result = validate(df, ExpectRowsToBeInGroupsOfAtLeastK(column_list=["g1", "g2"], k=k))
    assert result.success is (not expected)
    assert sorted(result.result.get("unexpected_index_list") or []) == expected
    single = validate(df, ExpectColumnValuesToBeInGroupsOfAtLeastK(column="g1", k=k))
    g1 = Counter(r[0] for r in rows)
    assert sorted(single.result.get("unexpected_index_list") or []) == [
        i for i, r in enumerate(rows) if g1[r[0]] < k
    ]


def test_ck_expectation_on_adult_release_agrees_with_core() -> None:
    from airflow_privacy.core.datasets import adult_release

    df = adult_release({"age": 2, "sex": 0}).to_pandas()
    spec = ReleaseSpec("occupation", ("age", "sex"))
    engine = max_disclosure(Bucketization.from_frame(df, spec), 3).max_disclosure
    result = validate(
        df,
        ExpectReleaseToBeCKSafe(sensitive="occupation", group_columns=["age", "sex"], c=0.7, k=3),
    )
    assert result.result["observed_value"] == pytest.approx(engine, abs=1e-12)
    assert result.success is (engine < 0.7)
