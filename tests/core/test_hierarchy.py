"""Generalization hierarchies: ARX import, builders, full-domain generalization of Adult;
labels that the composition audit reads back as exactly the values they stand for; no
hierarchy for a column that is not a quasi-identifier."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.composition.descriptors import match_matrix, parse_label
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


# ------------------------------------------------------------ labels that round-trip
def test_fractional_values_get_half_open_labels() -> None:
    """`--interval children=2,4` labelled 5.5 as '4-5', which the audit reads as [4, 5]."""
    h = Hierarchy.intervals("children", ["0", "2", "4", "5", "5.5", "-0.5"], [2, 4])
    assert h.generalize(["5.5", "4", "5", "-0.5"], 1) == ["[4,6)", "[4,6)", "[4,6)", "[-2,0)"]
    assert h.generalize(["5.5", "0", "-0.5"], 2) == ["[4,8)", "[0,4)", "[-4,0)"]
    whole = Hierarchy.intervals("children", ["0", "2", "4", "5", "-3", "7.0"], [2, 4])
    assert whole.generalize(["4", "5", "-3", "7.0"], 1) == ["4-5", "4-5", "-4--3", "6-7"]
    assert whole.generalize(["5"], 2) == ["4-7"]


@pytest.mark.parametrize(
    ("values", "widths", "match"),
    [
        (["1", "nan"], [2], "value 'nan' of column 'x' is not a finite number"),
        (["inf"], [2], "value 'inf' of column 'x' is not a finite number"),
        (["1e300"], [2], "value '1e300' of column 'x' is too large"),
        (["1"], [0], "must be whole numbers > 0, got 0"),
        (["1"], [True], "must be whole numbers > 0, got True"),
        (["1"], [2.5], "must be whole numbers > 0, got 2.5"),
        (["1"], [4, 2], "positive and increasing"),
    ],
)
def test_interval_builder_bad_input(values: list[str], widths: list[int], match: str) -> None:
    with pytest.raises(InputError, match=match):
        Hierarchy.intervals("x", values, widths)


_INTS = st.integers(-(10**7), 10**7).map(str)
_NUMBERS = st.one_of(
    _INTS,
    st.floats(-1e7, 1e7, allow_nan=False, allow_infinity=False).map(repr),
    st.decimals(-(10**4), 10**4, places=3, allow_nan=False, allow_infinity=False).map(str),
    st.floats(-1e-3, 1e-3, allow_nan=False, allow_infinity=False).map(str),  # 1e-05
)


@settings(max_examples=300, deadline=None)
@given(
    values=st.one_of(st.lists(_INTS, min_size=1, max_size=25),
                     st.lists(_NUMBERS, min_size=1, max_size=25)),
    widths=st.lists(st.integers(1, 10**4), min_size=1, max_size=4).map(sorted),
)  # fmt: skip
def test_interval_labels_locate_their_values_and_do_not_overlap(
    values: list[str], widths: list[int]
) -> None:
    """Every value's label at every level, read back by the composition audit's locator,
    covers the value, and no other label of that level does."""
    h = Hierarchy.intervals("x", values, widths)
    assert h.height == len(widths) + 2
    vals = list(h.values)
    for level in range(h.height):
        labels = h.labels(level)
        m = match_matrix(labels, vals, "x")
        own = [labels.index(h.levels[level][v]) for v in vals]
        assert m[np.arange(len(vals)), own].all(), level  # its own label covers it
        if 0 < level < h.height - 1:
            assert (m.sum(axis=1) == 1).all(), level  # and no other label does
            parsed = sorted(
                (parse_label(t, "x") for t in labels), key=lambda lab: (lab.low, lab.high)
            )
            assert all(lab.kind == "interval" for lab in parsed)
            for a, b in itertools.pairwise(parsed):  # disjoint as sets of numbers
                assert a.high < b.low or (
                    a.high == b.low and not (a.high_closed and b.low_closed)
                ), (a.text, b.text)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.text("0123456789", min_size=1, max_size=6), min_size=1, max_size=12),
    depth=st.one_of(st.none(), st.integers(0, 7)),
)
def test_mask_labels_locate_their_values_and_do_not_overlap(
    values: list[str], depth: int | None
) -> None:
    h = Hierarchy.masks("zip", values, depth)
    vals = list(h.values)
    for level in range(1, h.height):
        labels = h.labels(level)
        assert all(t == t.strip() for t in labels)  # no padding the audit would strip
        m = match_matrix(labels, vals, "zip")
        own = [labels.index(h.levels[level][v]) for v in vals]
        assert m[np.arange(len(vals)), own].all(), level
        if level < h.height - 1 and len({float(v) for v in vals}) == len(vals):
            assert (m.sum(axis=1) == 1).all(), (level, labels)


def test_mask_labels_of_mixed_lengths_keep_their_length() -> None:
    h = Hierarchy.masks("zip", ["13053", "1234", "7"])
    assert h.generalize(["13053", "1234", "7"], 1) == ["1305*", "123*", "7"]
    assert h.generalize(["13053", "1234", "7"], 4) == ["1****", "****", "7"]
    assert h.generalize(["13053", "1234", "7"], h.height - 1) == ["*", "*", "*"]
    same = Hierarchy.masks("zip", ["13053", "13068"])  # one length: as before
    assert [same.generalize(["13053"], i)[0] for i in range(same.height)] == [
        "13053", "1305*", "130**", "13***", "1****", "*****", "*",
    ]  # fmt: skip


# --------------------------------------------------- hierarchies for non-QI columns
def test_anonymize_refuses_a_hierarchy_for_a_column_that_is_not_a_qi() -> None:
    from airflow_privacy.core.anonymize import anonymize

    table = pa.table({"age": ["30", "31", "40", "41"], "zip": ["1", "1", "2", "2"],
                      "s": ["a", "b", "a", "b"]})  # fmt: skip
    hier = {"age": Hierarchy.intervals("age", ["30", "31", "40", "41"], [10])}
    for method in ("lattice", "mondrian", "bucketize"):
        anonymize(table, ["age"], "s", method, [("k-anonymity", {"k": 2})], hier)
        for col in ("s", "zip"):
            bad = {**hier, col: Hierarchy.masks(col, ["a", "b", "1", "2"])}
            with pytest.raises(InputError) as info:
                anonymize(table, ["age"], "s", method, [("k-anonymity", {"k": 2})], bad)
            assert str(info.value) == (
                f"a hierarchy is given for column {col!r}, which is not among the QIs "
                "('age'); give hierarchies for QI columns only"
            )
