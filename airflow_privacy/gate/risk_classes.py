"""Equivalence classes of a release on its quasi-identifiers, for the risk step
(:mod:`airflow_privacy.gate.steps.risk`) and the population of a check: each class's size,
counted where the data lives (DuckDB for a big file, the database for a SQL table, Arrow in
process), and the population sizes estimated from a sampling fraction."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.refs import ReleaseRef


def class_value(value: Any) -> str | None:
    """One QI value of a class as text (a CSV reads text, Parquet keeps types); null stays
    null."""
    return None if value is None else str(value)


def class_key(values: Sequence[Any]) -> tuple[str | None, ...]:
    """A class's QI combination, compared as text (:func:`class_value`)."""
    return tuple(map(class_value, values))


def class_counts(table: pa.Table, qis: Sequence[str]) -> dict[tuple[str | None, ...], int]:
    """The size of every equivalence class (records sharing one QI combination). Counted by
    Arrow's ``Table.group_by`` when its Acero engine is loaded already (it hashes on every
    core: 34 ms against 63 ms for 301,620 rows of 8 QIs) or a QI holds a null (a value of
    its own here, which the numpy count does not read), else by the checks' own count in
    numpy over Arrow's dictionary codes (:func:`~airflow_privacy.core.counting.count_rows`):
    importing Acero costs 0.35 s, more than the numpy count of the largest table read in
    process (a CSV under 64 MiB, about 10^6 rows) loses."""
    if table.num_rows == 0:
        return {}
    if "pyarrow.acero" in sys.modules or any(_has_null(table.column(q)) for q in qis):
        return _grouped_counts(table, qis)
    return _counted_rows(table, qis)


def _has_null(column: pa.ChunkedArray) -> bool:
    """Whether a column holds a null, as a row or (a dictionary column) as a value."""
    import pyarrow as pa

    if column.null_count:
        return True
    return pa.types.is_dictionary(column.type) and any(
        chunk.dictionary.null_count for chunk in column.chunks
    )


def _grouped_counts(table: pa.Table, qis: Sequence[str]) -> dict[tuple[str | None, ...], int]:
    """:func:`class_counts` by Arrow's ``Table.group_by`` (Acero)."""
    import pyarrow as pa

    grouped = table.group_by(list(qis)).aggregate([([], "count_all")])
    columns: list[list[Any]] = []
    for q in qis:
        col = grouped.column(q)
        values = col.to_pylist()
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
            values = list(map(class_value, values))  # text already: nothing to convert
        columns.append(values)
    return _merged(zip(*columns, strict=True), grouped.column("count_all").to_pylist())


def _counted_rows(table: pa.Table, qis: Sequence[str]) -> dict[tuple[str | None, ...], int]:
    """:func:`class_counts` of a null-free table by
    :func:`~airflow_privacy.core.counting.count_rows`, whose labels are the values' text as
    :func:`class_value` makes it (``str``)."""
    from airflow_privacy.core.counting import count_rows

    rows, sizes = count_rows(table, list(qis))
    return _merged(rows, sizes.tolist())


def _merged(
    keys: Iterable[tuple[str | None, ...]], sizes: list[int]
) -> dict[tuple[str | None, ...], int]:
    """The classes keyed by their values as text (built column by column, then zipped: a
    key built per class cost 30 ms on 12,458 classes); two values that print alike are one
    class, as :func:`class_key` makes them."""
    out: dict[tuple[str | None, ...], int] = {}
    for k, c in zip(keys, sizes, strict=True):
        out[k] = out.get(k, 0) + int(c)
    return out


def file_classes(
    ref: ReleaseRef, columns: Sequence[str], ctx: GateContext, fmt: Any, delimiter: str | None
) -> dict[tuple[str | None, ...], int] | None:
    """The class sizes of a file on ``columns`` counted by DuckDB when the file is too
    large to read whole (:func:`~airflow_privacy.core.backends.large`: only the classes
    come back), else ``None`` (read in process)."""
    from airflow_privacy.core.backends import large

    path = ref.local
    if not large(path, fmt, list(columns)):
        return None
    from airflow_privacy.core.backends.duck import DuckDBBackend

    out: dict[tuple[str | None, ...], int] = {}
    for values, n in DuckDBBackend().class_counts(
        path, columns, fmt=fmt, delimiter=delimiter, progress=ctx.progress
    ):
        k = class_key(values)
        out[k] = out.get(k, 0) + n
    return out


def estimated_population_sizes(sizes: Sequence[int], pi: Fraction) -> list[int]:
    """``F_j = floor(f_j / pi)`` (module doc): rounded down, so the estimated risk ``1/F_j``
    is never below the unrounded estimate's."""
    p, q = pi.numerator, pi.denominator  # floor(f / (p / q)) = (f q) // p, in integers
    return [max(f, (f * q) // p) for f in sizes]
