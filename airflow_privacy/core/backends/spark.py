"""The Spark backend: the one row-level pass of a step, run by Spark where the data lives.

Every engine works on sufficient statistics (Martin et al., "Worst-Case Background
Knowledge for Privacy-Preserving Data Publishing", ICDE 2007, section 2.1: the counts
``n_b(s)``; LeFevre et al., "Mondrian Multidimensional K-Anonymity", ICDE 2006, section 4,
and the lattice search read only the counts of the distinct QI tuples). Spark computes them
with one ``groupBy(...).count()``; only the distinct tuples and their counts are collected
to the driver's Python (:func:`histogram`, :func:`count`). An anonymization's decision, a
:class:`~airflow_privacy.core.anonymize.plan.Recoding`, is applied by Spark too
(:func:`write_release`): a small mapping table (the histogram's typed keys, the published
labels, and for a row split over several groups the ranges of its records) is broadcast
and joined with the source, and the release is written as a Parquet dataset or a Spark
table. docs/spark.md says how to run it (local mode, a cluster, Spark Connect).

The input checks and the labels are those of the file path (:mod:`airflow_privacy.core.io`):

* a quasi-identifier or group column with a null is refused ("column 'x' has N missing
  value(s)"); a blank sensitive cell (null, or text that is empty after Arrow's
  ``utf8_trim_whitespace``) is refused naming the source and, for a Parquet file, the data
  row of the first, or replaced by ``missing_as`` (non-text values then become text, as
  :func:`airflow_privacy.core.io.fill_blanks` makes them);
* columns of nested or binary types are refused as the Parquet reader refuses them;
* the blank test and the labels are computed by the same Arrow functions, on the distinct
  values Spark returns (never by Spark's own casts, whose text differs: Spark writes the
  double ``1.0`` as ``1.0``, Arrow as ``1``);
* SQL groups ``-0.0`` with ``0.0``; the query also groups by the sign of a float zero, as
  the Arrow path keeps them apart;
* a Parquet file is read with the types its schema declares: Spark's values are cast back
  to them (an unsigned integer, which Spark widens; a timestamp's zone).

Column names never enter an expression: the source's columns are renamed by position
(``c0``, ``c1``, ...), so any text is a name. pyspark is imported only inside functions.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from airflow_privacy.core.io import check_utf8
from airflow_privacy.errors import InputError, opt

if TYPE_CHECKING:
    import numpy.typing as npt
    import pyarrow as pa

    from airflow_privacy.core.anonymize.plan import Recoding
    from airflow_privacy.core.backends.histogram import Histogram
    from airflow_privacy.core.dp.marginals import Summed
    from airflow_privacy.core.model import Bucketization, ReleaseSpec

Progress = Callable[[str], None] | None
WriteMode = Literal["table", "parquet"]
WRITE_MODES: tuple[str, ...] = ("table", "parquet")
_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}")
"""A table to write: plain identifiers only, so the name is never SQL."""
_GLOB = re.compile(r"[*?\[\]{}\\]")
"""Characters of a path that Spark (Hadoop's file system) reads as a glob pattern."""


@dataclass(frozen=True)
class _Frame:
    """A source as Spark reads it: ``df`` with its columns renamed ``c0, c1, ...``;
    ``position[name]`` the index of a source column; ``name`` the source in messages;
    ``file`` a single Parquet file (for the data row of an error); ``types`` the Arrow type
    each column has in the Parquet file, where there is one."""

    df: Any
    position: dict[str, int]
    name: str
    file: Path | None
    types: dict[str, Any]


def _session(spark: Any, source: Any) -> Any:
    from pyspark.sql import DataFrame, SparkSession

    if spark is not None:
        return spark
    if isinstance(source, DataFrame):
        return source.sparkSession
    active = SparkSession.getActiveSession()
    if active is None:
        raise InputError("no Spark session: pass spark= (a SparkSession, local or Spark Connect)")
    return active


def _frame(source: Any, spark: Any) -> _Frame:
    """``source`` (a DataFrame, a Parquet file or dataset folder as a :class:`Path`, or a
    table name) as a :class:`_Frame`; the schema checked as the file readers check it."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import DataFrame

    file: Path | None = None
    types: dict[str, Any] = {}
    if isinstance(source, DataFrame):
        df, name = source, "the DataFrame"
    elif isinstance(source, Path):
        from airflow_privacy.core.io import _reading, column_names

        if _GLOB.search(str(source)):
            raise InputError(
                f"release path {str(source)!r} holds a character Spark reads as a pattern "
                "(* ? [ ] { } \\): rename it, or pass spark.read.parquet(...) yourself"
            )
        if not source.exists():
            raise InputError(f"release file {str(source)!r} does not exist")
        name = source.name
        if source.is_file():
            import pyarrow.parquet as pq

            column_names(source, "parquet")  # a Parquet file with unique column names
            with _reading(source, "parquet"):
                schema = pq.read_schema(source)
            file = source
            types = {f.name: f.type for f in schema}
        session = _session(spark, source)
        try:
            df = session.read.parquet(str(source))
        except AnalysisException:
            raise InputError(f"cannot read {str(source)!r} as parquet") from None
    elif isinstance(source, str):
        session = _session(spark, source)
        name = f"table {source!r}"
        try:
            df = session.table(source)
        except AnalysisException:
            raise InputError(f"table {source!r} does not exist in the Spark catalog") from None
    else:
        raise InputError(
            f"a Spark source is a DataFrame, a Parquet path or a table name, got "
            f"{type(source).__name__}"
        )
    names = [str(c) for c in df.columns]
    seen: set[str] = set()
    for c in names:
        if c in seen:
            raise InputError(f"column {c!r} appears more than once in {name}")
        seen.add(c)
    renamed = df.toDF(*[f"c{i}" for i in range(len(names))])
    return _Frame(renamed, {c: i for i, c in enumerate(names)}, name, file, types)


def _check_types(frame: _Frame, columns: Sequence[str]) -> None:
    """Refuse a column whose values cannot be labels (nested or binary), as
    :func:`airflow_privacy.core.io._check_parquet_type` does."""
    from pyspark.sql import types as T

    schema = frame.df.schema
    for name in columns:
        kind = schema[f"c{frame.position[name]}"].dataType
        nested = isinstance(kind, T.ArrayType | T.MapType | T.StructType)
        if nested or isinstance(kind, T.BinaryType):
            what = "a nested type" if nested else "a binary type"
            raise InputError(
                f"column {name!r} of {frame.name} has type {kind.simpleString()} ({what}), "
                "which cannot be read as labels; store it as text or numbers"
            )


def _is_float(frame: _Frame, name: str) -> bool:
    from pyspark.sql import types as T

    kind = frame.df.schema[f"c{frame.position[name]}"].dataType
    return isinstance(kind, T.FloatType | T.DoubleType)


def _negative_zero(column: Any) -> Any:
    """Whether a float cell is ``-0.0`` (Spark's text of it starts with a minus)."""
    from pyspark.sql import functions as F

    return (column == F.lit(0.0)) & column.cast("string").startswith("-")


def _distinct(frame: _Frame, columns: Sequence[str], progress: Progress) -> pa.Table:
    """One ``groupBy(columns).count()`` in Spark, collected as Arrow: columns ``k0..``, the
    sign flags ``z{i}`` of float zeros and the count ``n``; values in the file's types."""
    from pyspark.sql import functions as F

    keys = []
    for i, name in enumerate(columns):
        col = F.col(f"c{frame.position[name]}")
        keys.append(col.alias(f"k{i}"))
        if _is_float(frame, name):
            keys.append(_negative_zero(col).alias(f"z{i}"))
    if progress is not None:
        progress(f"counting {frame.name} (Spark)")
    table: pa.Table = frame.df.groupBy(*keys).agg(F.count(F.lit(1)).alias("n")).toArrow()
    check_utf8(table, frame.name, {f"k{i}": c for i, c in enumerate(columns)}, data_rows=False)
    return _as_declared(table, columns, frame)


def _as_declared(table: pa.Table, columns: Sequence[str], frame: _Frame) -> pa.Table:
    """Spark's columns with the sign of float zeros restored, in the types the Parquet file
    declares where Spark reads them otherwise (module doc)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for i, name in enumerate(columns):
        key = f"k{i}"
        idx = table.column_names.index(key)
        col = table.column(key)
        if f"z{i}" in table.column_names:
            col = pc.if_else(table.column(f"z{i}"), pc.negate(pc.abs(col)), col)
        declared = frame.types.get(name)
        if declared is not None and pa.types.is_dictionary(declared):
            declared = declared.value_type
        if declared is not None and col.type != declared:
            with contextlib.suppress(pa.ArrowInvalid, pa.ArrowNotImplementedError):
                col = pc.cast(col, declared)
        table = table.set_column(idx, key, col)
    drop = [c for c in table.column_names if c.startswith("z")]
    return table.drop_columns(drop) if drop else table


def _first_blank(frame: _Frame, sensitive: str, raw_blanks: list[Any]) -> str:
    """Where the first blank sensitive cell is: the data row of a Parquet file (a second
    query, only on this error path; the blank values are literals of the plan, never
    SQL text), else the source."""
    from pyspark.sql import functions as F

    if frame.file is None:
        return f"a row of {frame.name}"
    df = frame.df.sparkSession.read.parquet(str(frame.file))
    cell = F.col(f"`{sensitive.replace('`', '``')}`")
    test = cell.isNull()
    if raw_blanks:
        test = test | cell.isin(raw_blanks)
    row = df.where(test).agg(F.min(F.col("_metadata.row_index"))).collect()[0][0]
    return f"data row {int(row) + 1}" if row is not None else f"a row of {frame.name}"


def _fill(
    table: pa.Table, frame: _Frame, sensitive: str, missing_as: str | None
) -> tuple[pa.Table, bool]:
    """The sensitive column ``k{last}`` with its blank cells replaced (``missing_as``) or
    refused, exactly as :func:`airflow_privacy.core.io.fill_blanks` does; whether any was
    replaced."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from airflow_privacy.core.cells import blank_cells_message
    from airflow_privacy.core.io import blank_mask

    key = table.column_names[-2]  # the sensitive key; the count "n" is last
    col, blank, textual = blank_mask(table.column(key))
    records = int(pc.sum(pc.filter(table.column("n"), blank)).as_py() or 0)
    if records == 0:
        return table, False
    if missing_as is None:
        shown = pc.filter(col, pc.and_kleene(blank, pc.is_valid(col)))
        raw = [v for v in shown.to_pylist()] if textual else []
        first = _first_blank(frame, sensitive, raw)
        raise InputError(blank_cells_message(sensitive, frame.name, records, first))
    if not textual:
        col = pc.cast(col, pa.string())
    col = pc.if_else(blank, pa.scalar(missing_as, col.type), col)
    return table.set_column(table.column_names.index(key), key, col), True


def _refuse_nulls(table: pa.Table, names: Sequence[str]) -> None:
    """A null in a quasi-identifier or group column is refused, counting its records."""
    import pyarrow.compute as pc

    for i, name in enumerate(names):
        mask = pc.is_null(table.column(f"k{i}"))
        nulls = int(pc.sum(pc.filter(table.column("n"), mask)).as_py() or 0)
        if nulls:
            raise InputError(
                f"column {name!r} has {nulls} missing value(s); fill or drop them first"
            )


def _key(value: Any) -> Any:
    """A dictionary key that keeps ``-0.0`` apart from ``0.0`` (as the Arrow path does)."""
    if isinstance(value, float):
        return (float, repr(value))
    return (type(value).__name__, value)


def _merged(table: pa.Table, width: int) -> pa.Table:
    """The rows of equal keys ``k0..k{width-1}`` (after blanks were replaced) merged, their
    counts summed."""
    import pyarrow as pa

    keys = [table.column(f"k{i}").to_pylist() for i in range(width)]
    counts = table.column("n").to_pylist()
    first: dict[tuple[Any, ...], int] = {}
    total: list[int] = []
    rows: list[int] = []
    for r, tup in enumerate(zip(*keys, strict=True)):
        k = tuple(_key(v) for v in tup)
        at = first.get(k)
        if at is None:
            first[k] = len(total)
            total.append(int(counts[r]))
            rows.append(r)
        else:
            total[at] += int(counts[r])
    out = table.take(pa.array(rows, pa.int64()))
    return out.set_column(out.column_names.index("n"), "n", pa.array(total, pa.int64()))


def _checked(
    frame: _Frame,
    qis: Sequence[str],
    sensitive: str,
    missing_as: str | None,
    progress: Progress,
) -> pa.Table:
    """The distinct ``(qis..., sensitive)`` tuples of ``frame`` with their counts ``n``,
    checked as the file path checks a release (blanks, empty, nulls), blanks replaced."""
    import pyarrow.compute as pc

    columns = [*qis, sensitive]
    _check_types(frame, columns)
    table = _distinct(frame, columns, progress)
    table, replaced = _fill(table, frame, sensitive, missing_as)
    if int(pc.sum(table.column("n")).as_py() or 0) == 0:
        raise InputError(f"{frame.name} is empty (0 records)")
    _refuse_nulls(table, qis)
    return _merged(table, len(columns)) if replaced else table


def _check_qis(qis: Sequence[str], sensitive: str, present: Sequence[str]) -> list[str]:
    """The checks of :func:`airflow_privacy.core.anonymize.encoding.encode`, on names."""
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
    for col in [*qi_list, sensitive]:
        if col not in present:
            kind = "sensitive column" if col == sensitive else "quasi-identifier"
            raise InputError(f"{kind} {col!r} does not exist (columns: {', '.join(present)})")
    return qi_list


def _sorted_rows(table: pa.Table, width: int) -> pa.Table:
    """The rows in the order of their label tuples (Arrow's text of each key), so every
    backend lists a histogram's rows alike."""
    import pyarrow as pa
    import pyarrow.compute as pc

    labels = {}
    for i in range(width):
        col = table.column(f"k{i}")
        labels[f"l{i}"] = col if col.type == pa.string() else pc.cast(col, pa.string())
    # UTF-8 byte order is the order of code points, Python's order of text
    order = pc.sort_indices(
        pa.table(labels), sort_keys=[(f"l{i}", "ascending") for i in range(width)]
    )
    return table.take(order)


def histogram(
    source: Any,
    qis: Sequence[str],
    sensitive: str,
    *,
    spark: Any = None,
    missing_as: str | None = None,
    progress: Progress = None,
) -> Histogram:
    """The histogram of the distinct ``(qis..., sensitive)`` tuples of ``source`` (a Spark
    DataFrame, a Parquet file or folder as a :class:`Path`, or a table name), counted by
    Spark. Keys are typed (the file's types, else Spark's as Arrow types), rows in the order
    of their labels; blank sensitive cells are refused or published as ``missing_as``."""
    import pyarrow as pa

    from airflow_privacy.core.backends.histogram import Histogram
    from airflow_privacy.core.cells import check_missing_as

    replacement = check_missing_as(missing_as)
    frame = _frame(source, spark)
    present = list(frame.position)
    qi_list = _check_qis(qis, sensitive, present)
    table = _checked(frame, qi_list, sensitive, replacement, progress)
    width = len(qi_list) + 1
    table = _sorted_rows(table, width)
    names = [*qi_list, sensitive]
    keys = pa.table({names[i]: table.column(f"k{i}") for i in range(width)})
    counts = np.asarray(table.column("n").to_pylist(), dtype=np.int64)
    dropped = tuple(c for c in present if c not in names)
    return Histogram(tuple(qi_list), sensitive, keys, counts, dropped)


def count(
    source: Any,
    spec: ReleaseSpec,
    *,
    spark: Any = None,
    missing_as: str | None = None,
    progress: Progress = None,
) -> Bucketization:
    """The per-group sensitive counts of a release held by Spark (the ``check`` step's
    statistics ``n_b(s)``), in the normalized order (:meth:`Bucketization.normalized`);
    labels are the text of the values as the Arrow path writes them."""
    from airflow_privacy.core.cells import check_missing_as
    from airflow_privacy.core.model import Bucketization, check_columns

    replacement = check_missing_as(missing_as)
    frame = _frame(source, spark)
    check_columns(list(frame.position), spec)
    table = _checked(frame, spec.group_columns, spec.sensitive, replacement, progress)
    width = len(spec.group_columns)
    labels = [[str(v) for v in table.column(f"k{i}").to_pylist()] for i in range(width)]
    values = [str(v) for v in table.column(f"k{width}").to_pylist()]
    group_pos: dict[tuple[str, ...], int] = {}
    value_pos: dict[str, int] = {}
    g_idx = np.fromiter(
        (group_pos.setdefault(k, len(group_pos)) for k in zip(*labels, strict=True)),
        dtype=np.int64,
        count=len(values),
    )
    v_idx = np.fromiter(
        (value_pos.setdefault(v, len(value_pos)) for v in values), dtype=np.int64, count=len(values)
    )
    grid = np.zeros((len(group_pos), len(value_pos)), dtype=np.int64)
    np.add.at(grid, (g_idx, v_idx), np.asarray(table.column("n").to_pylist(), dtype=np.int64))
    return Bucketization(
        spec.group_columns, spec.sensitive, tuple(group_pos), tuple(value_pos), grid
    ).normalized()


def _check_recoding(hist: Histogram, recoding: Recoding) -> None:
    rows = hist.keys.num_rows
    r, g, c = recoding.row, recoding.group, recoding.count
    if not (r.shape == g.shape == c.shape):
        raise InputError("the recoding's row, group and count arrays differ in length")
    if r.size and (r.min() < 0 or r.max() >= rows):
        raise InputError("the recoding names a histogram row that does not exist")
    if g.size and (g.min() < 0 or g.max() >= len(recoding.labels)):
        raise InputError("the recoding names a group that has no labels")
    if c.size and c.min() < 1:
        raise InputError("the recoding assigns fewer than one record to a group")
    per_row = np.bincount(r, weights=c, minlength=rows).astype(np.int64)
    if np.any(per_row > hist.counts):
        raise InputError("the recoding assigns more records than a histogram row has")
    if any(len(lab) != len(recoding.columns) for lab in recoding.labels):
        raise InputError("a group's labels do not match the recoding's columns")
    names = [*recoding.columns, hist.sensitive]
    if len(set(names)) != len(names):
        raise InputError(
            f"the recoding's columns repeat a name or the sensitive column {hist.sensitive!r}"
        )


def _spark_arrow_type(kind: Any) -> Any:
    """The Arrow type Spark reads as its type ``kind`` (a timestamp with a zone: an instant,
    given in UTC), for the key columns of the mapping table; unknown types: text."""
    import pyarrow as pa
    from pyspark.sql import types as T

    simple: list[tuple[Any, Any]] = [
        (T.BooleanType, pa.bool_()),
        (T.ByteType, pa.int8()),
        (T.ShortType, pa.int16()),
        (T.IntegerType, pa.int32()),
        (T.LongType, pa.int64()),
        (T.FloatType, pa.float32()),
        (T.DoubleType, pa.float64()),
        (T.StringType, pa.string()),
        (T.DateType, pa.date32()),
        (T.TimestampNTZType, pa.timestamp("us")),
        (T.TimestampType, pa.timestamp("us", tz="UTC")),
    ]
    if isinstance(kind, T.DecimalType):
        return pa.decimal128(kind.precision, kind.scale)
    for spark_type, arrow_type in simple:
        if isinstance(kind, spark_type):
            return arrow_type
    return pa.string()


def _mapping(
    frame: _Frame, hist: Histogram, recoding: Recoding, s_raw: pa.Table | None
) -> tuple[Any, list[str]]:
    """The mapping table (module doc) as a Spark DataFrame, and its join key columns.

    Columns: the histogram row ``__r``; its QI keys ``m0..`` in the source's Spark types
    (and ``mz{i}``, the sign of a float zero); the sensitive key ``m{q}`` (or, when blank
    cells were replaced, the raw values ``s_raw`` mapping to it: one mapping row per raw
    value); the published labels ``g0..``, the sensitive text ``__s``; the record range
    ``(__lo, __hi]`` of the row's records that go to the group."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.sql import functions as F

    names = [*hist.qis, hist.sensitive]
    keys = hist.keys
    s_text = pc.cast(keys.column(hist.sensitive), pa.string()).to_pylist()
    order = np.argsort(recoding.row, kind="stable")
    row = recoding.row[order]
    group = recoding.group[order]
    cnt = recoding.count[order]
    hi = np.cumsum(cnt)
    start = np.searchsorted(row, row, side="left")  # first entry of the same row
    base = np.where(start > 0, hi[start - 1], 0)
    hi_in_row = hi - base
    lo_in_row = hi_in_row - cnt
    entries: dict[str, Any] = {"__r": pa.array(row, pa.int64())}
    take = pa.array(row, pa.int64())
    schema = frame.df.schema
    for i, name in enumerate(names):
        col = keys.column(name).take(take)
        kind = schema[f"c{frame.position[name]}"].dataType
        if i < len(hist.qis) or s_raw is None:
            entries[f"m{i}"] = pc.cast(col, _spark_arrow_type(kind))
            if _is_float(frame, name):
                entries[f"mz{i}"] = pc.and_(
                    pc.equal(col, 0.0), pc.is_in(pc.cast(col, pa.string()), pa.array(["-0"]))
                )
    for j in range(len(recoding.columns)):
        entries[f"g{j}"] = pa.array([recoding.labels[int(x)][j] for x in group], pa.string())
    entries["__s"] = pa.array([s_text[int(r)] for r in row], pa.string())
    entries["__lo"] = pa.array(lo_in_row, pa.int64())
    entries["__hi"] = pa.array(hi_in_row, pa.int64())
    table = pa.table(entries)
    session = frame.df.sparkSession
    mapping = session.createDataFrame(table)
    key_cols = [c for c in table.column_names if c.startswith("m")]
    if s_raw is not None:
        # raw sensitive value -> the histogram row's published sensitive text
        smap = session.createDataFrame(s_raw)
        mapping = mapping.join(F.broadcast(smap), on="__s", how="inner")
        key_cols += [c for c in s_raw.column_names if c.startswith("m")]
    return mapping, key_cols


def _raw_sensitive(frame: _Frame, hist: Histogram, missing_as: str) -> pa.Table:
    """The source's distinct raw sensitive values (one small Spark query) with the text
    each is published as (blank ones: ``missing_as``), by the file path's rules."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.sql import functions as F

    name = hist.sensitive
    col = F.col(f"c{frame.position[name]}")
    parts = [col.alias("v")]
    if _is_float(frame, name):
        parts.append(_negative_zero(col).alias("z"))
    raw = frame.df.select(*parts).distinct().toArrow()
    values = raw.column("v")
    if "z" in raw.column_names:
        values = pc.if_else(raw.column("z"), pc.negate(pc.abs(values)), values)
    from airflow_privacy.core.io import blank_mask

    declared = frame.types.get(name)
    shown = values
    if declared is not None and shown.type != declared and not pa.types.is_dictionary(declared):
        with contextlib.suppress(pa.ArrowInvalid, pa.ArrowNotImplementedError):
            shown = pc.cast(shown, declared)
    shown, blank, _ = blank_mask(shown)
    text = pc.if_else(blank, pa.scalar(missing_as), pc.cast(shown, pa.string()))
    kind = frame.df.schema[f"c{frame.position[name]}"].dataType
    q = len(hist.qis)
    out: dict[str, Any] = {
        f"m{q}": pc.cast(raw.column("v"), _spark_arrow_type(kind)),
        "__s": text,
    }
    if "z" in raw.column_names:
        out[f"mz{q}"] = raw.column("z")
    return pa.table(out)


def write_release(
    source: Any,
    hist: Histogram,
    recoding: Recoding,
    target: str,
    *,
    mode: WriteMode = "parquet",
    spark: Any = None,
    missing_as: str | None = None,
    progress: Progress = None,
) -> int:
    """Apply ``recoding`` (decided from ``hist``, the :func:`histogram` of ``source``) in
    Spark and write the release to ``target``: a Parquet dataset folder (``mode
    "parquet"``) or a Spark table (``"table"``). Its columns: the recoding's columns (the
    groups' labels) and the sensitive column as text. Returns the records written, counted
    on the written output; a count other than the recoding's is refused (the source
    changed since its histogram) and the output removed."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from airflow_privacy.core.cells import check_missing_as

    replacement = check_missing_as(missing_as)
    if mode not in WRITE_MODES:
        raise InputError(f"mode must be one of {', '.join(WRITE_MODES)}, got {mode!r}")
    if not isinstance(target, str) or not target.strip():
        raise InputError("the target must name a table or a folder")
    if mode == "table" and not _TABLE_NAME.fullmatch(target):
        raise InputError(
            f"the target must be a table name of letters, digits and underscores, "
            f"dot-separated (catalog.schema.table), got {target!r}"
        )
    _check_recoding(hist, recoding)
    frame = _frame(source, spark)
    missing = [c for c in (*hist.qis, hist.sensitive) if c not in frame.position]
    if missing:
        raise InputError(f"column {missing[0]!r} of the histogram does not exist in {frame.name}")
    session = frame.df.sparkSession
    _check_target(session, target, mode)
    s_raw = _raw_sensitive(frame, hist, replacement) if replacement is not None else None
    mapping, key_cols = _mapping(frame, hist, recoding, s_raw)
    names = [*hist.qis, hist.sensitive]
    src_parts = []
    for i, name in enumerate(names):
        col = F.col(f"c{frame.position[name]}")
        src_parts.append(col.alias(f"m{i}"))
        if _is_float(frame, name):
            src_parts.append(_negative_zero(col).alias(f"mz{i}"))
    src = frame.df.select(*src_parts)
    q = len(hist.qis)

    def on(right: Any) -> list[Any]:
        return [
            src[c].eqNullSafe(right[c]) if c == f"m{q}" else src[c] == right[c] for c in key_cols
        ]

    out_cols = [
        *(F.col(f"g{j}").alias(c) for j, c in enumerate(recoding.columns)),
        F.col("__s").alias(hist.sensitive),
    ]
    if progress is not None:
        progress(f"writing the release to {target} (Spark, {mode})")
    whole = bool(np.all(recoding.count == hist.counts[recoding.row]))
    if recoding.one_group_per_row and whole:
        joined = src.join(F.broadcast(mapping), on=on(mapping), how="inner")
    else:
        # a row split over groups, or partly suppressed: number the records of each
        # histogram row, then keep those in a group's range
        rows = mapping.select(*key_cols, "__r").distinct()
        first = src.join(F.broadcast(rows), on=on(rows), how="inner").select("__r")
        numbered = first.withColumn(
            "__n", F.row_number().over(Window.partitionBy("__r").orderBy(F.lit(1)))
        )
        ranges = mapping.select(
            "__r", "__lo", "__hi", "__s", *[f"g{j}" for j in range(len(recoding.columns))]
        ).distinct()
        joined = numbered.join(
            F.broadcast(ranges),
            on=(numbered["__r"] == ranges["__r"])
            & (numbered["__n"] > ranges["__lo"])
            & (numbered["__n"] <= ranges["__hi"]),
            how="inner",
        )
    out = joined.select(*out_cols)
    try:
        if mode == "parquet":
            out.write.mode("error").parquet(target)
        else:
            out.write.mode("error").saveAsTable(target)
    except AnalysisException:
        # Spark's text is not shown (it can quote the plan); a target made meanwhile
        _check_target(session, target, mode)
        raise
    if mode == "parquet":
        written = int(session.read.parquet(target).count())
    else:
        written = int(session.table(target).count())
    if written != recoding.records:
        removed = _remove(session, target, mode)
        raise InputError(
            f"{frame.name} no longer matches its histogram: {written:,} records were "
            f"written, the recoding publishes {recoding.records:,}; "
            + ("the output was removed" if removed else f"remove {target!r}, never publish it")
        )
    return written


def _check_target(session: Any, target: str, mode: WriteMode) -> None:
    """A release is never written over anything: an existing table, or a folder or file
    on this machine, is bad input (Spark refuses any other existing path when writing)."""
    if mode == "table":
        exists = bool(session.catalog.tableExists(target))
    else:
        path = target[len("file:") :] if target.startswith("file:") else target
        exists = "://" not in path and os.path.lexists(path)
    if exists:
        raise InputError(
            f"the target {target!r} already exists; a release is never written over "
            "anything: choose a new name"
        )


def _remove(session: Any, target: str, mode: WriteMode) -> bool:
    """Remove a written output (the table, or a Parquet folder on this machine); whether
    it is gone."""
    if mode == "table":
        session.sql(f"DROP TABLE IF EXISTS {target}")  # plain identifiers (_TABLE_NAME)
        return not session.catalog.tableExists(target)
    path = target[len("file:") :] if target.startswith("file:") else target
    if "://" in path or not os.path.isdir(path):
        return False
    shutil.rmtree(path, ignore_errors=True)
    return not os.path.exists(path)


def bounded_counts(
    source: Any,
    columns: Sequence[str],
    *,
    entity: str | None = None,
    bound: int = 1,
    spark: Any = None,
    progress: Progress = None,
    sums: Sequence[Summed] = (),
) -> tuple[pa.Table, npt.NDArray[np.int64]]:
    """The input of a DP release counted by Spark, as
    :func:`airflow_privacy.core.backends.duck.bounded_counts` counts a file: with ``entity``,
    each person's first ``bound`` records (``row_number`` over the person, in the order of
    the values, nulls last) in the same job as the ``groupBy``; a float zero's sign kept;
    the values as text (Python's ``str`` of each: an integer 17 is ``17``), a null or empty
    value null. With ``sums``, each one's clamped whole values added up too (the table's
    ``SUM_PREFIX{i}`` columns); a summed column must have a numeric type. Only counts and
    sums leave Spark."""
    import pyarrow as pa
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from airflow_privacy.core.dp.marginals import SUM_PREFIX

    frame = _frame(source, spark)
    summed = [c for c in dict.fromkeys(x.column for x in sums) if c not in columns]
    wanted = [*columns, *summed, *([entity] if entity is not None else [])]
    for name in wanted:
        if name not in frame.position:
            raise InputError(f"column {name!r} is not in {frame.name}")
    _check_types(frame, wanted)
    for x in sums:
        kind = frame.df.schema[f"c{frame.position[x.column]}"].dataType
        if not isinstance(kind, T.NumericType):
            raise InputError(
                f"column {x.column!r} of {frame.name} has type {kind.simpleString()} and a "
                "summed column must hold numbers (an integer or a real type)"
            )
    df = frame.df
    cols = [F.col(f"c{frame.position[c]}") for c in columns]
    if entity is not None:
        # then by the text: -0.0 before 0.0 (equal as numbers), as every backend orders them
        window = Window.partitionBy(F.col(f"c{frame.position[entity]}")).orderBy(
            *[c.asc_nulls_last() for c in cols],
            *[c.cast("string").asc_nulls_last() for c in cols],
        )
        df = df.withColumn("_r", F.row_number().over(window)).where(F.col("_r") <= int(bound))
    keys = []
    for i, name in enumerate(columns):
        keys.append(cols[i].alias(f"k{i}"))
        if _is_float(frame, name):
            keys.append(_negative_zero(cols[i]).alias(f"z{i}"))
    if progress is not None:
        progress(f"counting {frame.name} (Spark)")
    totals = []
    for i, x in enumerate(sums):
        v = F.col(f"c{frame.position[x.column]}").cast("double")
        clamped = F.least(F.greatest(v, F.lit(float(x.low))), F.lit(float(x.high)))
        # greatest and least skip a null: it is 0 by a condition of its own
        value = F.when(v.isNull(), F.lit(0)).otherwise(F.floor(clamped + F.lit(0.5)).cast("long"))
        totals.append(F.sum(value).cast("long").alias(f"s{i}"))
    table: pa.Table = df.groupBy(*keys).agg(F.count(F.lit(1)).alias("n"), *totals).toArrow()
    table = _as_declared(table, columns, frame)
    out = {
        name: pa.array(
            [None if v is None or v == "" else str(v) for v in table.column(f"k{i}").to_pylist()],
            pa.string(),
        )
        for i, name in enumerate(columns)
    }
    for i in range(len(sums)):
        out[f"{SUM_PREFIX}{i}"] = table.column(f"s{i}").cast(pa.int64()).fill_null(0)
    counts = np.asarray(table.column("n").to_numpy(), dtype=np.int64)
    return pa.table(out), counts
