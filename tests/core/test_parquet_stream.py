"""The streaming Parquet count (airflow_privacy.core.parquet_stream): one row group at a
time over the dictionary codes, the distinct rows merged as they grow. Checked against the
whole-table reader (``read_release`` of the decoded strings, counted by
``Bucketization.from_arrow``) and against a count by definition: the same normalized
counts, or the same refusal word for word; and ``auto``'s choice by the file's encoding."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import airflow_privacy.core.backends as backends_module
import airflow_privacy.core.parquet_stream as stream_module
from airflow_privacy.core.backends import bounded_row_groups, choose, count_release, streamed
from airflow_privacy.core.io import read_bucketization, read_release
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.core.parquet_stream import count_parquet
from airflow_privacy.errors import InputError
from tests.core.bucketization_cells import cells, same

TOKENS = ["a", "b", "01", "1", " ", "é", "x y", "NULL"]
text_cell = st.lists(st.sampled_from(TOKENS), max_size=2).map("".join)
float_cell = st.sampled_from([0.0, -0.0, 1.5, float("nan"), -float("nan"), 1e300, None])


def whole(path: Path, spec: ReleaseSpec, missing_as: str | None) -> Any:
    """The whole-table reader's normalized bucketization, or its message."""
    try:
        table = read_release(path, list(spec.required_columns()), sensitive=spec.sensitive,
                             missing_as=missing_as)  # fmt: skip
        return Bucketization.from_arrow(table, spec).normalized()
    except InputError as exc:
        return ("error", str(exc))


def streaming(path: Path, spec: ReleaseSpec, missing_as: str | None) -> Any:
    try:
        return count_parquet(path, spec, missing_as=missing_as).normalized()
    except InputError as exc:
        return ("error", str(exc))


def by_definition(
    rows: list[tuple[Any, ...]], missing_as: str | None
) -> dict[tuple[str, ...], int]:
    """``n_b(s)`` from the rows: a blank sensitive cell (None, or text empty after
    stripping) counted as ``missing_as``; values labelled as the readers label them."""
    out: Counter[tuple[str, ...]] = Counter()
    for g, f, s in rows:
        if s is None or not s.strip():
            s = missing_as
        label = "nan" if f != f else str(f)  # every NaN is one value
        out[(g, label, str(s))] += 1
    return dict(out)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(st.one_of(text_cell, st.none()), float_cell, st.one_of(text_cell, st.none())),
        min_size=1,
        max_size=50,
    ),
    group_size=st.integers(1, 9),
    dictionary_limit=st.sampled_from([1, 1 << 20]),
    missing_as=st.sampled_from([None, "?", "a"]),
    merge_rows=st.sampled_from([0, 3, 1 << 21]),
)
def test_equals_the_whole_table_and_the_definition(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[str | None, float | None, str | None]],
    group_size: int,
    dictionary_limit: int,
    missing_as: str | None,
    merge_rows: int,
) -> None:
    """Several row groups with their own dictionaries (plain pages once a dictionary page is
    full: ``dictionary_limit`` 1 byte), partial counts merged after every row group or
    once: the counts of the whole table, or its refusal (a missing group value, a blank
    sensitive cell naming the first data row)."""
    path = tmp_path_factory.mktemp("stream") / "r.parquet"
    table = pa.table({
        "g": pa.array([r[0] for r in rows], pa.string()),
        "f": pa.array([r[1] for r in rows], pa.float64()),
        "s": pa.array([r[2] for r in rows], pa.string()),
    })  # fmt: skip
    pq.write_table(
        table, path, row_group_size=group_size, dictionary_pagesize_limit=dictionary_limit
    )
    spec = ReleaseSpec("s", ("g", "f"))
    saved = stream_module.MERGE_ROWS
    stream_module.MERGE_ROWS = merge_rows
    try:
        got = streaming(path, spec, missing_as)
    finally:
        stream_module.MERGE_ROWS = saved
    want = whole(path, spec, missing_as)
    same(got, want)
    if isinstance(got, tuple):
        assert "missing value" in got[1] or "blank cell" in got[1], got
    else:
        assert cells(got) == by_definition(rows, missing_as)


def typed() -> dict[str, pa.Array]:
    import datetime as dt
    import decimal

    return {
        "date": pa.array([dt.date(2020, 1, 1), dt.date(2021, 5, 2)] * 3),
        "ts_tz": pa.array([1_000_000, 2_000_000] * 3, pa.timestamp("us", tz="Europe/Paris")),
        "bool": pa.array([True, False] * 3),
        "f32": pa.array([1.0, 0.1] * 3, pa.float32()),
        "f_zero": pa.array([0.0, -0.0] * 3),
        "dec": pa.array(
            [decimal.Decimal("1.50"), decimal.Decimal("2.00")] * 3, pa.decimal128(5, 2)
        ),
        "u64": pa.array([2**63 + 5, 1] * 3, pa.uint64()),
        "i_wide": pa.array([-(10**15), 10**15] * 3, pa.int64()),
        "dict": pa.array(["a", "b"] * 3).dictionary_encode(),
        "lstr": pa.array(["x", "y"] * 3, pa.large_string()),
        "time": pa.array([dt.time(1, 2, 3), dt.time(4, 5, 6)] * 3),
    }


@pytest.mark.parametrize("name", list(typed()))
def test_typed_columns_in_several_row_groups(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typed columns (dates, time zones, decimals, both zeros, wide integers, ...) as group
    and as sensitive column, in row groups of two: the whole table's labels and counts."""
    path = tmp_path / "r.parquet"
    col = typed()[name]
    pq.write_table(pa.table({name: col, "s": ["p", "q", "q", "p", "p", "p"],
                             "g": ["a", "a", "b", "b", "a", "c"]}), path,
                   row_group_size=2)  # fmt: skip
    assert not streamed(path)  # a small file is read whole
    monkeypatch.setattr(backends_module, "DUCKDB_MIN_CELLS", 12)  # 12 cells: large
    assert streamed(path, columns=["s", name]) and not streamed(path, "csv")
    for spec in (ReleaseSpec("s", (name,)), ReleaseSpec(name, ("g",))):
        got = streaming(path, spec, None)
        assert not isinstance(got, tuple), got
        same(got, whole(path, spec, None))
        same(got, count_release(path, spec, requested="arrow")[0])


def test_invalid_utf8_names_the_first_bad_data_row(tmp_path: Path) -> None:
    """A text cell that is not UTF-8 in the third row group: the whole reader's message,
    naming the column and data row 6 (the unified dictionary holds the bad text from the
    first row group on: the first row that uses it is found in a later chunk)."""
    path = tmp_path / "r.parquet"
    raw = pa.array([b"a", b"b", b"a", b"c", b"b", b"\xff\xfe", b"a"], pa.binary())
    table = pa.table({"g": raw.view(pa.string()), "s": ["x"] * 7})
    pq.write_table(table, path, row_group_size=2)
    spec = ReleaseSpec("s", ("g",))
    got = streaming(path, spec, None)
    assert got == whole(path, spec, None)
    assert "'g'" in got[1] and "(data row 6 first)" in got[1], got
    # the whole-table reader of dictionaries (unified over the row groups) names it too
    with pytest.raises(InputError) as unified:
        read_bucketization(path, spec)
    assert str(unified.value) == got[1]


def test_an_empty_file_and_missing_columns_are_refused_alike(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"g": pa.array([], pa.string()), "s": pa.array([], pa.string())}),
                   path)  # fmt: skip
    spec = ReleaseSpec("s", ("g",))
    same(streaming(path, spec, None), whole(path, spec, None))
    assert streaming(path, spec, None) == ("error", "the release is empty (0 records)")
    missing = ReleaseSpec("s", ("nope",))  # named by its role, as read_bucketization does
    with pytest.raises(InputError) as want:
        read_bucketization(path, missing)
    assert streaming(path, missing, None) == ("error", str(want.value))
    assert "group column 'nope' does not exist" in str(want.value)


def test_auto_keeps_row_groups_it_can_count_one_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above the cells that make a file large, ``auto`` keeps a Parquet file in process when
    each of its row groups is under that limit (dictionary-encoded text or plain: both are
    read as dictionaries, one row group at a time); one row group past the limit goes to
    DuckDB; below the limit nothing changes."""
    n = 4_000
    table = pa.table({"g": [f"v{i % 37}" for i in range(n)], "n": list(range(n)),
                      "s": [f"s{i % 5}" for i in range(n)]})  # fmt: skip
    coded, plain = tmp_path / "coded.parquet", tmp_path / "plain.parquet"
    one = tmp_path / "one.parquet"
    pq.write_table(table, coded, row_group_size=1_000)
    pq.write_table(table, plain, row_group_size=1_000, use_dictionary=False)
    pq.write_table(table, one)
    assert choose("auto", one) == "arrow"  # not large: read whole, as before
    monkeypatch.setattr(backends_module, "DUCKDB_MIN_CELLS", 3 * 2_000)
    assert bounded_row_groups(coded) and choose("auto", coded) == "arrow"
    assert bounded_row_groups(plain) and choose("auto", plain) == "arrow"
    assert not bounded_row_groups(one) and choose("auto", one) == "duckdb"  # 12,000 cells
    monkeypatch.setattr(backends_module, "DUCKDB_MIN_CELLS", 2_000)  # 3,000 a row group
    assert not bounded_row_groups(coded) and choose("auto", coded) == "duckdb"
    # the columns counted decide: two of three columns make 2,000 cells a row group
    assert not bounded_row_groups(coded, ["g", "s"])
    monkeypatch.setattr(backends_module, "DUCKDB_MIN_CELLS", 2_001)
    assert bounded_row_groups(coded, ["g", "s"]) and not bounded_row_groups(coded)
    monkeypatch.setattr(backends_module, "DUCKDB_MIN_CELLS", 3 * 2_000)
    spec = ReleaseSpec("s", ("g", "n"))
    for path in (coded, plain):
        got, name = count_release(path, spec)
        assert name == "arrow"
        same(got, count_release(path, spec, requested="duckdb")[0])
        assert int(got.counts.sum()) == n
