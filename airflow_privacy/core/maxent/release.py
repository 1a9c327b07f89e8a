"""The published bucketized table as Privacy-MaxEnt sees it (Du et al. 2008, section 3.1).

A bucketized release (Anatomy-style) publishes every record's quasi-identifier (QI) values
and its bucket, and for each bucket the multiset of its sensitive (SA) values. Its
sufficient statistics for the maximum-entropy model are

* ``n(q, b)``: how many records with QI value ``q`` (a tuple over every QI column) bucket
  ``b`` holds, the right-hand sides of the QI-invariants (eq. 4);
* ``n(s, b)``: how many copies of sensitive value ``s`` bucket ``b`` holds, the right-hand
  sides of the SA-invariants (eq. 5).

Probabilities are these counts over ``N``, the number of records. Everything is kept in
*count* units (``N * P``), which keeps the solver's numbers of order one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class BucketRelease:
    """A bucketized release: QI values per bucket and the SA multiset of every bucket.

    ``qi_values[q]`` is the ``q``-th distinct QI tuple (one string per QI column, in
    ``qi_columns`` order, sorted); ``buckets[b]`` the ``b``-th bucket label; ``values[v]``
    the ``v``-th sensitive value. ``qb`` lists ``(q, b, n(q, b))`` for every pair that
    occurs, sorted by bucket then QI value; ``sb[b, v]`` is ``n(s_v, b)``.
    """

    qi_columns: tuple[str, ...]
    sensitive: str
    bucket_column: str
    qi_values: tuple[tuple[str, ...], ...]
    buckets: tuple[str, ...]
    values: tuple[str, ...]
    qb: IntArray
    sb: IntArray

    def __post_init__(self) -> None:
        qb = np.asarray(self.qb, dtype=np.int64).reshape(-1, 3)
        sb = np.asarray(self.sb, dtype=np.int64)
        if sb.shape != (len(self.buckets), len(self.values)):
            raise InputError(
                f"sb has shape {sb.shape}, expected ({len(self.buckets)}, {len(self.values)})"
            )
        if not self.buckets:
            raise InputError("the release has no records")
        if (qb[:, 2] <= 0).any() or (sb < 0).any():
            raise InputError("counts must be positive")
        per_bucket_q = np.bincount(qb[:, 1], weights=qb[:, 2], minlength=len(self.buckets))
        if not np.array_equal(per_bucket_q.astype(np.int64), sb.sum(axis=1)):
            raise InputError("every bucket must hold as many QI values as sensitive values")
        if (sb.sum(axis=1) == 0).any():
            raise InputError("every bucket must hold at least one record")
        order = np.lexsort((qb[:, 0], qb[:, 1]))
        qb = qb[order]
        qb.setflags(write=False)
        sb.setflags(write=False)
        object.__setattr__(self, "qb", qb)
        object.__setattr__(self, "sb", sb)

    # ------------------------------------------------------------------ views
    @property
    def n_records(self) -> int:
        return int(self.sb.sum())

    @property
    def n_buckets(self) -> int:
        return len(self.buckets)

    @cached_property
    def bucket_sizes(self) -> IntArray:
        """``n_b``."""
        out: IntArray = self.sb.sum(axis=1)
        return out

    @cached_property
    def qi_counts(self) -> IntArray:
        """``n(q)``: records with QI value ``q`` over all buckets."""
        out: IntArray = np.bincount(
            self.qb[:, 0], weights=self.qb[:, 2], minlength=len(self.qi_values)
        ).astype(np.int64)
        return out

    @cached_property
    def column_domains(self) -> dict[str, frozenset[str]]:
        """The values every QI column takes in the release."""
        return {c: frozenset(q[j] for q in self.qi_values) for j, c in enumerate(self.qi_columns)}

    @cached_property
    def qi_index(self) -> dict[tuple[str, ...], int]:
        return {q: i for i, q in enumerate(self.qi_values)}

    @cached_property
    def _qi_codes(self) -> tuple[IntArray, tuple[dict[str, int], ...]]:
        """Per QI column: the code of every distinct QI value's entry, and value -> code."""
        maps: list[dict[str, int]] = []
        codes = np.empty((len(self.qi_values), len(self.qi_columns)), dtype=np.int64)
        for j in range(len(self.qi_columns)):
            labels = sorted({q[j] for q in self.qi_values})
            pos = {v: i for i, v in enumerate(labels)}
            codes[:, j] = [pos[q[j]] for q in self.qi_values]
            maps.append(pos)
        return codes, tuple(maps)

    def matching(self, given: Sequence[tuple[str, str]]) -> npt.NDArray[np.bool_]:
        """Mask over QI values ``q`` that agree with ``given`` (``Q_v``, section 4.1); a value
        the column does not take matches nothing."""
        codes, maps = self._qi_codes
        mask = np.ones(len(self.qi_values), dtype=bool)
        pos = {c: j for j, c in enumerate(self.qi_columns)}
        for col, val in given:
            j = pos[col]
            code = maps[j].get(val)
            if code is None:
                return np.zeros(len(self.qi_values), dtype=bool)
            mask &= codes[:, j] == code
        return mask

    def describe_qi(self, q: int) -> str:
        return ", ".join(
            f"{c}={v}" for c, v in zip(self.qi_columns, self.qi_values[q], strict=True)
        )

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_records(
        cls,
        qi_columns: Sequence[str],
        records: Iterable[tuple[Sequence[str], str, str]],
        sensitive: str = "sensitive",
        bucket_column: str = "bucket",
    ) -> BucketRelease:
        """Build from ``(qi tuple, bucket label, sensitive value)`` records (tests, small
        inputs)."""
        qi_cols = _check_columns(qi_columns, sensitive, bucket_column)
        rows = [(tuple(str(v) for v in q), str(b), str(s)) for q, b, s in records]
        for i, (q, _, _) in enumerate(rows):
            if len(q) != len(qi_cols):
                raise InputError(f"record {i} has {len(q)} QI values, expected {len(qi_cols)}")
        return cls.from_counts(qi_cols, [(q, b, v, 1) for q, b, v in rows], sensitive,
                               bucket_column)  # fmt: skip

    @classmethod
    def from_counts(
        cls,
        qi_columns: Sequence[str],
        rows: Iterable[tuple[Sequence[str], str, str, int]],
        sensitive: str = "sensitive",
        bucket_column: str = "bucket",
    ) -> BucketRelease:
        """Build from ``(qi tuple, bucket label, sensitive value, records)`` rows, the
        ``GROUP BY qis, bucket, sensitive`` of a release (a database's counts): the same
        release as :meth:`from_records` on the records they count."""
        qi_cols = _check_columns(qi_columns, sensitive, bucket_column)
        merged: dict[tuple[tuple[str, ...], str, str], int] = {}
        for i, (q, b, v, n) in enumerate(rows):
            key = (tuple(str(x) for x in q), str(b), str(v))
            if len(key[0]) != len(qi_cols):
                raise InputError(f"row {i} has {len(key[0])} QI values, expected {len(qi_cols)}")
            if isinstance(n, bool) or int(n) < 1:
                raise InputError(f"row {i} counts {n!r} records; a count is at least 1")
            merged[key] = merged.get(key, 0) + int(n)
        if not merged:
            raise InputError("the release has no records")
        qis = sorted({q for q, _, _ in merged})
        buckets = sorted({b for _, b, _ in merged}, key=_natural)
        values = sorted({v for _, _, v in merged})
        qpos = {q: i for i, q in enumerate(qis)}
        bpos = {b: i for i, b in enumerate(buckets)}
        vpos = {v: i for i, v in enumerate(values)}
        keys = list(merged)
        weights = np.array([merged[k] for k in keys], dtype=np.int64)
        return cls._from_codes(
            qi_cols,
            sensitive,
            bucket_column,
            tuple(qis),
            tuple(buckets),
            tuple(values),
            np.array([qpos[q] for q, _, _ in keys], dtype=np.int64),
            np.array([bpos[b] for _, b, _ in keys], dtype=np.int64),
            np.array([vpos[v] for _, _, v in keys], dtype=np.int64),
            weights,
        )

    @classmethod
    def from_arrow(
        cls,
        table: pa.Table,
        qi_columns: Sequence[str],
        sensitive: str,
        bucket_column: str,
    ) -> BucketRelease:
        """Count a release held as an Arrow table (values compared as strings)."""
        qi_cols = _check_columns(qi_columns, sensitive, bucket_column)
        present = list(table.column_names)
        for col in (*qi_cols, sensitive, bucket_column):
            if col not in present:
                raise InputError(f"column {col!r} does not exist (columns: {', '.join(present)})")
        if table.num_rows == 0:
            raise InputError("the release is empty (0 records)")
        codes: dict[str, tuple[IntArray, list[str]]] = {}
        for col in (*qi_cols, sensitive, bucket_column):
            codes[col] = string_codes(table, col)
        qi_codes = np.stack([codes[c][0] for c in qi_cols], axis=1)
        uniq, q_idx = np.unique(qi_codes, axis=0, return_inverse=True)
        # sort distinct QI tuples by their labels (codes are in label order per column)
        qis = tuple(
            tuple(codes[c][1][code] for c, code in zip(qi_cols, row, strict=True))
            for row in uniq.tolist()
        )
        b_codes, b_labels = codes[bucket_column]
        s_codes, s_labels = codes[sensitive]
        border = sorted(range(len(b_labels)), key=lambda i: _natural(b_labels[i]))
        brank = np.empty(len(b_labels), dtype=np.int64)
        brank[np.asarray(border, dtype=np.int64)] = np.arange(len(b_labels))
        return cls._from_codes(
            qi_cols,
            sensitive,
            bucket_column,
            qis,
            tuple(b_labels[i] for i in border),
            tuple(s_labels),
            np.asarray(q_idx, dtype=np.int64).ravel(),
            brank[b_codes],
            s_codes,
        )

    @classmethod
    def from_frame(
        cls, frame: pd.DataFrame, qi_columns: Sequence[str], sensitive: str, bucket_column: str
    ) -> BucketRelease:
        import pyarrow as pa

        cols = [*qi_columns, sensitive, bucket_column]
        missing = [c for c in cols if c not in frame.columns]
        if missing:
            raise InputError(
                f"column {missing[0]!r} does not exist (columns: "
                f"{', '.join(str(c) for c in frame.columns)})"
            )
        table = pa.Table.from_pandas(frame[list(dict.fromkeys(cols))], preserve_index=False)
        return cls.from_arrow(table, qi_columns, sensitive, bucket_column)

    @classmethod
    def _from_codes(
        cls,
        qi_cols: tuple[str, ...],
        sensitive: str,
        bucket_column: str,
        qis: tuple[tuple[str, ...], ...],
        buckets: tuple[str, ...],
        values: tuple[str, ...],
        q_idx: IntArray,
        b_idx: IntArray,
        s_idx: IntArray,
        weights: IntArray | None = None,
    ) -> BucketRelease:
        """``weights[r]``: the records of row ``r`` (one each when ``None``)."""
        nq, nb, nv = len(qis), len(buckets), len(values)
        if weights is None:
            qb_flat = (
                np.bincount(b_idx * nq + q_idx, minlength=nb * nq) if nb * nq < 1 << 26 else None
            )
            if qb_flat is not None:
                nz = np.flatnonzero(qb_flat)
                qb = np.stack([nz % nq, nz // nq, qb_flat[nz]], axis=1)
            else:
                keys, cnt = np.unique(b_idx * nq + q_idx, return_counts=True)
                qb = np.stack([keys % nq, keys // nq, cnt], axis=1)
            sb = np.bincount(b_idx * nv + s_idx, minlength=nb * nv).reshape(nb, nv)
        else:
            keys, inverse = np.unique(b_idx * nq + q_idx, return_inverse=True)
            cnt = np.bincount(inverse.ravel(), weights=weights).astype(np.int64)
            qb = np.stack([keys % nq, keys // nq, cnt], axis=1)
            sb = (
                np.bincount(b_idx * nv + s_idx, weights=weights, minlength=nb * nv)
                .astype(np.int64)
                .reshape(nb, nv)
            )
        return cls(qi_cols, sensitive, bucket_column, qis, buckets, values, qb, sb)


def string_codes(table: pa.Table, column: str) -> tuple[IntArray, list[str]]:
    """Codes ``0..k-1`` of a column's values taken as strings, labels sorted."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = table.column(column)
    if col.null_count:
        raise InputError(
            f"column {column!r} has {col.null_count} missing value(s); fill or drop them first"
        )
    if not pa.types.is_string(col.type) and not pa.types.is_large_string(col.type):
        col = pc.cast(col, pa.string())
    enc = pc.dictionary_encode(col).combine_chunks()
    labels = [str(v) for v in enc.dictionary.to_pylist()]
    raw = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    order = sorted(range(len(labels)), key=labels.__getitem__)
    rank = np.empty(len(labels), dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(labels))
    return rank[raw], [labels[i] for i in order]


def _check_columns(
    qi_columns: Sequence[str], sensitive: str, bucket_column: str
) -> tuple[str, ...]:
    qi_cols = tuple(qi_columns)
    if not qi_cols:
        raise InputError("at least one quasi-identifier column is required")
    dupes = sorted({c for c in qi_cols if qi_cols.count(c) > 1})
    if dupes:
        raise InputError(f"QI column {dupes[0]!r} is given more than once")
    for c in (sensitive, bucket_column):
        if c in qi_cols:
            raise InputError(
                f"column {c!r} cannot be both a QI column and the {_role(c, sensitive)}"
            )
    if sensitive == bucket_column:
        raise InputError(f"column {sensitive!r} cannot be both the sensitive and the bucket column")
    return qi_cols


def _role(col: str, sensitive: str) -> str:
    return "sensitive column" if col == sensitive else "bucket column"


def _natural(label: str) -> tuple[int, int | str]:
    """Sort key: numeric labels numerically, then the others as text."""
    try:
        return (0, int(label))
    except ValueError:
        return (1, label)
