"""Counting a Parquet release one row group at a time, over its dictionary codes, in memory
bounded by one row group and the distinct rows: the in-process backend's path for Parquet
files (:class:`~airflow_privacy.core.backends.ArrowBackend`).

Each row group is read with its text columns as Arrow dictionaries (the file's dictionary
pages and a 4-byte code per cell: no cell's string is built) and grouped by Arrow
(``Table.group_by`` over the codes and the numbers) into its distinct rows and how many
records hold each; the partial counts are merged by one more ``group_by`` whenever they
grow, and once at the end. The engines then count the distinct rows, each weighted by its
records (:func:`airflow_privacy.core.counting.count_groups`), so the labels and the counts
are the ones the whole table would give: Arrow's grouping keeps apart what the counting's
dictionary encoding keeps apart (``-0.0`` and ``0.0``; NaNs by their bits, which the
counting then makes one value).

The reading checks are the whole-table reader's (:func:`airflow_privacy.core.io.
read_bucketization`), with the same messages, made on the distinct rows: blank sensitive
cells and missing values are counted by their records; where a message names the first
data row at fault (invalid UTF-8, a blank sensitive cell), the row groups are read again,
one column at a time, to find it (only when the file is refused).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow_privacy.core.cells import blank_cells_message, check_missing_as
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.model import Bucketization, ReleaseSpec

MERGE_ROWS = 1 << 18
"""The partial counts are merged once they hold more rows than this (or twice what the last
merge left): the memory of the distinct rows stays about twice their number."""


def _count_name(names: Sequence[str]) -> str:
    name = "records"
    while name in names:
        name = f"_{name}"
    return name


def distinct_rows(
    pf: Any, names: Sequence[str], progress: Callable[[str], None] | None = None
) -> tuple[pa.Table, str]:
    """The distinct rows of ``names`` in the open Parquet file ``pf`` (opened with its text
    columns read as dictionaries) and the name of the column that holds how many records
    have each (module doc)."""
    import pyarrow as pa

    count = _count_name(names)
    keys = list(names)
    parts: list[pa.Table] = []
    held = 0
    merged = 0

    def merge(tables: list[pa.Table]) -> pa.Table:
        table = pa.concat_tables(tables)
        summed = table.group_by(keys, use_threads=False).aggregate([(count, "sum")])
        return summed.rename_columns([*keys, count])

    def decoded(table: pa.Table) -> pa.Table:
        # a row group's distinct rows with their dictionary columns as values: few rows,
        # and the parts concatenate without unifying dictionaries (pyarrow 26's
        # unify_dictionaries crashed on grouped dictionary columns holding nulls)
        for j, field in enumerate(table.schema):
            if pa.types.is_dictionary(field.type):
                values = table.column(j).cast(field.type.value_type)
                table = table.set_column(j, field.name, values)
        return table

    groups = pf.num_row_groups
    for i in range(groups):
        part = pf.read_row_group(i, columns=keys)
        counted = part.group_by(keys, use_threads=False).aggregate([([], "count_all")])
        parts.append(decoded(counted.rename_columns([*keys, count])))
        held += counted.num_rows
        del part
        if held > max(MERGE_ROWS, 2 * merged) and len(parts) > 1:
            parts = [merge(parts)]
            merged = held = parts[0].num_rows
        if progress is not None and groups > 1 and (i + 1) % 10 == 0:
            progress(f"counted {i + 1} of {groups} row groups")
    if not parts:
        empty = decoded(pf.schema_arrow.empty_table().select(keys))
        return empty.append_column(count, pa.array([], pa.int64())), count
    return (merge(parts) if len(parts) > 1 else parts[0]), count


def _weighted_sum(weights: Any, mask: Any) -> int:
    import pyarrow.compute as pc

    return int(pc.sum(pc.filter(weights, mask)).as_py() or 0)


def count_parquet(
    path: Path,
    spec: ReleaseSpec,
    *,
    missing_as: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Bucketization:
    """The per-group sensitive counts of a Parquet release, streaming (module doc); the
    same counts and the same refusals as :func:`airflow_privacy.core.io.read_bucketization`."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from airflow_privacy.core.io import (
        _existing_file,
        _reading,
        blank_mask,
        check_utf8,
        fill_blanks,
        parquet_columns,
    )
    from airflow_privacy.core.model import Bucketization, check_columns

    replacement = check_missing_as(missing_as)
    p = _existing_file(path)
    with _reading(p, "parquet"):
        schema = pq.read_schema(p)
        check_columns(schema.names, spec)  # by role first, as the whole reader
        names, text = parquet_columns(p, list(dict.fromkeys(spec.required_columns())), schema)
        if progress is not None:
            progress(f"reading {p}")
        with pq.ParquetFile(p, read_dictionary=text) as pf:
            rows, count = distinct_rows(pf, names, progress)
    weights = rows.column(count)
    try:
        check_utf8(rows, p.name, data_rows=False)
    except InputError:
        for name in names:  # the whole-table reader's message: column by column, first row
            with pq.ParquetFile(p, read_dictionary=[name] if name in text else None) as pf:
                offset = 0
                for i in range(pf.num_row_groups):
                    part = pf.read_row_group(i, columns=[name])
                    check_utf8(part, p.name, start=offset)
                    offset += part.num_rows
        raise
    _, blank, _ = blank_mask(rows.column(spec.sensitive))
    blanks = _weighted_sum(weights, blank)
    if blanks and replacement is None:

        def first_blank(part: Any) -> int | None:
            _, mask, _ = blank_mask(part.column(spec.sensitive))
            hit = pc.index(mask, True).as_py()
            return None if hit is None or hit < 0 else int(hit)

        with pq.ParquetFile(p, read_dictionary=[spec.sensitive] if spec.sensitive in text
                            else None) as pf:  # fmt: skip
            first = _first_in(pf, spec.sensitive, first_blank)
        raise InputError(
            blank_cells_message(spec.sensitive, p.name, blanks, f"data row {first + 1}")
        )
    if blanks:
        rows = fill_blanks(rows, spec.sensitive, replacement, p.name)
    if rows.num_rows == 0:
        raise InputError("the release is empty (0 records)")
    for col in spec.required_columns():
        nulls = _weighted_sum(weights, pc.is_null(rows.column(col)))
        if nulls:
            raise InputError(
                f"column {col!r} has {nulls} missing value(s); fill or drop them first"
            )
    return Bucketization.from_arrow(rows, spec, weights=count)


def _first_in(pf: Any, column: str, find: Callable[[Any], int | None]) -> int:
    """The 0-based data row of the first cell of ``column`` that ``find`` finds in a row
    group (its index there, or None), reading the row groups again."""
    offset = 0
    for i in range(pf.num_row_groups):
        part = pf.read_row_group(i, columns=[column])
        hit = find(part)
        if hit is not None:
            return offset + hit
        offset += part.num_rows
    return offset
