"""Equivalence classes of a release on its quasi-identifiers, for the risk step
(:mod:`airflow_privacy.gate.steps.risk`) and the population of a check: each class's size,
counted where the data lives (DuckDB for a big file, the database for a SQL table, Arrow in
process), and the population sizes estimated from a sampling fraction."""

from __future__ import annotations

import sys
from collections.abc import Sequence
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
    core: 34 ms against 63 ms for 301,620 rows of 8 QIs), else in numpy over Arrow's
    dictionary codes of each column: importing Acero costs 0.35 s, more than the numpy count
    of the largest table read in process (a CSV under 64 MiB, about 10^6 rows) loses."""
    if table.num_rows == 0:
        return {}
    if "pyarrow.acero" in sys.modules:
        return _grouped_counts(table, qis)
    return _numpy_counts(table, qis)


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
    return _merged(columns, grouped.column("count_all").to_pylist())


def _merged(columns: list[list[Any]], sizes: list[int]) -> dict[tuple[str | None, ...], int]:
    """The classes keyed by their values as text, column by column then zipped (a key built
    per class cost 30 ms on 12,458 classes); two values that print alike are one class, as
    :func:`class_key` makes them."""
    out: dict[tuple[str | None, ...], int] = {}
    for k, c in zip(zip(*columns, strict=True), sizes, strict=True):
        out[k] = out.get(k, 0) + int(c)
    return out


def _numpy_counts(table: pa.Table, qis: Sequence[str]) -> dict[tuple[str | None, ...], int]:
    """:func:`class_counts` in numpy over Arrow's dictionary codes (no Acero)."""
    import numpy as np
    import pyarrow as pa

    from airflow_privacy.core.counting import int_view

    key = np.zeros(table.num_rows, dtype=np.int64)
    bound = 1
    codes: list[Any] = []
    labels: list[list[str | None]] = []
    for q in qis:
        column_codes, values = _column_codes(table.column(q))
        card = max(len(values), 1)
        if bound * card >= _KEY_LIMIT:  # re-densify the key so far (many wide columns)
            _, inverse = np.unique(key, return_inverse=True)
            key = inverse.reshape(-1).astype(np.int64)
            bound = int(key.max()) + 1
        key *= card
        key += column_codes
        bound *= card
        codes.append(column_codes)
        labels.append(values)
    encoded = _dictionary_encode(
        pa.Array.from_buffers(pa.int64(), len(key), [None, pa.py_buffer(key)])
    )
    group = int_view(encoded.indices).astype(np.int64)
    sizes = np.bincount(group, minlength=len(encoded.dictionary)).tolist()
    row = np.empty(len(sizes), dtype=np.int64)
    row[group] = np.arange(group.shape[0], dtype=np.int64)  # one row of each class
    columns = [
        [values[c] for c in column_codes[row].tolist()]
        for column_codes, values in zip(codes, labels, strict=True)
    ]
    return _merged(columns, sizes)


_KEY_LIMIT = 1 << 62
"""A class's mixed-radix key stays below this (int64), else the key so far is re-densified."""


def _column_codes(column: pa.ChunkedArray) -> tuple[Any, list[str | None]]:
    """``(code of each row, text of each code)`` of one QI column (:func:`class_value`; a
    null is a value of its own, null as text)."""
    import numpy as np
    import pyarrow as pa

    from airflow_privacy.core.counting import int_view

    col = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    encoded = _dictionary_encode(col)
    values = encoded.dictionary.to_pylist()
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        values = list(map(class_value, values))  # text already: nothing to convert
    return int_view(encoded.indices).astype(np.int64), values


def _dictionary_encode(arr: pa.Array) -> pa.DictionaryArray:
    """Arrow's hash encoding of ``arr``, a null encoded as a value of its own."""
    import pyarrow.compute as pc

    out: pa.DictionaryArray = pc.dictionary_encode(arr, null_encoding="encode")
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
