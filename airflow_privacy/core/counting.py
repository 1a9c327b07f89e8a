"""Counting the records of a release into per-group sensitive-value counts.

This is the one pass over the rows; everything after it works on the counts. It is written
for large releases: each column is turned into small integer codes once (dictionary columns
keep their dictionary, small-range integer columns are offset, anything else is
hash-encoded by Arrow), and the codes are combined record batch by record batch into one
preallocated buffer, so no row-sized temporary is allocated per column.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pyarrow as pa

IntArray = npt.NDArray[np.int64]

_DIRECT_CELLS = 1 << 26  # mixed-radix histogram up to 64M cells, hashing beyond
_BATCH = 1 << 16


@dataclass(frozen=True)
class _Column:
    """How one column's values become codes ``0..cardinality-1``."""

    name: str
    offset: int | None  # integer columns: code = value - offset; None: dictionary indices
    labels: list[str]


def _prepare(table: pa.Table, names: Sequence[str]) -> tuple[pa.Table, list[_Column]]:
    import pyarrow as pa
    import pyarrow.compute as pc

    columns: list[_Column] = []
    out = table.select(list(dict.fromkeys(names)))
    for name in dict.fromkeys(names):
        col = out.column(name)
        kind = col.type
        if pa.types.is_integer(kind) and len(col) > 0:
            bounds = pc.min_max(col).as_py()
            low, high = int(bounds["min"]), int(bounds["max"])
            if high - low <= 2 * len(col) + 1024:
                columns.append(_Column(name, low, [str(v) for v in range(low, high + 1)]))
                continue
        if pa.types.is_floating(kind):
            # every NaN is one value, whatever its sign bit or payload (all print "nan"; SQL
            # and DuckDB group them as one): Arrow's hash would keep their bit patterns apart
            col = pc.if_else(pc.is_nan(col), pa.scalar(float("nan"), kind), col)
        if not pa.types.is_dictionary(kind):
            encoded = pc.dictionary_encode(col)
            out = out.set_column(out.column_names.index(name), name, encoded)
        columns.append(_Column(name, None, []))
    out = out.unify_dictionaries()
    resolved: list[_Column] = []
    for c in columns:
        if c.offset is None:
            chunks = out.column(c.name).chunks
            dictionary = chunks[0].dictionary if chunks else pa.array([], pa.string())
            resolved.append(_Column(c.name, None, [str(v) for v in dictionary.to_pylist()]))
        else:
            resolved.append(c)
    return out, resolved


def int_view(arr: pa.Array) -> npt.NDArray[np.integer]:
    """Zero-copy numpy view of a null-free integer Arrow array.

    (``Array.to_numpy`` imports pandas, which costs ~0.4 s of start-up for nothing.)
    """
    import pyarrow as pa

    kind = arr.type
    signed = "u" if pa.types.is_unsigned_integer(kind) else ""
    dtype = np.dtype(f"{signed}int{kind.bit_width}")
    return np.frombuffer(
        arr.buffers()[1], dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize
    )


def _codes(batch: pa.RecordBatch, column: _Column) -> IntArray:
    arr = batch.column(column.name)
    if column.offset is None:
        return int_view(arr.indices).astype(np.int64)
    codes = int_view(arr).astype(np.int64)
    codes -= column.offset
    return codes


_KEY_LIMIT = 1 << 62  # a mixed-radix key stays below this (int64, with room to multiply)


@dataclass(frozen=True)
class _Keys:
    """One integer per row for its combination of column codes, and how to decode it.

    The key is mixed radix over ``radix`` (the last columns' cardinalities); when the product
    of the cardinalities would pass :data:`_KEY_LIMIT` the key so far is re-densified
    (``np.unique``) and ``head[code]`` holds the per-column codes of each dense prefix."""

    key: IntArray
    bound: int
    radix: tuple[int, ...]
    head: IntArray | None

    def decode(self, codes: IntArray) -> IntArray:
        """The per-column codes (one column per grouped column) of each key in ``codes``."""
        rest = np.asarray(codes, dtype=np.int64).copy()
        tail = np.empty((rest.shape[0], len(self.radix)), dtype=np.int64)
        for j in range(len(self.radix) - 1, -1, -1):
            tail[:, j] = rest % self.radix[j]
            rest //= self.radix[j]
        if self.head is None:
            return tail
        return np.hstack([self.head[rest], tail])


def _row_keys(prepared: pa.Table, columns: Sequence[_Column]) -> _Keys:
    """The :class:`_Keys` of ``columns`` over every row of ``prepared``: written record
    batch by record batch into one buffer while the radix product fits, else combined column
    by column with re-densification (many high-cardinality columns: a plain mixed-radix
    key would wrap around int64 and decode to wrong labels)."""
    cards = [max(len(c.labels), 1) for c in columns]
    n_rows = prepared.num_rows
    keys = np.empty(n_rows, dtype=np.int64)
    space = 1
    for card in cards:
        space *= card
    if space < _KEY_LIMIT:
        start = 0
        for batch in prepared.to_batches(max_chunksize=_BATCH):
            stop = start + batch.num_rows
            if columns:
                key = _codes(batch, columns[0])
                for col, card in zip(columns[1:], cards[1:], strict=True):
                    key *= card
                    key += _codes(batch, col)
                keys[start:stop] = key
            else:
                keys[start:stop] = 0
            start = stop
        return _Keys(keys, space, tuple(cards), None)
    keys[:] = 0
    bound = 1
    radix: list[int] = []
    head: IntArray | None = None
    for col, card in zip(columns, cards, strict=True):
        if bound * card >= _KEY_LIMIT:
            uniq, inverse = np.unique(keys, return_inverse=True)
            head = _Keys(uniq, bound, tuple(radix), head).decode(uniq)
            keys = inverse.reshape(-1).astype(np.int64)
            bound = max(int(uniq.shape[0]), 1)
            radix = []
        keys *= card
        start = 0
        for batch in prepared.select([col.name]).to_batches(max_chunksize=_BATCH):
            keys[start : start + batch.num_rows] += _codes(batch, col)
            start += batch.num_rows
        bound *= card
        radix.append(card)
    return _Keys(keys, bound, tuple(radix), head)


def _labels(
    columns: Sequence[_Column], keys: _Keys, codes: IntArray
) -> tuple[tuple[str, ...], ...]:
    """The label tuple of every key in ``codes``: column by column, then zipped (a Python
    generator per group cost 0.14 s for 100,000 groups)."""
    parts = keys.decode(codes)
    per_column = [
        [labels[code] for code in parts[:, j].tolist()]
        for j, labels in enumerate(c.labels for c in columns)
    ]
    if not per_column:
        return tuple(() for _ in range(len(codes)))
    return tuple(zip(*per_column, strict=True))


def count_rows(
    table: pa.Table, columns: Sequence[str]
) -> tuple[tuple[tuple[str, ...], ...], IntArray]:
    """``(distinct rows, multiplicities)`` of ``columns`` in a table without missing values,
    each value labelled as :func:`count_groups` labels it (so the two can be joined)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    prepared, cols = _prepare(table, columns)
    by_name = {c.name: c for c in cols}
    ordered = [by_name[name] for name in columns]
    keys = _row_keys(prepared, ordered)
    enc = pc.dictionary_encode(
        pa.Array.from_buffers(pa.int64(), len(keys.key), [None, pa.py_buffer(keys.key)])
    )
    codes = int_view(enc.dictionary).astype(np.int64)
    counts = np.bincount(int_view(enc.indices).astype(np.int64), minlength=len(codes))
    return _labels(ordered, keys, codes), counts.astype(np.int64)


def _weights(table: pa.Table, name: str | None) -> npt.NDArray[np.float64] | None:
    """The column ``name`` of whole numbers as float64 (``np.bincount``'s weights: exact
    for counts below 2^53), or None."""
    if name is None:
        return None
    column = table.column(name).combine_chunks()
    return int_view(column).astype(np.float64)


def count_groups(
    table: pa.Table, group_columns: Sequence[str], sensitive: str, *, weights: str | None = None
) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...], IntArray]:
    """``(group keys, sensitive labels, counts)`` of a table without missing values; with
    ``weights``, each row counts as that (integer) column's number of records.

    Groups that occur are listed in the order of their codes; values no record has are
    dropped.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    w = _weights(table, weights)
    prepared, cols = _prepare(table, [*group_columns, sensitive])
    by_name = {c.name: c for c in cols}
    g_cols = [by_name[name] for name in group_columns]
    s_col = by_name[sensitive]
    n_values = len(s_col.labels)
    keys = _row_keys(prepared, g_cols)
    space = keys.bound
    direct = space * n_values <= _DIRECT_CELLS

    n_rows = prepared.num_rows
    s_batches = prepared.select([s_col.name]).to_batches(max_chunksize=_BATCH)
    if direct:
        # the sensitive code joins the key in place (no second row-sized buffer)
        flat_keys = keys.key
        start = 0
        for batch in s_batches:
            stop = start + batch.num_rows
            flat_keys[start:stop] *= n_values
            flat_keys[start:stop] += _codes(batch, s_col)
            start = stop
        flat = np.bincount(flat_keys, weights=w, minlength=int(space) * n_values)
        grid = flat.reshape(int(space), n_values)
        present = np.flatnonzero(grid.any(axis=1))
        counts = grid[present]
        group_codes = present
    else:
        enc = pc.dictionary_encode(
            pa.Array.from_buffers(pa.int64(), n_rows, [None, pa.py_buffer(keys.key)])
        )
        group_idx = int_view(enc.indices).astype(np.int64)
        group_codes = int_view(enc.dictionary).astype(np.int64)
        group_idx *= n_values
        start = 0
        for batch in s_batches:
            group_idx[start : start + batch.num_rows] += _codes(batch, s_col)
            start += batch.num_rows
        counts = np.bincount(group_idx, weights=w, minlength=len(group_codes) * n_values).reshape(
            len(group_codes), n_values
        )
    groups = _labels(g_cols, keys, group_codes)
    used = np.asarray(counts.any(axis=0), dtype=bool)
    labels = tuple(lbl for lbl, ok in zip(s_col.labels, used.tolist(), strict=True) if ok)
    return groups, labels, np.ascontiguousarray(counts[:, used], dtype=np.int64)
