"""The input of an anonymizer, checked and turned into integer codes once.

Values are compared as strings, as everywhere else in the project (a release's cells are
labels, and :meth:`Hierarchy.generalize_arrow` looks values up by their string form), so an
integer column and its CSV copy anonymize the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from airflow_privacy.errors import InputError, opt

if TYPE_CHECKING:
    import pyarrow as pa

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Column:
    """One column as codes: ``values[codes[r]]`` is record ``r``'s value (as a string)."""

    name: str
    codes: IntArray
    values: tuple[str, ...]

    def numbers(self) -> FloatArray | None:
        """The distinct values as finite numbers, or ``None`` if one is not a number."""
        out = np.empty(len(self.values), dtype=np.float64)
        for i, v in enumerate(self.values):
            try:
                x = float(v)
            except ValueError:
                return None
            if not math.isfinite(x):
                return None
            out[i] = x
        return out


@dataclass(frozen=True)
class Encoded:
    """The QI columns and the sensitive column of the input, as codes.

    Row-level input has ``weights`` ``None``: row ``r`` is one record. Input built from a
    backend's histogram (:class:`airflow_privacy.core.backends.histogram.Histogram`) has one
    row per distinct ``(QI..., sensitive)`` tuple and ``weights[r]`` records of it; ``table``
    then holds only those distinct tuples. Every anonymizer gives the same answer for a
    table and for its histogram."""

    table: pa.Table
    qis: tuple[Column, ...]
    sensitive: Column
    dropped: tuple[str, ...]
    weights: IntArray | None = None

    @property
    def n(self) -> int:
        """The number of records (the sum of the weights for a histogram)."""
        if self.weights is not None:
            return int(self.weights.sum())
        return int(self.sensitive.codes.shape[0])

    @property
    def rows(self) -> int:
        """The number of rows of the codes (records, or distinct tuples of a histogram)."""
        return int(self.sensitive.codes.shape[0])

    def row_weights(self) -> IntArray:
        """The records of each row: the weights, or ones for row-level input."""
        if self.weights is not None:
            return self.weights
        return np.ones(self.rows, dtype=np.int64)

    @property
    def qi_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.qis)


def _encode(table: pa.Table, name: str) -> Column:
    import pyarrow as pa
    import pyarrow.compute as pc

    col = table.column(name)
    as_str = col if col.type == pa.string() else pc.cast(col, pa.string())
    enc = pc.dictionary_encode(as_str)
    if isinstance(enc, pa.ChunkedArray):
        enc = (
            enc.combine_chunks()
            if enc.num_chunks
            else pa.array([], pa.string()).dictionary_encode()
        )
    values = tuple(str(v) for v in enc.dictionary.to_pylist())
    codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return Column(name, codes, values)


def encode(table: pa.Table, qis: Sequence[str], sensitive: str) -> Encoded:
    """Check the columns and encode them. Errors name the column at fault."""
    qi_list, dropped = check_columns(table, qis, sensitive)
    return Encoded(
        table=table,
        qis=tuple(_encode(table, q) for q in qi_list),
        sensitive=_encode(table, sensitive),
        dropped=dropped,
    )


def check_columns(
    table: pa.Table, qis: Sequence[str], sensitive: str
) -> tuple[list[str], tuple[str, ...]]:
    """The checks of :func:`encode` on the input table (columns present, no missing values,
    not empty): the QI names and the other columns, which the release drops."""
    import pyarrow as pa

    if not isinstance(table, pa.Table):
        raise InputError(f"expected a pyarrow Table, got {type(table).__name__}")
    if isinstance(qis, str):
        raise InputError("qis must be a list of column names, not one string")
    qi_list = [str(q) for q in qis]
    if not qi_list:
        raise InputError(f"at least one quasi-identifier is required ({opt('qi')})")
    dupes = sorted({q for q in qi_list if qi_list.count(q) > 1})
    if dupes:
        raise InputError(f"quasi-identifier {dupes[0]!r} is given more than once")
    if sensitive in qi_list:
        raise InputError(
            f"column {sensitive!r} cannot be both the sensitive column and a quasi-identifier"
        )
    present = table.column_names
    for col in [*qi_list, sensitive]:
        if col not in present:
            kind = "sensitive column" if col == sensitive else "quasi-identifier"
            raise InputError(f"{kind} {col!r} does not exist (columns: {', '.join(present)})")
        nulls = table.column(col).null_count
        if nulls:
            raise InputError(
                f"column {col!r} has {nulls} missing value(s); fill or drop them first"
            )
    if table.num_rows == 0:
        raise InputError("the input table is empty (0 records)")
    dropped = tuple(c for c in present if c not in qi_list and c != sensitive)
    return qi_list, dropped


def expand(enc: Encoded) -> Encoded:
    """The records of a weighted input, one row each (row ``r`` repeated ``weights[r]``
    times, in row order); row-level input as it is. For the steps that reason about
    individual records of a small table (the algorithm-aware safe mode's possible worlds)
    or place each record on a curve (bucketization); ``table`` stays the distinct tuples."""
    if enc.weights is None:
        return enc
    w = enc.weights

    def rep(c: Column) -> Column:
        return Column(c.name, np.repeat(c.codes, w).astype(np.int64), c.values)

    return Encoded(enc.table, tuple(rep(c) for c in enc.qis), rep(enc.sensitive), enc.dropped)


def combine(columns: Sequence[IntArray], cards: Sequence[int]) -> tuple[IntArray, int]:
    """One integer key per row for a tuple of code columns (mixed radix), re-densified
    whenever the radix product would overflow int64. Returns the keys and their bound."""
    n = int(columns[0].shape[0]) if columns else 0
    key = np.zeros(n, dtype=np.int64)
    bound = 1
    for col, card in zip(columns, cards, strict=True):
        card = max(int(card), 1)
        if bound * card >= 2**62:
            uniq, inverse = np.unique(key, return_inverse=True)
            key = inverse.reshape(-1).astype(np.int64)
            bound = max(int(uniq.shape[0]), 1)
        key = key * card + col
        bound *= card
    return key, bound


def encode_population(table: pa.Table, qis: Sequence[str]) -> tuple[Column, ...]:
    """The QI columns of a population table, encoded as the input's (values as text); errors
    name the option ``population`` and the column."""
    import pyarrow as pa

    if not isinstance(table, pa.Table):
        raise InputError(f"{opt('population')} must be a pyarrow Table, got {type(table).__name__}")
    present = table.column_names
    for col in qis:
        if col not in present:
            raise InputError(
                f"{opt('population')} has no column {col!r} (columns: {', '.join(present)})"
            )
        nulls = table.column(col).null_count
        if nulls:
            raise InputError(
                f"{opt('population')}: column {col!r} has {nulls} missing value(s); fill or drop "
                "them first"
            )
    if table.num_rows == 0:
        raise InputError(f"{opt('population')} is empty (0 records)")
    return tuple(_encode(table, q) for q in qis)
