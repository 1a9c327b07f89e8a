"""Any SQLAlchemy warehouse as a backend: the histogram, the write-back and the re-count run
in the database; only distinct tuples and counts travel.

An anonymizer decides from the sufficient statistics of its input, the histogram of its
distinct ``(QI..., sensitive)`` tuples with their record counts (LeFevre et al. 2006,
"Mondrian multidimensional k-anonymity", section 4, and Martin et al. 2007, "Worst-case
background knowledge for privacy-preserving data publishing", section 2.1, only read
counts). Three functions take a SQLAlchemy :class:`~sqlalchemy.engine.Engine` and a table
name (``schema.table`` or ``table``):

* :func:`histogram`: ``SELECT qi..., s, COUNT(*) ... GROUP BY qi..., s``, returned as a
  :class:`~airflow_privacy.core.backends.histogram.Histogram` whose
  :meth:`~Histogram.encoded` gives the anonymizers the same labels as reading the table
  row by row did (the text of each value as the driver returns it, ``str(v)``);
* :func:`write_release`: applies a :class:`~airflow_privacy.core.anonymize.plan.Recoding`
  *in the warehouse*: a temporary mapping table (the typed key of each distinct tuple, a
  range of record numbers, the published labels) is filled with bound parameters and
  joined to the source; records of a tuple split over several groups (a bucketization)
  are numbered with ``ROW_NUMBER() OVER (PARTITION BY key)`` and matched on their range.
  The release (the in-process release's columns, as text) is created with
  ``CREATE TABLE`` + ``INSERT INTO ... SELECT``; a bucketization's rows pair each bucket's
  QIs and sensitive values by rank, never a record's own pair (:func:`_pair_by_rank`);
* :func:`count`: the per-group sensitive counts of a table (the check's ``GROUP BY``), so
  the written release is re-checked on the warehouse's own counts.

SQL is built with SQLAlchemy Core only (``select``, ``group_by``, ``func.count``,
``func.row_number().over``, ``join``, ``insert().from_select``, ``Table.create``/``drop``):
identifiers are quoted by the dialect, every value is a bound parameter. The one statement
SQLAlchemy has no construct for, ``ALTER TABLE ... RENAME TO``, is written with the
dialect's identifier preparer. docs/warehouses.md lists what is portable and how each
dialect degrades.

Atomicity: on PostgreSQL (transactional DDL) the old target is dropped and the new one
created and filled in one transaction, so a failure leaves the old table exactly as it was.
Elsewhere the release is written in full under a temporary name beside the target, counted,
and only then swapped in (drop the old table, rename the new one, in one transaction where
the dialect allows DDL in transactions); a failure before the swap leaves the old table as
it was and drops the temporary one.

Leak rule: a database error while writing is reported by its class and SQLSTATE only (the
driver's text can quote a value of the mapping, which is a source value); errors while
reading keep the first line of the driver's text as the gate's SQL reader does.
"""

from __future__ import annotations

import contextlib
import math
import secrets
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.backends.histogram import Histogram
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa
    import sqlalchemy as sa
    from sqlalchemy.engine import Connection, Engine

    from airflow_privacy.core.anonymize.plan import Recoding
    from airflow_privacy.core.dp.marginals import Summed
    from airflow_privacy.core.model import Bucketization, ReleaseSpec

IntArray = npt.NDArray[np.int64]
Progress = Callable[[str], None]

FETCH_ROWS = 65_536
"""Histogram rows fetched from the database at a time (a server-side cursor where the
driver has one), turned into Arrow arrays batch by batch."""
INSERT_ROWS = 10_000
"""Mapping rows sent per ``executemany``."""
TEMPORARY_DIALECTS = frozenset({"postgresql", "sqlite", "mysql", "mariadb", "duckdb", "snowflake"})
"""Dialects whose ``CREATE TEMPORARY TABLE`` makes a table private to the connection; on
the others the mapping is a regular table with a random name, dropped afterwards."""
TRANSACTIONAL_DDL = frozenset({"postgresql"})
"""Dialects where the whole write (drop the old target, create and fill the new one) is
one transaction."""


@dataclass(frozen=True)
class SqlHistogram(Histogram):
    """A :class:`Histogram` that remembers the warehouse's own distinct tuples.

    ``keys`` are the histogram the anonymizers see: one row per distinct tuple of *labels*
    (values the driver returns as ``int`` or ``str`` keep their type; others are their text,
    ``str(v)``, the label the row-by-row path gave them; a blank sensitive value is
    ``missing_as``). ``source_keys`` holds the warehouse's distinct tuples as the driver
    returned them (typed, nulls included), which :func:`write_release` binds into its
    mapping table and joins on, and ``source_counts`` their records. Usually each is one
    histogram row (``source_row`` ``None``); when several warehouse tuples have one label
    tuple (blank sensitive values published as one ``missing_as``, ``1`` and ``'1'`` in one
    SQLite column) ``source_row[i]`` is the histogram row tuple ``i`` is counted in."""

    source_keys: pa.Table | None = None
    source_counts: IntArray | None = None
    source_row: IntArray | None = None
    sensitive_labels: pa.Array | None = None
    """The published text of the sensitive value of each warehouse tuple (``missing_as``
    for a blank one); ``None``: the text of ``keys``' sensitive column."""


# ------------------------------------------------------------------------ names, errors
def split_name(name: str) -> tuple[str | None, str]:
    """``schema.table`` -> ``("schema", "table")``; ``table`` -> ``(None, "table")`` (the
    last dot separates, as the gate's ``table:SCHEMA.NAME`` references do)."""
    if not isinstance(name, str) or not name or "\x00" in name:
        raise InputError(f"table name {name!r} must be non-empty text without NUL characters")
    schema, _, table = name.rpartition(".")
    if not table:
        raise InputError(f"table name {name!r} has no table after its schema")
    return (schema or None), table


def check_name_length(engine: Engine, name: str, what: str) -> None:
    """A table the project will create: each part of its name (``schema.table``) within the
    dialect's identifier length (PostgreSQL 63, SQLAlchemy's SQLite 9,999), checked before
    anything is written; the message cuts the name."""
    limit = int(getattr(engine.dialect, "max_identifier_length", 0) or 0)
    for part in (p for p in split_name(name) if p is not None):
        if limit and len(part) > limit:
            shown = part if len(part) <= 40 else part[:40] + "..."
            raise InputError(
                f"{what} {shown!r} has a name of {len(part):,} characters; "
                f"{engine.dialect.name} allows at most {limit:,}"
            )


def _safe_url(engine: Engine) -> str:
    url = engine.url
    query = {
        k: ("***" if "pass" in k.lower() or "secret" in k.lower() else v)
        for k, v in url.query.items()
    }
    return url.set(query=query).render_as_string(hide_password=True)


@contextlib.contextmanager
def _reading(engine: Engine, name: str) -> Iterator[None]:
    """Errors while reading ``name`` as bad input naming the table and the database (never
    its password): the gate's SQL reader's messages."""
    from sqlalchemy.exc import NoSuchTableError, SQLAlchemyError

    try:
        yield
    except NoSuchTableError:
        raise InputError(f"table {name!r} does not exist") from None
    except SQLAlchemyError as exc:
        orig = getattr(exc, "orig", None) or exc
        text = str(orig).strip().splitlines()
        reason = text[0][:200] if text else type(exc).__name__
        raise InputError(
            f"cannot read table {name!r} from database {_safe_url(engine)!r}: {reason}"
        ) from None


def _why(exc: BaseException) -> str:
    """A database error without its text (which may quote a value): class and SQLSTATE."""
    orig = getattr(exc, "orig", None) or exc
    state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    kind = type(orig).__name__
    return f"{kind} (SQLSTATE {state})" if state else kind


def column_names(engine: Engine, table: str) -> list[str]:
    """The columns of ``table`` (``schema.table`` or ``table``), in order."""
    return list(_column_types(engine, table))


def _column_types(engine: Engine, table: str) -> dict[str, Any]:
    """The reflected SQLAlchemy type of every column of ``table``, in order."""
    import sqlalchemy as sa

    schema, name = split_name(table)
    with _reading(engine, table):
        return {str(c["name"]): c["type"] for c in sa.inspect(engine).get_columns(name, schema)}


def _columns(engine: Engine, table: str, wanted: Sequence[str]) -> dict[str, Any]:
    """The SQLAlchemy type of each wanted column (each checked to exist)."""
    found = _column_types(engine, table)
    for c in wanted:
        if c not in found:
            raise InputError(f"column {c!r} does not exist in table {table!r}")
    return {c: found[c] for c in wanted}


def _table(table: str, columns: Sequence[str]) -> sa.TableClause:
    import sqlalchemy as sa

    schema, name = split_name(table)
    return sa.table(name, *[sa.column(c) for c in columns], schema=schema)


# ------------------------------------------------------------------------- signed zeros
NEGATIVE_ZERO_FUNCTION = "airflow_privacy_negative_zero"
"""The SQL function registered on a SQLite connection: 1 for a float ``-0.0``, else 0
(SQLite's SQL cannot tell ``-0.0`` from ``0.0``: its text, ``quote`` and ``printf`` all
write ``0.0``)."""


def _negative_zero(value: object) -> int:
    return int(isinstance(value, float) and value == 0.0 and math.copysign(1.0, value) < 0)


def _can_hold_negative_zero(dialect: str, kind: Any) -> bool:
    """Whether a column of this reflected type can hold ``-0.0``: a float column; on SQLite
    a column without a type or typed BLOB (every other SQLite affinity stores ``-0.0`` as
    ``0.0`` or as the text ``'-0.0'``)."""
    import sqlalchemy as sa

    if dialect == "sqlite":
        return isinstance(kind, (sa.types.NullType, sa.types.LargeBinary))
    return isinstance(kind, sa.Float)


def negative_zero_flags(
    conn: Connection, columns: Sequence[Any], types: Sequence[Any]
) -> dict[int, Any]:
    """For each of ``columns`` (SQLAlchemy column expressions, their reflected ``types``)
    that can hold ``-0.0``: an expression that is 1 where the value is ``-0.0`` and 0
    elsewhere. SQL finds ``-0.0 = 0.0`` and ``GROUP BY`` merges them, with the sign of
    whichever row comes first; the file backends keep them apart (a release shows
    ``-0.0``), so every SQL ``GROUP BY`` and join also keys on this flag. PostgreSQL and
    other dialects: the value's text starts with ``-``; SQLite: a function registered on
    the connection (:data:`NEGATIVE_ZERO_FUNCTION`)."""
    import sqlalchemy as sa

    dialect = conn.dialect.name
    flags: dict[int, Any] = {}
    for i, (col, kind) in enumerate(zip(columns, types, strict=True)):
        if not _can_hold_negative_zero(dialect, kind):
            continue
        if dialect == "sqlite":
            raw: Any = conn.connection.driver_connection
            if hasattr(raw, "create_function"):
                raw.create_function(NEGATIVE_ZERO_FUNCTION, 1, _negative_zero, deterministic=True)
                flags[i] = getattr(sa.func, NEGATIVE_ZERO_FUNCTION)(col)
            continue
        flags[i] = sa.case((sa.and_(col == 0, sa.cast(col, sa.String).like("-%")), 1), else_=0)
    return flags


def with_zero_signs(
    rows: Sequence[Sequence[Any]], width: int, flagged: Sequence[int]
) -> list[tuple[Any, ...]]:
    """Rows ``(c_0 .. c_{width-1}, flag..., rest...)`` of a query grouped on
    :func:`negative_zero_flags` as ``(c..., rest...)``, each flagged zero ``-0.0`` and
    every other float zero ``0.0`` (whatever sign the database returned for its group)."""
    if not flagged:
        return [tuple(r) for r in rows]
    out: list[tuple[Any, ...]] = []
    nf = len(flagged)
    for r in rows:
        vals = list(r[:width])
        for j, i in enumerate(flagged):
            v = vals[i]
            if isinstance(v, float) and v == 0.0:
                vals[i] = -0.0 if r[width + j] else 0.0
        out.append((*vals, *r[width + nf :]))
    return out


def grouped_rows(
    conn: Connection, table: sa.TableClause, columns: Sequence[str], types: Sequence[Any]
) -> list[tuple[Any, ...]]:
    """``SELECT c..., COUNT(*) FROM table GROUP BY c...`` (quoted identifiers, no literal),
    a float zero's sign kept (:func:`negative_zero_flags`): the rows as the driver returns
    them, the count last."""
    import sqlalchemy as sa

    c = [table.c[x] for x in columns]
    flags = negative_zero_flags(conn, c, types)
    keys = [*c, *flags.values()]
    query = sa.select(*keys, sa.func.count()).select_from(table).group_by(*keys)
    return with_zero_signs(list(conn.execute(query)), len(c), list(flags))


# ------------------------------------------------------------------------------ count
def group_counts(engine: Engine, table: str, columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """:func:`grouped_rows` of ``table``'s ``columns`` (each checked to exist)."""
    cols = list(columns)
    types = _columns(engine, table, cols)
    with _reading(engine, table), engine.connect() as conn:
        return grouped_rows(conn, _table(table, cols), cols, [types[x] for x in cols])


def count(
    engine: Engine,
    table: str,
    spec: ReleaseSpec,
    *,
    missing_as: str | None = None,
    progress: Progress | None = None,
) -> Bucketization:
    """The per-group sensitive counts ``n_b(s)`` (Martin et al. 2007, section 2.1) of
    ``spec``'s columns of ``table``, counted by the database: what the gate's check of a
    ``table:`` reference computes (blank sensitive values refused unless ``missing_as``,
    :meth:`Bucketization.from_counts`), in the same order."""
    from airflow_privacy.core.model import Bucketization

    if progress is not None:
        progress(f"counting table {table!r} in the database (GROUP BY)")
    rows = group_counts(engine, table, list(spec.required_columns()))
    return Bucketization.from_counts(
        rows, spec.group_columns, spec.sensitive, missing_as=missing_as
    )


# -------------------------------------------------------------------------- histogram
def _batch_columns(rows: Sequence[Sequence[Any]], width: int) -> tuple[list[Any], list[Any]]:
    """One fetched batch as typed Arrow arrays (the driver's values) and their labels."""
    import pyarrow as pa
    import pyarrow.compute as pc

    typed: list[Any] = []
    labels: list[Any] = []
    for j in range(width):
        values = [r[j] for r in rows]
        kinds = {type(v) for v in values if v is not None}
        if kinds <= {str}:
            arr = pa.array(values, pa.string())
            typed.append(arr)
            labels.append(arr)
            continue
        if kinds == {int}:
            with contextlib.suppress(OverflowError, pa.ArrowInvalid):
                arr = pa.array(values, pa.int64())
                typed.append(arr)
                labels.append(pc.cast(arr, pa.string()))
                continue
        typed.append(_typed(values))
        labels.append(pa.array([None if v is None else str(v) for v in values], pa.string()))
    return typed, labels


class _Unsupported(Exception):
    pass


def _typed(values: list[Any]) -> pa.Array:
    import pyarrow as pa

    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        kinds = sorted({type(v).__name__ for v in values if v is not None})
        raise _Unsupported(", ".join(kinds)) from None


def _concat(chunks: Sequence[pa.Array]) -> pa.Array:
    """The batches of one column as one array; batches typed differently (decimals of
    different scales, a column whose type inference changed) are cast to the first type
    every batch converts to without loss."""
    import pyarrow as pa

    kinds = list(dict.fromkeys(c.type for c in chunks))
    if len(kinds) <= 1:
        return pa.concat_arrays(list(chunks)) if chunks else pa.array([], pa.string())
    if all(pa.types.is_decimal(k) for k in kinds):
        scale = max(k.scale for k in kinds)
        digits = max(k.precision - k.scale for k in kinds)
        target = pa.decimal128(min(digits + scale, 38), scale)
        if digits + scale > 38:
            target = pa.decimal256(min(digits + scale, 76), scale)
        return pa.concat_arrays([c.cast(target) for c in chunks])
    for target in kinds:
        try:
            return pa.concat_arrays([c.cast(target, safe=True) for c in chunks])
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            continue
    raise _Unsupported(", ".join(str(k) for k in kinds))


def histogram(
    engine: Engine,
    table: str,
    qis: Sequence[str],
    sensitive: str,
    *,
    missing_as: str | None = None,
    progress: Progress | None = None,
) -> SqlHistogram:
    """The histogram of ``table``'s distinct ``(qis..., sensitive)`` tuples and their
    record counts, computed by the database (module doc).

    Checks, with the messages of the row-by-row path: the columns exist; a missing QI value
    is refused naming the column and the records that miss it; a blank sensitive value
    (null, empty or whitespace only) is refused unless ``missing_as`` publishes it as that
    text (the file readers' rule, :func:`airflow_privacy.core.io.fill_blanks`, and the SQL
    check's, :meth:`Bucketization.from_counts`); an empty table is refused."""
    import pyarrow as pa
    import sqlalchemy as sa

    from airflow_privacy.core.cells import blank_cells_message, check_missing_as
    from airflow_privacy.core.io import blank_mask

    replacement = check_missing_as(missing_as)
    if isinstance(qis, str):
        raise InputError("qis must be a list of column names, not one string")
    qi_list = [str(q) for q in qis]
    if not qi_list:
        raise InputError("at least one quasi-identifier is required")
    dupes = sorted({q for q in qi_list if qi_list.count(q) > 1})
    if dupes:
        raise InputError(f"quasi-identifier {dupes[0]!r} is given more than once")
    if sensitive in qi_list:
        raise InputError(
            f"column {sensitive!r} cannot be both the sensitive column and a quasi-identifier"
        )
    cols = [*qi_list, sensitive]
    found = _column_types(engine, table)
    present = list(found)
    for col in cols:
        if col not in present:
            kind = "sensitive column" if col == sensitive else "quasi-identifier"
            raise InputError(
                f"{kind} {col!r} does not exist in table {table!r} (columns: {', '.join(present)})"
            )
    dropped = tuple(c for c in present if c not in cols)
    types = {c: found[c] for c in cols}
    t = _table(table, cols)
    c = [t.c[x] for x in cols]
    if progress is not None:
        progress(f"counting the distinct tuples of table {table!r} in the database (GROUP BY)")
    width = len(cols)
    typed_chunks: list[list[Any]] = [[] for _ in cols]
    label_chunks: list[list[Any]] = [[] for _ in cols]
    count_chunks: list[IntArray] = []
    try:
        with _reading(engine, table), engine.connect() as conn:
            flags = negative_zero_flags(conn, c, [types[x] for x in cols])
            keys_sql = [*c, *flags.values()]
            query = sa.select(*keys_sql, sa.func.count().label("n")).select_from(t)
            query = query.group_by(*keys_sql)
            result = conn.execution_options(stream_results=True).execute(query)
            while True:
                batch = with_zero_signs(result.fetchmany(FETCH_ROWS), width, list(flags))
                if not batch:
                    break
                typed, labels = _batch_columns(batch, width)
                for j in range(width):
                    typed_chunks[j].append(typed[j])
                    label_chunks[j].append(labels[j])
                count_chunks.append(np.fromiter((int(r[width]) for r in batch), np.int64))
        keys = [_concat(ch) for ch in typed_chunks]
    except _Unsupported as exc:
        raise InputError(
            f"table {table!r}: a column holds values of types the SQL backend cannot carry "
            f"as one key ({exc}); cast it to one type (e.g. text) in a view"
        ) from None
    labels = [_concat(ch) for ch in label_chunks]
    counts = np.concatenate(count_chunks) if count_chunks else np.zeros(0, np.int64)
    total = int(counts.sum())
    if total == 0:
        raise InputError("the input table is empty (0 records)")
    import pyarrow.compute as pc

    for j, col in enumerate(qi_list):
        missing = pc.is_null(keys[j])
        nulls = int(counts[np.asarray(missing.to_numpy(zero_copy_only=False), bool)].sum())
        if nulls:
            raise InputError(
                f"column {col!r} has {nulls} missing value(s); fill or drop them first"
            )
    s_labels, blank, _ = blank_mask(labels[-1])
    blank_np = np.asarray(blank.to_numpy(zero_copy_only=False), bool)
    if blank_np.any():
        if replacement is None:
            first = int(np.flatnonzero(blank_np)[0])
            raise InputError(
                blank_cells_message(
                    sensitive,
                    f"table {table!r}",
                    int(counts[blank_np].sum()),
                    f"count row {first}",
                )
            )
        s_labels = pc.if_else(blank, pa.scalar(replacement, pa.string()), s_labels)
    labels[-1] = s_labels
    source = pa.table(dict(zip(cols, keys, strict=True)))
    # the keys the anonymizers see: int and text columns keep their type (their text is
    # their label), others are their labels; the sensitive column is its published text
    # wherever a blank was replaced
    shown = [
        k if (pa.types.is_integer(k.type) or pa.types.is_string(k.type)) else lab
        for k, lab in zip(keys, labels, strict=True)
    ]
    if blank_np.any():
        shown[-1] = s_labels
    row = _merge(labels)
    if row is None:
        return SqlHistogram(
            tuple(qi_list), sensitive, pa.table(dict(zip(cols, shown, strict=True))), counts,
            dropped, source_keys=source, source_counts=counts, sensitive_labels=s_labels,
        )  # fmt: skip
    merged, first_of = row
    merged_counts = np.zeros(first_of.shape[0], np.int64)
    np.add.at(merged_counts, merged, counts)
    take = pa.array(first_of)
    merged_keys = pa.table({c: s.take(take) for c, s in zip(cols, shown, strict=True)})
    return SqlHistogram(
        tuple(qi_list), sensitive, merged_keys, merged_counts, dropped,
        source_keys=source, source_counts=counts, source_row=merged, sensitive_labels=s_labels,
    )  # fmt: skip


def _merge(labels: Sequence[pa.Array]) -> tuple[IntArray, IntArray] | None:
    """``None`` when every label tuple is distinct; else the merged row of each row and the
    first row of each merged row (merged rows in order of first appearance)."""
    import pyarrow.compute as pc

    from airflow_privacy.core.anonymize.encoding import combine

    codes: list[IntArray] = []
    cards: list[int] = []
    for lab in labels:
        enc = pc.dictionary_encode(lab)
        codes.append(np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int64))
        cards.append(len(enc.dictionary))
    key, _ = combine(codes, cards)
    uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    if uniq.shape[0] == key.shape[0]:
        return None
    order = np.argsort(first, kind="stable")  # merged rows numbered by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    return rank[inverse.reshape(-1)].astype(np.int64), first[order].astype(np.int64)


# ---------------------------------------------------------------------- write_release
@dataclass(frozen=True)
class _Plan:
    """The mapping rows: warehouse tuple ``source[i]``, records ``lo[i] < rn <= hi[i]`` go
    to group ``group[i]``; ``whole``: every listed tuple goes whole to one group."""

    source: IntArray
    lo: IntArray
    hi: IntArray
    group: IntArray
    whole: bool


def _plan(hist: Histogram, recoding: Recoding) -> _Plan:
    """The recoding of histogram rows spread over the warehouse tuples of each row (module
    doc), checked against the histogram (a mismatch is a bug, not bad input)."""
    row = np.asarray(recoding.row, np.int64)
    group = np.asarray(recoding.group, np.int64)
    cnt = np.asarray(recoding.count, np.int64)
    n_rows = int(hist.counts.shape[0])
    if not (row.shape == group.shape == cnt.shape) or row.ndim != 1:
        raise ValueError("recoding: row, group and count must be equal-length vectors")
    if row.shape[0] and (
        row.min() < 0 or row.max() >= n_rows or np.any(np.diff(row) < 0) or cnt.min() < 1
    ):
        raise ValueError("recoding: rows out of range or unsorted, or a count below 1")
    if group.shape[0] and (group.min() < 0 or group.max() >= len(recoding.labels)):
        raise ValueError("recoding: a group without labels")
    per_row = np.zeros(n_rows, np.int64)
    np.add.at(per_row, row, cnt)
    if np.any(per_row > hist.counts):
        raise ValueError("recoding: more records sent from a histogram row than it has")
    src_row = hist.source_row if isinstance(hist, SqlHistogram) else None
    if src_row is None:
        whole = bool(recoding.one_group_per_row and np.array_equal(cnt, hist.counts[row]))
        lo = np.zeros(row.shape[0], np.int64)
        if not whole and row.shape[0]:
            # records of one row in order: the cumulative count before each entry
            start = np.concatenate(([0], np.cumsum(cnt)[:-1]))
            first = np.concatenate(([True], row[1:] != row[:-1]))
            base = np.maximum.accumulate(np.where(first, start, 0))
            lo = start - base
        return _Plan(row, lo, lo + cnt, group, whole)
    assert isinstance(hist, SqlHistogram) and hist.source_counts is not None
    src_counts = hist.source_counts
    # several warehouse tuples per histogram row: fill them in order
    members: dict[int, list[int]] = {}
    for i, r in enumerate(src_row.tolist()):
        members.setdefault(r, []).append(i)
    out_s: list[int] = []
    out_lo: list[int] = []
    out_hi: list[int] = []
    out_g: list[int] = []
    cursor: dict[int, tuple[int, int]] = {}  # row -> (member index, records used of it)
    for r, g, c in zip(row.tolist(), group.tolist(), cnt.tolist(), strict=True):
        m, used = cursor.get(r, (0, 0))
        left = c
        while left > 0:
            src = members[r][m]
            room = int(src_counts[src]) - used
            take = min(room, left)
            out_s.append(src)
            out_lo.append(used)
            out_hi.append(used + take)
            out_g.append(g)
            left -= take
            used += take
            if used == int(src_counts[src]):
                m, used = m + 1, 0
        cursor[r] = (m, used)
    s = np.asarray(out_s, np.int64)
    lo_a = np.asarray(out_lo, np.int64)
    hi_a = np.asarray(out_hi, np.int64)
    whole = bool(np.all(lo_a == 0) and np.array_equal(hi_a, src_counts[s])) and bool(
        s.shape[0] < 2 or np.all(np.diff(s) != 0)
    )
    return _Plan(s, lo_a, hi_a, np.asarray(out_g, np.int64), whole)


def _pair_by_rank(
    plan: _Plan, qi_text: Sequence[pa.Array], s_text: pa.Array
) -> tuple[_Plan, pa.Array]:
    """The plan of a bucketization whose rows do not pair a record's QIs with its own
    sensitive value, and the published sensitive text of each of its entries.

    The QI table and the sensitive table of Anatomy are linked by the bucket only (Xiao and
    Tao 2006, "Anatomy: simple and effective privacy preservation", VLDB, section 3). Within
    each bucket the records are put in the order of their QI text (then their own value,
    which only breaks ties) and given the bucket's sensitive values in the order of their
    text, by rank: a pairing that is a function of the bucket's two multisets, which the
    release publishes anyway, so it says nothing about who holds which value. Computed on
    the entries (histogram rows), so the warehouse only numbers records as for any split."""
    import pyarrow as pa

    src, lo, hi, grp = (x.tolist() for x in (plan.source, plan.lo, plan.hi, plan.group))
    q_py = [col.to_pylist() for col in qi_text]
    s_py = s_text.to_pylist()
    by_group: dict[int, list[int]] = {}
    for i, g in enumerate(grp):
        by_group.setdefault(g, []).append(i)
    out: tuple[list[int], list[int], list[int], list[int]] = ([], [], [], [])
    out_sv: list[str] = []
    for g, entries in by_group.items():
        entries.sort(key=lambda i: (tuple(c[src[i]] for c in q_py), s_py[src[i]], src[i], lo[i]))
        values: dict[str, int] = {}
        for i in entries:
            values[s_py[src[i]]] = values.get(s_py[src[i]], 0) + hi[i] - lo[i]
        runs = sorted(values.items())
        k, left = 0, runs[0][1] if runs else 0
        for i in entries:
            a = lo[i]
            while a < hi[i]:
                take = min(hi[i] - a, left)
                for lst, v in zip(out, (src[i], a, a + take, g), strict=True):
                    lst.append(v)
                out_sv.append(runs[k][0])
                a += take
                left -= take
                if left == 0 and k + 1 < len(runs):
                    k += 1
                    left = runs[k][1]
    arrays = [np.asarray(x, np.int64) for x in out]
    return _Plan(arrays[0], arrays[1], arrays[2], arrays[3], False), pa.array(out_sv, pa.string())


def write_release(
    engine: Engine,
    source_table: str,
    histogram: Histogram,
    recoding: Recoding,
    target_table: str,
    *,
    missing_as: str | None = None,
    progress: Progress | None = None,
) -> int:
    """Create ``target_table`` in the warehouse holding the release the ``recoding`` of
    ``histogram`` (computed by :func:`histogram` from ``source_table``) decides, and return
    its records (module doc). Columns, all ``TEXT``, as the in-process release has them:
    every QI (its group labels when the recoding publishes it, else its own text: a
    bucketization's exact QIs), then the recoding's other columns (a bucket), then the
    sensitive column's text (``missing_as`` where the source is blank).
    An existing target is replaced only once the new release is complete; the number of
    records of the source (before) and written (after) are checked against the histogram
    and the recoding before anything is committed: a source with more or fewer records
    than its histogram is refused, nothing written (a change that keeps every count is not
    seen here; the re-check of the written release judges what was written)."""
    import pyarrow as pa
    import sqlalchemy as sa
    from sqlalchemy.exc import SQLAlchemyError

    from airflow_privacy.core.cells import check_missing_as

    replacement = check_missing_as(missing_as)
    qis, sensitive = list(histogram.qis), histogram.sensitive
    # (published column, mapping column): every QI, the recoding's others, the sensitive
    layout = [
        (q, f"g{recoding.columns.index(q)}" if q in recoding.columns else f"q{i}")
        for i, q in enumerate(qis)
    ]
    layout += [(c, f"g{j}") for j, c in enumerate(recoding.columns) if c not in qis]
    layout.append((sensitive, "sv"))
    out_cols = [c for c, _ in layout]
    if len(set(out_cols)) != len(out_cols) or len(set(recoding.columns)) != len(recoding.columns):
        raise ValueError("recoding: the group columns repeat or include the sensitive column")
    if any(len(lab) != len(recoding.columns) for lab in recoding.labels):
        raise ValueError("recoding: labels do not match the group columns")
    check_name_length(engine, target_table, "the release table")
    t_schema, t_name = split_name(target_table)
    s_schema, s_name = split_name(source_table)
    if (t_schema, t_name) == (s_schema, s_name):
        raise InputError(f"the release would overwrite the input table {source_table!r}")
    key_cols = [*qis, sensitive]
    types = _columns(engine, source_table, key_cols)
    plan = _plan(histogram, recoding)
    expected = int((plan.hi - plan.lo).sum())
    keys = histogram.source_keys if isinstance(histogram, SqlHistogram) else None
    if keys is None:
        keys = histogram.keys
    s_text = histogram.sensitive_labels if isinstance(histogram, SqlHistogram) else None
    if s_text is None:
        s_text = _text(histogram.keys.column(sensitive), replacement)
    s_has_null = bool(keys.column(sensitive).null_count)
    exact = {m: _tuple_text(histogram, q) for q, m in layout if m.startswith("q")}
    paired: pa.Array | None = None
    if exact:
        plan, paired = _pair_by_rank(plan, list(exact.values()), s_text)

    dialect = engine.dialect.name
    # key columns that can hold -0.0: the mapping carries its sign (negative_zero_flags)
    signed = [i for i, c in enumerate(key_cols) if _can_hold_negative_zero(dialect, types[c])]
    token = secrets.token_hex(4)
    md = sa.MetaData()
    temporary = dialect in TEMPORARY_DIALECTS
    map_kwargs: dict[str, Any] = {}
    if dialect == "postgresql":
        map_kwargs["postgresql_on_commit"] = "DROP"
    mapping = sa.Table(
        f"ap_recoding_{token}",
        md,
        *[sa.Column(f"k{i}", _ddl_type(types[c])) for i, c in enumerate(key_cols)],
        *[sa.Column(f"z{i}", sa.Integer) for i in signed],
        sa.Column("lo", sa.BigInteger),
        sa.Column("hi", sa.BigInteger),
        *[sa.Column(f"g{i}", sa.Text) for i in range(len(recoding.columns))],
        *[sa.Column(m, sa.Text) for m in exact],
        sa.Column("sv", sa.Text),
        prefixes=["TEMPORARY"] if temporary else [],
        schema=None if temporary else t_schema,
        **map_kwargs,
    )
    direct = dialect in TRANSACTIONAL_DDL
    build_name = t_name if direct else _temp_name(t_name, token)
    target = sa.Table(build_name, md, *[sa.Column(c, sa.Text) for c in out_cols], schema=t_schema)
    source = _table(source_table, key_cols)
    names = out_cols

    # the driver's own values are bound as they came (no type's bind processing: SQLite's
    # DATE, for one, would refuse the text its driver returned)
    raw_mapping = sa.table(
        mapping.name, *[sa.column(c.name) for c in mapping.columns], schema=mapping.schema
    )

    def changed(now: int, then: int) -> InputError:
        return InputError(
            f"table {source_table!r} changed since its histogram was taken: {now:,} records "
            f"where {then:,} were expected; nothing written"
        )

    def fill(conn: Connection) -> int:
        now = int(conn.execute(sa.select(sa.func.count()).select_from(source)).scalar_one())
        if now != histogram.records:
            raise changed(now, histogram.records)
        mapping.create(conn)
        labels = recoding.labels
        width = len(key_cols)
        for start in range(0, int(plan.source.shape[0]), INSERT_ROWS):
            # one batch of Python values at a time: memory of INSERT_ROWS mapping rows
            part = slice(start, start + INSERT_ROWS)
            take = pa.array(plan.source[part])
            key_py = [keys.column(c).take(take).to_pylist() for c in key_cols]
            sv = (paired[part] if paired is not None else s_text.take(take)).to_pylist()
            exact_py = {m: text.take(take).to_pylist() for m, text in exact.items()}
            lo, hi = plan.lo[part].tolist(), plan.hi[part].tolist()
            batch: list[dict[str, Any]] = []
            for i, g in enumerate(plan.group[part].tolist()):
                row: dict[str, Any] = {f"k{j}": key_py[j][i] for j in range(width)}
                for j in signed:
                    row[f"z{j}"] = _negative_zero(key_py[j][i])
                row["lo"], row["hi"], row["sv"] = lo[i], hi[i], sv[i]
                for j, v in enumerate(labels[g]):
                    row[f"g{j}"] = v
                for m, values in exact_py.items():
                    row[m] = values[i]
                batch.append(row)
            conn.execute(raw_mapping.insert(), batch)
        if direct:
            target.drop(conn, checkfirst=True)
        target.create(conn)
        key_types = [types[c] for c in key_cols]
        passes = [
            _select(
                conn,
                source,
                mapping,
                key_cols,
                key_types,
                [m for _, m in layout],
                plan.whole,
                nulls,
            )
            for nulls in ((False, True) if s_has_null else (False,))
        ]
        joined = passes[0] if len(passes) == 1 else sa.union_all(*passes)
        sub = joined.subquery("released")
        conn.execute(target.insert().from_select(names, sa.select(*[sub.c[m] for _, m in layout])))
        written = int(conn.execute(sa.select(sa.func.count()).select_from(target)).scalar_one())
        if written != expected:
            raise changed(written, expected)
        return written

    if progress is not None:
        progress(f"writing table {target_table!r} in the database ({expected:,} records)")
    try:
        if direct:
            with engine.begin() as conn:
                return fill(conn)
        try:
            with engine.connect() as conn:
                try:
                    with conn.begin():
                        written = fill(conn)
                finally:
                    _drop_quietly(conn, mapping)
            with engine.begin() as conn:
                _swap(conn, target, t_name, t_schema)
            return written
        except BaseException:
            with engine.connect() as conn:
                _drop_quietly(conn, target)
            raise
    except SQLAlchemyError as exc:
        raise InputError(
            f"cannot write table {target_table!r} in database {_safe_url(engine)!r}: "
            f"{_why(exc)}; the old table, if any, is unchanged"
        ) from None


def _ddl_type(kind: Any) -> Any:
    """A mapping column's type: the source column's, or for a column without one (SQLite)
    ``BLOB``, the SQLite affinity that stores values as they are bound, as an untyped column
    does (SQLAlchemy writes no DDL for a column without a type)."""
    import sqlalchemy as sa

    return sa.LargeBinary() if isinstance(kind, sa.types.NullType) else kind


def _temp_name(name: str, token: str) -> str:
    return f"{name[:40]}__ap_{token}"


def _tuple_text(histogram: Histogram, column: str) -> pa.Array:
    """The text of ``column`` for each warehouse tuple of ``histogram`` (its label)."""
    import pyarrow as pa

    col = histogram.keys.column(column)
    if isinstance(histogram, SqlHistogram) and histogram.source_row is not None:
        col = col.take(pa.array(histogram.source_row))
    return _text(col, None)


def _text(col: Any, replacement: str | None) -> pa.Array:
    """The published text of a sensitive column: its labels, ``replacement`` for blanks."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from airflow_privacy.core.io import blank_mask

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if not pa.types.is_string(col.type):
        col = pa.array([None if v is None else str(v) for v in col.to_pylist()], pa.string())
    _, blank, _ = blank_mask(col)
    if replacement is not None:
        col = pc.if_else(blank, pa.scalar(replacement, pa.string()), col)
    return col


def _select(
    conn: Connection,
    source: sa.TableClause,
    mapping: sa.Table,
    key_cols: Sequence[str],
    key_types: Sequence[Any],
    published: Sequence[str],
    whole: bool,
    nulls: bool,
) -> sa.Select[Any]:
    """``SELECT published... FROM source JOIN mapping`` (the mapping's label columns), on
    every key and the sign of a float zero (:func:`negative_zero_flags`; and, when records
    of a tuple are split, on its record number's range). With a null sensitive value
    (published as ``missing_as``), rows whose sensitive value is null are joined in a
    second pass (``nulls``), so every join stays an equality a hash join can run."""
    import sqlalchemy as sa

    k = [mapping.c[f"k{i}"] for i in range(len(key_cols))]
    if whole:
        src: Any = source
        cols = [source.c[c] for c in key_cols]
    else:
        part = [source.c[c] for c in key_cols]
        part += list(negative_zero_flags(conn, part, key_types).values())
        rn = sa.func.row_number().over(partition_by=part, order_by=part)
        src = sa.select(
            *[source.c[c].label(f"c{i}") for i, c in enumerate(key_cols)], rn.label("rn")
        ).subquery("numbered")
        cols = [src.c[f"c{i}"] for i in range(len(key_cols))]
    cond = [a == b for a, b in zip(cols[:-1], k[:-1], strict=True)]
    cond += [f == mapping.c[f"z{i}"] for i, f in negative_zero_flags(conn, cols, key_types).items()]
    if nulls:
        cond += [cols[-1].is_(None), k[-1].is_(None)]
    else:
        cond.append(cols[-1] == k[-1])
    if not whole:
        cond += [src.c.rn > mapping.c.lo, src.c.rn <= mapping.c.hi]
    out = [mapping.c[m] for m in published]
    return sa.select(*out).select_from(src).join(mapping, sa.and_(*cond))


def _swap(conn: Connection, built: sa.Table, name: str, schema: str | None) -> None:
    """Drop the old target and rename the built table to it (one transaction where the
    dialect runs DDL in transactions)."""
    import sqlalchemy as sa

    old = sa.Table(name, sa.MetaData(), schema=schema)
    old.drop(conn, checkfirst=True)
    prep = conn.dialect.identifier_preparer
    conn.exec_driver_sql(f"ALTER TABLE {prep.format_table(built)} RENAME TO {prep.quote(name)}")


def replace_table(engine: Engine, built: str, target: str) -> None:
    """Put the complete table ``built`` in place of ``target`` (dropped if it exists), in one
    transaction where the dialect runs DDL in transactions (PostgreSQL); both in the same
    schema."""
    import sqlalchemy as sa

    b_schema, b_name = split_name(built)
    t_schema, t_name = split_name(target)
    if b_schema != t_schema:
        raise ValueError("a table is renamed within its schema only")
    with engine.begin() as conn:
        _swap(conn, sa.Table(b_name, sa.MetaData(), schema=b_schema), t_name, t_schema)


def drop_table(engine: Engine, table: str) -> None:
    """Drop ``table`` if it exists (a staging table left by a failed step)."""
    import sqlalchemy as sa

    schema, name = split_name(table)
    with engine.begin() as conn:
        sa.Table(name, sa.MetaData(), schema=schema).drop(conn, checkfirst=True)


def _drop_quietly(conn: Connection, table: sa.Table) -> None:
    """Drop ``table`` if it exists, in its own transaction, ignoring every error."""
    from sqlalchemy.exc import SQLAlchemyError

    with contextlib.suppress(SQLAlchemyError), conn.begin():
        table.drop(conn, checkfirst=True)


# ------------------------------------------------------------------------ DP counts
def bounded_counts(
    engine: Engine,
    table: str,
    columns: Sequence[str],
    *,
    entity: str | None = None,
    bound: int = 1,
    sums: Sequence[Summed] = (),
) -> tuple[pa.Table, npt.NDArray[np.int64]]:
    """``SELECT columns..., COUNT(*) ... GROUP BY columns`` in the database with each
    person's records bounded as :func:`airflow_privacy.core.backends.duck.bounded_counts`
    bounds them (``row_number()`` over ``entity``, in the order of the values, at most
    ``bound``), in one query; a float zero's sign kept (:func:`negative_zero_flags`). The
    values as text (Python's ``str`` of what the driver returns: an integer 17 is ``17``,
    a float 17.5 is ``17.5``); a null or empty value is null (in no key set). With
    ``sums``, each one's clamped whole values added up too (the table's ``SUM_PREFIX{i}``
    columns, as :func:`airflow_privacy.core.backends.duck.bounded_counts`); a summed column
    must have a numeric type. Only counts and sums leave the database."""
    import pyarrow as pa
    import sqlalchemy as sa

    from airflow_privacy.core.dp.marginals import SUM_PREFIX

    cols = list(columns)
    summed = [c for c in dict.fromkeys(x.column for x in sums) if c not in cols]
    wanted = [*cols, *summed, *([entity] if entity is not None else [])]
    types = _columns(engine, table, wanted)
    for x in sums:
        if not isinstance(types[x.column], sa.Integer | sa.Numeric | sa.Float):
            raise InputError(
                f"column {x.column!r} of table {table!r} has type {types[x.column]} and a "
                "summed column must hold numbers (an integer or a real type)"
            )
    t = _table(table, wanted)
    with _reading(engine, table), engine.connect() as conn:
        c = [t.c[x] for x in cols]
        flags = negative_zero_flags(conn, c, [types[x] for x in cols])
        keys = [*c, *flags.values()]
        values = [_clamped(t.c[x.column], x, conn.dialect.name) for x in sums]
        if entity is None:
            totals = [sa.func.sum(v) for v in values]
            query = sa.select(*keys, sa.func.count(), *totals).select_from(t).group_by(*keys)
        else:
            labelled = [k.label(f"k{i}") for i, k in enumerate(keys)]
            labelled += [v.label(f"v{i}") for i, v in enumerate(values)]
            # DuckDB's order: nulls last; -0.0 before 0.0 (equal as numbers)
            order = [sa.nulls_last(x) for x in c] + [f.desc() for f in flags.values()]
            rank = sa.func.row_number().over(partition_by=t.c[entity], order_by=order)
            inner = sa.select(*labelled, rank.label("r")).select_from(t).subquery()
            outer = [inner.c[f"k{i}"] for i in range(len(keys))]
            totals = [sa.func.sum(inner.c[f"v{i}"]) for i in range(len(values))]
            query = (
                sa.select(*outer, sa.func.count(), *totals)
                .where(inner.c.r <= int(bound))
                .group_by(*outer)
            )
        rows = with_zero_signs(list(conn.execute(query)), len(c), list(flags))
    out = {
        name: pa.array([None if r[i] is None or r[i] == "" else str(r[i]) for r in rows],
                       pa.string())
        for i, name in enumerate(cols)
    }  # fmt: skip
    width = len(cols)
    counts = np.asarray([int(r[width]) for r in rows], dtype=np.int64)
    for i in range(len(sums)):
        out[f"{SUM_PREFIX}{i}"] = pa.array([int(r[width + 1 + i] or 0) for r in rows], pa.int64())
    return pa.table(out), counts


def _clamped(column: Any, summed: Summed, dialect: str) -> Any:
    """One record's value of a summed column: clamped to its bounds, rounded to a whole
    number (``floor(v + 0.5)``), a null 0 (:class:`~airflow_privacy.core.dp.marginals.
    Summed`). SQLite may lack ``floor``: there it is written with ``CAST AS INTEGER``,
    which truncates."""
    import sqlalchemy as sa

    v = sa.cast(column, sa.Float)
    low, high = float(summed.low), float(summed.high)
    half = sa.case((v > high, high), (v < low, low), else_=v) + 0.5
    if dialect == "sqlite":
        whole = sa.cast(half, sa.BigInteger)
        floored = whole - sa.case((half < whole, 1), else_=0)
    else:
        floored = sa.cast(sa.func.floor(half), sa.BigInteger)
    return sa.func.coalesce(floored, 0)
