"""Generalization hierarchies: ARX import, builders, full-domain generalization of Adult."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from airflow_privacy.core.datasets import (
    ADULT_COLUMNS,
    adult_hierarchies,
    adult_hierarchy_path,
    adult_release,
    load_adult,
)
from airflow_privacy.core.hierarchy import Hierarchy, generalize_table
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.errors import InputError


def test_arx_age_hierarchy() -> None:
    h = Hierarchy.from_arx_csv(adult_hierarchy_path("age"))
    assert h.column == "age"
    assert h.height == 5
    assert h.generalize_value("39", 3) == "20-39"
    assert h.generalize_value("39", 4) == "*"
    assert h.generalize(["21", "39", "21"], 2) == ["20-29", "30-39", "20-29"]
    with pytest.raises(InputError, match="value '200' of column 'age' is not in its hierarchy"):
        h.generalize_value("200", 1)
    with pytest.raises(InputError, match="level 7 does not exist for column 'age'"):
        h.generalize_value("39", 7)


def test_bundled_adult_is_complete() -> None:
    table = load_adult()
    assert table.num_rows == 30162
    assert tuple(table.column_names) == ADULT_COLUMNS
    hier = adult_hierarchies()
    for col in ADULT_COLUMNS:
        values = set(table.column(col).to_pylist())
        assert values <= set(hier[col].values), col  # every value generalizes
        assert hier[col].labels(hier[col].height - 1) == ["*"]


def test_figure5_release_groups() -> None:
    release = adult_release({"age": 3})
    b = Bucketization.from_arrow(release, ReleaseSpec("occupation", ("age", "sex", "race")))
    assert b.n_records == 30162
    assert sorted(g[0] for g in b.groups) == ["0-19", "20-39", "40-59", "60-79", "80-99"]
    assert {g[1] for g in b.groups} == {"*"}
    assert len(b.values) == 14


def test_malformed_files(tmp_path: Path) -> None:
    ragged = tmp_path / "h_hierarchy_zip.csv"
    ragged.write_text("13053;1305*;*\n13054;*\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 2: 2 levels, expected 3"):
        Hierarchy.from_arx_csv(ragged)
    dup = tmp_path / "dup.csv"
    dup.write_text("a;*\na;*\n", encoding="utf-8")
    with pytest.raises(InputError, match="value 'a' appears twice"):
        Hierarchy.from_arx_csv(dup, "col")
    with pytest.raises(InputError, match="does not exist"):
        Hierarchy.from_arx_csv(tmp_path / "missing.csv")


def test_interval_and_mask_builders() -> None:
    h = Hierarchy.intervals("age", [17, 25, 39, 40], [10, 20])
    assert h.generalize(["17", "25", "39", "40"], 1) == ["10-19", "20-29", "30-39", "40-49"]
    assert h.generalize(["17", "25", "39", "40"], 2) == ["0-19", "20-39", "20-39", "40-59"]
    assert h.generalize(["17"], 3) == ["*"]
    m = Hierarchy.masks("zip", ["13053", "13068"])
    assert m.generalize(["13053", "13068"], 2) == ["130**", "130**"]
    assert m.generalize(["13053"], m.height - 1) == ["*"]
    with pytest.raises(InputError, match="not numeric"):
        Hierarchy.intervals("age", ["x"], [10])


def test_generalize_table_rejects_unknown_columns() -> None:
    table = pa.table({"age": ["39"]})
    hier = {"age": Hierarchy.from_arx_csv(adult_hierarchy_path("age"))}
    assert generalize_table(table, hier, {"age": 2}).column("age").to_pylist() == ["30-39"]
    with pytest.raises(InputError, match="column 'zip' does not exist"):
        generalize_table(table, hier, {"zip": 1})
