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
    cardinality: int
    dictionary: list[str]  # a dictionary column's labels, by code (an integer column: [])

    def labels(self, codes: IntArray) -> list[str]:
        """The label of each code in ``codes``: its dictionary entry, or for an integer
        column the number (``str``; made for the codes asked for only: the labels of a
        100,000-value range cost 15 ms)."""
        if self.offset is None:
            dictionary = self.dictionary
            return [dictionary[c] for c in codes.tolist()]
        offset = self.offset
        return [str(offset + c) for c in codes.tolist()]


def _prepare(table: pa.Table, names: Sequence[str]) -> tuple[pa.Table, list[_Column]]:
    import pyarrow as pa

    columns: list[_Column] = []
    out = table.select(list(dict.fromkeys(names)))
    for name in dict.fromkeys(names):
        col = out.column(name)
        kind = col.type
        if pa.types.is_integer(kind) and len(col) > 0 and col.null_count == 0:
            low, high = _bounds(col)
            if high - low <= 2 * len(col) + 1024:
                columns.append(_Column(name, low, high - low + 1, []))
                continue
        if not pa.types.is_dictionary(kind):
            out = out.set_column(out.column_names.index(name), name, _encoded(col))
        columns.append(_Column(name, None, 0, []))
    out = out.unify_dictionaries()
    resolved: list[_Column] = []
    for c in columns:
        if c.offset is None:
            chunks = out.column(c.name).chunks
            dictionary = chunks[0].dictionary if chunks else pa.array([], pa.string())
            labels = [str(v) for v in dictionary.to_pylist()]
            resolved.append(_Column(c.name, None, len(labels), labels))
        else:
            resolved.append(c)
    return out, resolved


def _encoded(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """A column that is not a dictionary, dictionary-encoded by Arrow's hash."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = col.type
    if pa.types.is_floating(kind):
        # every NaN is one value, whatever its sign bit or payload (all print "nan"; SQL
        # and DuckDB group them as one): Arrow's hash would keep their bit patterns apart
        col = pc.if_else(pc.is_nan(col), pa.scalar(float("nan"), kind), col)
    return pc.dictionary_encode(col)


def _bounds(col: pa.ChunkedArray) -> tuple[int, int]:
    """The least and the greatest value of a null-free integer column, on numpy views of
    its chunks (``pyarrow.compute.min_max`` would import ``pyarrow.compute``: 29 ms of a
    process that may need nothing else of it)."""
    views = [int_view(chunk) for chunk in col.chunks if len(chunk)]
    return min(int(v.min()) for v in views), max(int(v.max()) for v in views)


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
    cards = [max(c.cardinality, 1) for c in columns]
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
    per_column = [c.labels(parts[:, j]) for j, c in enumerate(columns)]
    if not per_column:
        return tuple(() for _ in range(parts.shape[0]))
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

    The groups that occur are listed in the order of their label tuples, the values in
    the order of their labels (Python's order of text: the order of
    :meth:`Bucketization.normalized`); values no record has are dropped.
    """
    w = _weights(table, weights)
    prepared, cols = _prepare(table, [*group_columns, sensitive])
    by_name = {c.name: c for c in cols}
    g_cols = [by_name[name] for name in group_columns]
    s_col = by_name[sensitive]
    n_values = s_col.cardinality
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
        import pyarrow as pa
        import pyarrow.compute as pc

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
    used = np.asarray(counts.any(axis=0), dtype=bool)
    labels = s_col.labels(np.flatnonzero(used))
    counts = counts[:, used]
    g_order, groups = _sorted_labels(g_cols, keys.decode(group_codes))
    if g_order is not None:
        counts = counts[g_order]
    v_order = sorted(range(len(labels)), key=labels.__getitem__)
    if v_order != list(range(len(labels))):
        labels, counts = [labels[v] for v in v_order], counts[:, v_order]
    return groups, tuple(labels), np.ascontiguousarray(counts, dtype=np.int64)


def _sorted_labels(
    columns: Sequence[_Column], parts: IntArray
) -> tuple[IntArray | None, tuple[tuple[str, ...], ...]]:
    """The label tuples of the rows of per-column codes ``parts``, in Python's order of
    text (as :meth:`Bucketization.normalized` sorts them), and the order of the rows that
    gives them (``None``: as they came). Found on the codes: each column's codes in use are
    labelled and ranked once, the rows sorted by their ranks (``np.lexsort``, stable).
    The rows stay as they came when a column gives two codes the same label (the codes
    cannot stand for the labels; the bucketization sorts its label tuples itself)."""
    n_rows = parts.shape[0]
    if not columns:
        return None, tuple(() for _ in range(n_rows))
    names: list[list[str]] = []  # per column: the labels of the codes in use
    local: list[IntArray] = []  # per column: each row's position in those
    ranks: list[IntArray] = []  # per column: each row's rank of its label
    sortable = True
    for j, column in enumerate(columns):
        codes = parts[:, j]
        present = np.zeros(max(column.cardinality, 1), dtype=bool)
        present[codes] = True
        used = np.flatnonzero(present)  # (np.unique: 17 ms for 100,000 codes, this 0.2)
        labels = column.labels(used)
        position = np.empty(present.shape[0], dtype=np.int64)
        position[used] = np.arange(used.shape[0], dtype=np.int64)
        names.append(labels)
        local.append(position[codes])
        if column.offset is None and len(set(labels)) < len(labels):
            sortable = False  # (an integer column's labels are its distinct numbers)
        if sortable:
            by_text = sorted(range(len(labels)), key=labels.__getitem__)
            rank = np.empty(len(labels), dtype=np.int64)
            rank[np.asarray(by_text, dtype=np.int64)] = np.arange(len(labels), dtype=np.int64)
            ranks.append(rank[local[-1]])
    order: IntArray | None = None
    if sortable and n_rows > 1:
        order = np.lexsort(ranks[::-1]).astype(np.int64)
        if bool(np.all(order[1:] > order[:-1])):
            order = None
    if order is not None:
        local = [at[order] for at in local]
    per_column = [[labels[i] for i in at.tolist()] for labels, at in zip(names, local, strict=True)]
    return order, tuple(zip(*per_column, strict=True))
