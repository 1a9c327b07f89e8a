"""Writing an anonymized release where the data lives: DuckDB applies a recoding to the file.

An anonymizer decides from the histogram of the input's distinct ``(QI..., sensitive)``
tuples (:class:`~airflow_privacy.core.backends.histogram.Histogram`) and returns a
:class:`~airflow_privacy.core.anonymize.plan.Recoding`: ``count[i]`` records of histogram row
``row[i]`` go to published group ``group[i]``, whose published values are
``labels[group[i]]``; records not listed are suppressed. Applying it is a per-record
function of the record's own values (LeFevre et al. 2006, section 3: a recoding is a
function of the quasi-identifier tuple; Xiao and Tao 2006, section 3: a bucketization
assigns each record to a bucket), so DuckDB evaluates it on the file with one query and
writes the release itself with ``COPY (SELECT ...) TO target``; rows never pass through
Python.

The query joins the file's records to a *key table* registered from Arrow (the histogram's
typed key columns and the row number ``r``). When every listed histogram row goes whole to
one group, the key table also carries the group and one join applies the recoding. When a
row is split over several groups (bucketization) or published in part, the records of each
key are numbered (``ROW_NUMBER() OVER (PARTITION BY r)``: they are identical in every
published column, so any order gives the same release) and joined on the count ranges
``lo < rn <= hi`` of an *assignment table*. The group's labels come from a *label table*.

Output columns: the recoding's columns (its text labels), then the sensitive column as the
text the anonymizers saw (:meth:`Histogram.encoded`: Arrow's cast to text), with blank cells
published as ``missing_as`` exactly as the Arrow path fills them. A float key is joined
with its sign as well (SQL finds ``-0.0 = 0.0``; the histogram keeps them apart).

SQL safety: the source is read through :mod:`airflow_privacy.core.backends.duck`'s private
link and bound parameters; the target is an absolute path written as a SQL string literal
(its single quotes doubled), so it is never a glob, a ``~`` or a URL; column names are
quoted identifiers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

    from airflow_privacy.core.anonymize.plan import Recoding
    from airflow_privacy.core.backends.histogram import Histogram

OUTPUT_FORMATS = ("parquet", "csv")
WINDOW_MEMORY = "500MB"
"""DuckDB's memory limit while it numbers the records of split rows (a window over every
record, which it holds in memory unless told to spill to its private folder)."""


def write_release(
    path: Path,
    histogram: Histogram,
    recoding: Recoding,
    target: Path,
    *,
    fmt: Any = None,
    delimiter: str | None = None,
    missing_as: str | None = None,
    output_format: str = "parquet",
    progress: Callable[[str], None] | None = None,
) -> int:
    """Apply ``recoding`` to the file ``path`` (whose histogram is ``histogram``) and write
    the release to exactly ``target`` as ``output_format`` (``parquet`` or ``csv``);
    returns the records written (module doc)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from airflow_privacy.core.backends.duck_source import (
        connection,
        csv_source,
        parquet_source,
        private_link,
        quote_identifier,
        run,
    )
    from airflow_privacy.core.cells import check_missing_as
    from airflow_privacy.core.io import _existing_file, detect_format
    from airflow_privacy.core.model import ReleaseSpec

    if output_format not in OUTPUT_FORMATS:
        raise InputError(
            f"output_format must be one of {', '.join(OUTPUT_FORMATS)}, got {output_format!r}"
        )
    replacement = check_missing_as(missing_as)
    _check_recoding(histogram, recoding)
    p = _existing_file(path)
    kind = fmt or detect_format(p)
    spec = ReleaseSpec(sensitive=histogram.sensitive, group_columns=histogram.qis)
    out = Path(target).resolve()
    if progress is not None:
        progress(f"writing {target} (DuckDB)")
    q = len(histogram.qis)
    keys = histogram.keys
    s_text = keys.column(histogram.sensitive)
    if s_text.type != pa.string():
        s_text = pc.cast(s_text, pa.string())
    whole = _whole_rows(histogram, recoding)
    key_cols: dict[str, Any] = {f"k{i}": keys.column(i) for i in range(q)}
    key_cols["ks"] = keys.column(q)
    key_cols["st"] = s_text
    key_cols["r"] = pa.array(np.arange(keys.num_rows, dtype=np.int64))
    if whole is not None:
        key_cols["g"] = pa.array(whole)
    key_table = pa.table(key_cols)
    label_cols: dict[str, Any] = {"g": pa.array(np.arange(len(recoding.labels), dtype=np.int64))}
    for j in range(len(recoding.columns)):
        label_cols[f"l{j}"] = pa.array([lab[j] for lab in recoding.labels], type=pa.string())
    label_table = pa.table(label_cols)
    names = [*recoding.columns, histogram.sensitive]
    if len(set(names)) != len(names):
        raise InputError(
            f"the recoding's columns and the sensitive column {histogram.sensitive!r} "
            "must have different names"
        )
    with private_link(p, kind) as link, connection() as con:
        source = (
            parquet_source(p, link, spec)
            if kind == "parquet"
            else csv_source(p, link, spec, delimiter)
        )
        con.register("keymap", key_table)
        con.register("labelmap", label_table)
        src_cols = [f"{e} AS k{i}" for i, e in enumerate(source.exprs[:-1])]
        conds = []
        for i in range(q):
            conds.append(f"src.k{i} = m.k{i}")
            if pa.types.is_floating(keys.column(i).type):
                conds.append(f"signbit(src.k{i}) = signbit(m.k{i})")
        if replacement is None:
            src_cols.append(f"{source.exprs[-1]} AS ks")
            conds.append("src.ks = m.ks")
            if pa.types.is_floating(keys.column(q).type):
                conds.append("signbit(src.ks) = signbit(m.ks)")
            sjoin = ""
        else:
            # the published text of each distinct raw sensitive value, blanks replaced as
            # the histogram replaced them (a second, one-column pass; only with missing_as)
            con.register("smap", _published_values(con, source, p, kind, replacement))
            src_cols.append(f"{source.exprs[-1]} AS raw")
            sjoin = "JOIN smap ON src.raw IS NOT DISTINCT FROM smap.raw"
            conds.append("smap.pub = m.st")
        on = " AND ".join(conds)
        select_out = ", ".join(
            [
                *(f"lab.l{j} AS {quote_identifier(c)}" for j, c in enumerate(recoding.columns)),
                f"m_st AS {quote_identifier(histogram.sensitive)}",
            ]
        )
        src = f"(SELECT {', '.join(src_cols)} FROM {source.clause}) AS src"
        if whole is not None:
            query = (
                f"SELECT {select_out} FROM (SELECT m.g AS m_g, m.st AS m_st FROM {src} "
                f"{sjoin} JOIN keymap AS m ON {on} WHERE m.g >= 0) AS rec "
                "JOIN labelmap AS lab ON rec.m_g = lab.g"
            )
        else:
            con.register("assign", _assignment(recoding))
            con.sql(f"SET memory_limit = '{WINDOW_MEMORY}'")
            query = (
                f"SELECT {select_out} FROM (SELECT m.r AS m_r, m.st AS m_st, "
                f"row_number() OVER (PARTITION BY m.r) AS rn FROM {src} {sjoin} "
                f"JOIN keymap AS m ON {on}) AS rec "
                "JOIN assign AS a ON rec.m_r = a.r AND rec.rn > a.lo AND rec.rn <= a.hi "
                "JOIN labelmap AS lab ON a.g = lab.g"
            )
        literal = "'" + str(out).replace("'", "''") + "'"
        options = "FORMAT parquet" if output_format == "parquet" else "FORMAT csv, HEADER true"
        written = run(con, f"COPY ({query}) TO {literal} ({options})", source.params, p, kind)
    return _records(written, recoding)


def _check_recoding(histogram: Histogram, recoding: Recoding) -> None:
    """The recoding fits the histogram: rows in range, counts within each row's records,
    groups labelled in every published column."""
    rows = histogram.keys.num_rows
    r, g, c = recoding.row, recoding.group, recoding.count
    if not (r.shape == g.shape == c.shape):
        raise InputError("the recoding's row, group and count arrays differ in length")
    if r.shape[0] and (int(r.min()) < 0 or int(r.max()) >= rows):
        raise InputError("the recoding names a histogram row that does not exist")
    if g.shape[0] and (int(g.min()) < 0 or int(g.max()) >= len(recoding.labels)):
        raise InputError("the recoding names a group that has no labels")
    if c.shape[0] and int(c.min()) < 1:
        raise InputError("the recoding assigns fewer than one record")
    per_row = np.bincount(r, weights=c, minlength=rows).astype(np.int64)
    if np.any(per_row > histogram.counts):
        raise InputError("the recoding publishes more records of a tuple than it has")
    width = len(recoding.columns)
    if any(len(lab) != width for lab in recoding.labels):
        raise InputError("a group's labels do not match the recoding's columns")


def _whole_rows(histogram: Histogram, recoding: Recoding) -> Any:
    """Each histogram row's group (-1: suppressed) when every listed row goes whole to
    one group (one join applies the recoding), else ``None``."""
    if not recoding.one_group_per_row:
        return None
    if np.any(recoding.count != histogram.counts[recoding.row]):
        return None
    g = np.full(histogram.keys.num_rows, -1, dtype=np.int64)
    g[recoding.row] = recoding.group
    return g


def _assignment(recoding: Recoding) -> pa.Table:
    """``(r, lo, hi, g)``: the records numbered ``lo < rn <= hi`` of histogram row ``r``
    go to group ``g`` (cumulative counts within each row, in the recoding's order)."""
    import pyarrow as pa

    order = np.argsort(recoding.row, kind="stable")
    r = recoding.row[order]
    c = recoding.count[order]
    hi = np.cumsum(c)
    starts = np.r_[True, r[1:] != r[:-1]] if r.shape[0] else np.zeros(0, bool)
    base = np.maximum.accumulate(np.where(starts, hi - c, 0)) if r.shape[0] else hi
    return pa.table(
        {
            "r": pa.array(r),
            "lo": pa.array(hi - c - base),
            "hi": pa.array(hi - base),
            "g": pa.array(recoding.group[order]),
        }
    )


def _published_values(
    con: duckdb.DuckDBPyConnection, source: Any, path: Path, kind: str, replacement: str
) -> pa.Table:
    """``(raw, pub)``: each distinct raw sensitive value and its published text (blank
    cells, by :func:`airflow_privacy.core.io.blank_mask`, as ``replacement``; others as
    Arrow's cast to text, as :meth:`Histogram.encoded` labels them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from airflow_privacy.core.backends.duck_source import as_in_file, run
    from airflow_privacy.core.io import blank_mask

    found = run(
        con,
        f"SELECT DISTINCT {source.exprs[-1]} AS raw FROM {source.clause}",
        source.params,
        path,
        kind,
    )
    typed = as_in_file(found, ["raw"], [source.types[-1]])
    col, blank, _ = blank_mask(typed.column("raw"))
    text = col if col.type == pa.string() else pc.cast(col, pa.string())
    pub = pc.if_else(blank, pa.scalar(replacement, pa.string()), text)
    return pa.table({"raw": found.column("raw"), "pub": pub})


def _records(written: pa.Table, recoding: Recoding) -> int:
    """The records ``COPY`` wrote (its count), which must be the recoding's."""
    n = int(written.column(0)[0].as_py()) if written.num_rows else -1
    if n != recoding.records:  # pragma: no cover - a join that lost or duplicated records
        raise RuntimeError(f"DuckDB wrote {n} records, the recoding publishes {recoding.records}")
    return n
