"""The one row-level pass of an in-process anonymization: the histogram of the input, and
the recoding applied to its rows with Arrow.

An anonymizer decides from the histogram of distinct ``(QI..., sensitive)`` tuples with
their record counts (the sufficient statistics: LeFevre et al. 2006 and Martin et al. 2007,
section 2.1, read only counts) and returns a
:class:`~airflow_privacy.core.anonymize.plan.Recoding`. This module is the Arrow backend of
that contract: :func:`table_histogram` counts a table (the ``GROUP BY`` a warehouse would
run), :func:`canonical` puts any backend's histogram in one order (rows sorted by the text
of their values, so the decision does not depend on the order a backend lists its groups),
and :func:`apply_recoding` maps each record to its group's published labels, removes the
suppressed ones and shuffles the rows with the seed. :func:`recoding_bucketization` gives
the release's per-group counts from the histogram and the recoding alone, which is what
the written release is re-checked against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.anonymize.encoding import (
    Encoded,
    _encode,
    check_columns,
    combine,
    encode,
)
from airflow_privacy.core.anonymize.plan import TableHistogram

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.anonymize.plan import HistogramLike, Recoding
    from airflow_privacy.core.model import Bucketization

IntArray = npt.NDArray[np.int64]


def table_histogram(
    table: pa.Table, qis: Sequence[str], sensitive: str
) -> tuple[TableHistogram, IntArray]:
    """The histogram of ``table`` and, for every record, its histogram row.

    Tuples are told apart by the text of their values, as every step compares values
    (:mod:`.encoding`); ``keys`` holds the first record's typed values of each tuple.
    Errors (missing columns or values, no records) are those of :func:`encode`."""
    qi_list, dropped = check_columns(table, qis, sensitive)
    names = [*qi_list, sensitive]
    cols = [_encode(table, c) for c in names]
    key, _ = combine([c.codes for c in cols], [len(c.values) for c in cols])
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    row_of = inverse.reshape(-1).astype(np.int64)
    counts = np.bincount(row_of, minlength=first.shape[0]).astype(np.int64)
    keys = table.select(names).take(first.astype(np.int64))
    return TableHistogram(tuple(qi_list), sensitive, keys, counts, dropped), row_of


def canonical(hist: HistogramLike) -> tuple[Encoded, IntArray]:
    """The anonymizers' input from a histogram, rows sorted by the text of their values
    (QIs in order, then the sensitive value; Python's order of text), and that order:
    ``order[i]`` is the histogram row of encoded row ``i``. Every backend's histogram of the
    same data gives the same encoded input, hence the same decision."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = [*hist.qis, hist.sensitive]
    counts = np.asarray(hist.counts, dtype=np.int64).reshape(-1)
    if counts.shape[0] != hist.keys.num_rows or (counts < 1).any():
        raise RuntimeError("a histogram needs one count >= 1 per distinct tuple")
    present = hist.keys.column_names
    text = pa.table(
        {
            f"c{i}": (
                hist.keys.column(c)
                if c not in present or hist.keys.column(c).type == pa.string()
                else pc.cast(hist.keys.column(c), pa.string())
            )
            for i, c in enumerate(names)
            if c in present
        }
    )
    if text.num_columns == len(names) and text.num_rows:
        order = np.asarray(
            pc.sort_indices(text, sort_keys=[(f"c{i}", "ascending") for i in range(len(names))]),
            dtype=np.int64,
        )
    else:  # a missing column: encode() names it
        order = np.arange(hist.keys.num_rows, dtype=np.int64)
    enc = encode(hist.keys.take(order) if order.size else hist.keys, hist.qis, hist.sensitive)
    cols = [*enc.qis, enc.sensitive]
    key, _ = combine([c.codes for c in cols], [len(c.values) for c in cols])
    if key.shape[0] > 1 and (key[1:] == key[:-1]).any():
        # two rows whose values read the same as text: the decision could not tell them
        # apart, and a recoding of one would not reach the other's records
        raise RuntimeError(
            "the histogram lists one (quasi-identifiers, sensitive) tuple twice (rows whose "
            "values have the same text): the backend must group by the text of the values"
        )
    return replace(enc, dropped=hist.dropped, weights=counts[order]), order


def to_histogram_rows(recoding: Recoding, order: IntArray) -> Recoding:
    """A recoding of the :func:`canonical` rows as one of the histogram's own rows (sorted
    by row, a row's entries in their order)."""
    rows = order[recoding.row]
    by_row = np.argsort(rows, kind="stable")
    return replace(
        recoding,
        row=rows[by_row].astype(np.int64),
        group=recoding.group[by_row].astype(np.int64),
        count=recoding.count[by_row].astype(np.int64),
    )


def record_groups(row_of: IntArray, recoding: Recoding) -> IntArray:
    """The group of every record (-1: suppressed), ``row_of[r]`` being record ``r``'s
    histogram row: a row's records, in record order, fill its recoding entries in order
    (``count[i]`` records to ``group[i]``); records beyond the listed counts are suppressed
    (:class:`~airflow_privacy.core.anonymize.plan.Recoding`)."""
    n = int(row_of.shape[0])
    out = np.full(n, -1, dtype=np.int64)
    if n == 0 or recoding.row.shape[0] == 0:
        return out
    order = np.argsort(row_of, kind="stable")
    h = row_of[order]
    rank = np.arange(n, dtype=np.int64) - np.searchsorted(h, h, side="left")
    cc = np.concatenate([[0], np.cumsum(recoding.count)]).astype(np.int64)
    base = cc[np.searchsorted(recoding.row, h, side="left")]
    total = cc[np.searchsorted(recoding.row, h, side="right")] - base
    kept = rank < total
    entry = np.searchsorted(cc, base + rank, side="right") - 1
    entry = np.clip(entry, 0, recoding.group.shape[0] - 1)
    out[order] = np.where(kept, recoding.group[entry], -1)
    return out


def histogram_rows(table: pa.Table, hist: HistogramLike) -> IntArray:
    """Every record's histogram row, found by joining the table to the histogram's keys on
    the text of the values (as :func:`table_histogram` tells tuples apart)."""
    names = [*hist.qis, hist.sensitive]
    keys = {c.name: c for c in (_encode(hist.keys, c) for c in names)}
    recs = {c: _encode(table, c) for c in names}
    index: list[IntArray] = []
    for c in names:
        pos = {v: i for i, v in enumerate(keys[c].values)}
        lookup = np.asarray([pos.get(v, -1) for v in recs[c].values], dtype=np.int64)
        mapped = lookup[recs[c].codes] if recs[c].codes.size else recs[c].codes
        if (mapped < 0).any():
            raise RuntimeError("the histogram does not cover the table")
        index.append(mapped)
    cards = [len(keys[c].values) for c in names]
    rec_key, _ = combine(index, cards)
    hist_key, _ = combine([keys[c].codes for c in names], cards)
    sorter = np.argsort(hist_key, kind="stable")
    at = np.searchsorted(hist_key[sorter], rec_key)
    at = np.clip(at, 0, max(sorter.shape[0] - 1, 0))
    if sorter.shape[0] == 0 or (hist_key[sorter][at] != rec_key).any():
        raise RuntimeError("the histogram does not cover the table")
    return sorter[at].astype(np.int64)


def apply_recoding(
    table: pa.Table,
    hist: HistogramLike,
    recoding: Recoding,
    seed: int,
    *,
    row_of: IntArray | None = None,
    column_types: Mapping[str, pa.DataType] | None = None,
    within_groups: bool = False,
) -> tuple[pa.Table, IntArray]:
    """The release of ``table`` under ``recoding`` and the input row of each release row.

    Columns: every QI (its group labels when the recoding publishes it, else the values as
    they are), then the recoding's other columns (``column_types`` casts their text labels,
    e.g. a bucket number to ``int64``), then the sensitive column as it is. Suppressed
    records are removed. Rows come in a seeded random order (the input order is not
    published): a permutation of the kept records; with ``within_groups`` (Anatomy's
    one-table form, Xiao & Tao 2006, section 3) rows are sorted by group, shuffled within,
    and the sensitive values are shuffled within each group independently of the QIs.
    ``row_of`` (every record's histogram row) is found by a join when not given."""
    rows_of = histogram_rows(table, hist) if row_of is None else row_of
    group = record_groups(rows_of, recoding)
    return release_of_groups(
        table, hist.qis, hist.sensitive, group, recoding, seed,
        column_types=column_types, within_groups=within_groups,
    )  # fmt: skip


def release_of_groups(
    table: pa.Table,
    qis: Sequence[str],
    sensitive: str,
    group: IntArray,
    recoding: Recoding,
    seed: int,
    *,
    column_types: Mapping[str, pa.DataType] | None = None,
    within_groups: bool = False,
) -> tuple[pa.Table, IntArray]:
    """:func:`apply_recoding` once every record's group is known (``group[r]``, -1:
    suppressed; :func:`record_groups`)."""
    import pyarrow as pa

    kept = np.flatnonzero(group >= 0).astype(np.int64)
    rng = np.random.default_rng(seed)
    if within_groups:
        g = group[kept]
        rows = kept[np.lexsort((rng.random(kept.shape[0]), g))].astype(np.int64)
        s_rows = kept[np.lexsort((rng.random(kept.shape[0]), g))].astype(np.int64)
    else:
        rows = rng.permutation(kept).astype(np.int64)
        s_rows = rows
    types = dict(column_types or {})
    published = set(recoding.columns)
    out: dict[str, pa.Array | pa.ChunkedArray] = {}
    at = pa.array(group[rows])

    def labels(j: int) -> pa.Array:
        name = recoding.columns[j]
        arr = pa.array([lab[j] for lab in recoding.labels], type=pa.string())
        return arr.cast(types[name]) if name in types else arr

    col_index = {c: j for j, c in enumerate(recoding.columns)}
    take = pa.array(rows)
    for q in qis:
        out[q] = labels(col_index[q]).take(at) if q in published else table.column(q).take(take)
    for c in recoding.columns:
        if c not in qis:
            out[c] = labels(col_index[c]).take(at)
    out[sensitive] = table.column(sensitive).take(pa.array(s_rows))
    return pa.table(out), rows


def row_level(recoding: Recoding, group: IntArray) -> Recoding:
    """The recoding of a table's own rows (one entry per published record, count 1) from
    every record's group: the decision expressed on the input table itself."""
    kept = np.flatnonzero(group >= 0).astype(np.int64)
    return replace(
        recoding, row=kept, group=group[kept].astype(np.int64),
        count=np.ones(kept.shape[0], dtype=np.int64),
    )  # fmt: skip


def recoding_bucketization(enc: Encoded, recoding: Recoding) -> Bucketization:
    """The release's per-group counts from the histogram ``enc`` and a recoding of its rows
    (groups named by their published labels, sensitive values no published record has
    dropped, normalized order: what ``check --group`` counts on the written release)."""
    from airflow_privacy.core.model import Bucketization

    v = len(enc.sensitive.values)
    n_groups = len(recoding.labels)
    s = enc.sensitive.codes[recoding.row]
    flat = np.bincount(
        recoding.group * v + s, weights=recoding.count, minlength=max(n_groups, 1) * v
    )
    counts = np.rint(flat).astype(np.int64).reshape(-1, v)[:n_groups]
    rows = np.flatnonzero(counts.sum(axis=1) > 0)
    cols = np.flatnonzero(counts.sum(axis=0) > 0)
    b = Bucketization(
        recoding.columns,
        enc.sensitive.name,
        tuple(recoding.labels[int(g)] for g in rows),
        tuple(enc.sensitive.values[int(x)] for x in cols),
        np.ascontiguousarray(counts[np.ix_(rows, cols)]),
    )
    return b.normalized()
