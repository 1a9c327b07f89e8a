"""The SQL backend (``airflow_privacy.core.backends.sql``) on SQLite and on a real
PostgreSQL: the histogram gives the anonymizers what reading the table row by row gave them,
the release written in the warehouse holds exactly what the recoding decides, a failed write
leaves the old table untouched, and names and values shaped like SQL stay data.

Every expectation is computed independently from the rows (a plain ``Counter`` of label
tuples, the definition of the histogram and of ``n_b(s)``, Martin et al. 2007, section
2.1), and compared with the gate's current row-by-row reader (``gate.tables.read_table``)
and SQL counter (``gate.tables.read_counts``)."""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.anonymize.encoding import Encoded, encode
from airflow_privacy.core.anonymize.plan import Recoding
from airflow_privacy.core.backends import sql
from airflow_privacy.core.backends.histogram import Histogram
from airflow_privacy.core.model import ReleaseSpec
from airflow_privacy.errors import InputError
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.tables import read_counts, read_table
from tests.conftest_pg import pg_server, pg_url  # noqa: F401

TEXT = ["a", "b", "é", "日本", "'", '"', "x y", "'; DROP TABLE t; --", "NULL", "*", "1"]


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'warehouse.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.fixture
def engine(db_url: str) -> Iterator[sa.Engine]:
    eng = sa.create_engine(db_url)
    try:
        yield eng
    finally:
        eng.dispose()


def load(
    engine: sa.Engine, name: str, columns: dict[str, Any], rows: Sequence[Sequence[Any]]
) -> None:
    schema, table = sql.split_name(name)
    t = sa.Table(table, sa.MetaData(), *[sa.Column(c, k) for c, k in columns.items()],
                 schema=schema)  # fmt: skip
    with engine.begin() as conn:
        t.drop(conn, checkfirst=True)
        t.create(conn)
        if rows:
            conn.execute(t.insert(), [dict(zip(columns, r, strict=True)) for r in rows])


def labels_of(enc: Encoded) -> Counter[tuple[str, ...]]:
    """Records per label tuple of an encoded input (weights counted)."""
    cols = [*enc.qis, enc.sensitive]
    out: Counter[tuple[str, ...]] = Counter()
    w = enc.row_weights()
    for r in range(enc.rows):
        out[tuple(c.values[int(c.codes[r])] for c in cols)] += int(w[r])
    return out


def expected_labels(rows: Sequence[Sequence[Any]], missing_as: str | None = None) -> Counter[Any]:
    """The definition: each record's values as text (``str``), blanks as ``missing_as``."""
    out: Counter[tuple[str, ...]] = Counter()
    for r in rows:
        *q, s = r
        text = None if s is None else str(s)
        if text is None or not text.strip():
            text = missing_as
        out[(*[str(v) for v in q], str(text))] += 1
    return out


def row_level(url: str, name: str, qis: Sequence[str], s: str) -> Encoded:
    """The current path: the gate reads the table row by row, the anonymizer encodes it."""
    table = read_table(ReleaseRef(sql_table=name, conn=url), None, GateContext())
    return encode(table, qis, s)


def release_counts(engine: sa.Engine, name: str, columns: Sequence[str]) -> Counter[Any]:
    """The written table's records per row, read back plainly."""
    t = sql._table(name, columns)
    with engine.connect() as conn:
        return Counter(tuple(r) for r in conn.execute(sa.select(*[t.c[c] for c in columns])))


def expected_release(h: Histogram, rec: Recoding, missing_as: str | None = None) -> Counter[Any]:
    """The release the recoding decides, from its definition: ``count[i]`` records of
    histogram row ``row[i]`` get every QI (the group's label where the recoding publishes
    it, else the row's own text), the recoding's other columns and their sensitive text."""
    enc = h.encoded()
    out: Counter[tuple[str, ...]] = Counter()
    for r, g, c in zip(rec.row.tolist(), rec.group.tolist(), rec.count.tolist(), strict=True):
        label = dict(zip(rec.columns, rec.labels[g], strict=True))
        own = {q.name: q.values[int(q.codes[r])] for q in enc.qis}
        qis = [label.get(q, own[q]) for q in enc.qi_names]
        others = [label[c] for c in rec.columns if c not in own]
        s = enc.sensitive.values[int(enc.sensitive.codes[r])]
        out[(*qis, *others, s)] += c
    return out


def sides(release: Counter[Any], h: Histogram, rec: Recoding) -> Any:
    """What a release says: its rows when the QIs are generalized; for a bucketization
    (QIs as they are) each group's QI multiset and its sensitive multiset, which are all it
    may say (Xiao and Tao 2006, section 3): its rows pair them by rank, not by record."""
    if all(q in rec.columns for q in h.qis):
        return release
    cols = published(h, rec)
    g = [cols.index(c) for c in rec.columns]
    q_side: Counter[Any] = Counter()
    s_side: Counter[Any] = Counter()
    for key, n in release.items():
        group = tuple(key[i] for i in g)
        q_side[(group, key[: len(h.qis)])] += n
        s_side[(group, key[-1])] += n
    return q_side, s_side


def assert_release(engine: sa.Engine, out: str, h: Histogram, rec: Recoding) -> None:
    got = release_counts(engine, out, published(h, rec))
    assert sides(got, h, rec) == sides(expected_release(h, rec), h, rec)


def published(h: Histogram, rec: Recoding) -> list[str]:
    """The release's columns: every QI, the recoding's others, the sensitive column."""
    return [*h.qis, *[c for c in rec.columns if c not in h.qis], h.sensitive]


def generalizing(h: Histogram, width: int, min_size: int = 1) -> Recoding:
    """A full-domain-like recoding: each QI label cut to its first ``width`` characters
    (a fixed hierarchy level), groups of fewer than ``min_size`` records suppressed."""
    enc = h.encoded()
    w = enc.row_weights()
    keys = [
        tuple(q.values[int(q.codes[r])][:width] + ("*" if width < 9 else "") for q in enc.qis)
        for r in range(enc.rows)
    ]
    size: Counter[tuple[str, ...]] = Counter()
    for r, k in enumerate(keys):
        size[k] += int(w[r])
    groups = {k: i for i, k in enumerate(sorted(k for k in size if size[k] >= min_size))}
    rows = [r for r in range(enc.rows) if keys[r] in groups]
    return Recoding(
        columns=enc.qi_names,
        labels=tuple(groups),
        row=np.asarray(rows, np.int64),
        group=np.asarray([groups[keys[r]] for r in rows], np.int64),
        count=np.asarray([int(w[r]) for r in rows], np.int64),
    )


def splitting(h: Histogram, buckets: int, keep: float = 1.0) -> Recoding:
    """A bucketization-like recoding: the records of each row dealt round-robin over
    ``buckets`` buckets (a row of several records is split), a share suppressed."""
    rows: list[int] = []
    groups: list[int] = []
    counts: list[int] = []
    turn = 0
    for r, c in enumerate(h.counts.tolist()):
        c = max(1, int(c * keep)) if keep < 1 else int(c)
        per: Counter[int] = Counter()
        for _ in range(c):
            per[turn % buckets] += 1
            turn += 1
        for g in sorted(per):
            rows.append(r)
            groups.append(g)
            counts.append(per[g])
    return Recoding(
        columns=("bucket",),
        labels=tuple((f"B{g}",) for g in range(buckets)),
        row=np.asarray(rows, np.int64),
        group=np.asarray(groups, np.int64),
        count=np.asarray(counts, np.int64),
    )


def same(a: Any, b: Any) -> None:
    """Two bucketizations (or two error messages) are equal."""
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    assert (a.group_columns, a.sensitive, a.groups, a.values) == (
        b.group_columns, b.sensitive, b.groups, b.values,
    )  # fmt: skip
    assert a.counts.tolist() == b.counts.tolist()


def name() -> str:
    return f"t_{secrets.token_hex(4)}"


# ------------------------------------------------------------------------- histogram
COLUMNS = {"age": sa.Integer, "zip code": sa.Text, 'dis"ease': sa.Text}
QIS = ["age", "zip code"]
S = 'dis"ease'
SENSITIVE = [*TEXT, "", "  ", "\t"]
row = st.tuples(
    st.integers(-3, 60), st.sampled_from(TEXT), st.one_of(st.sampled_from(SENSITIVE), st.none())
)
SLOW_FIXTURE = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


@settings(max_examples=25, deadline=None, suppress_health_check=SLOW_FIXTURE)
@given(rows=st.lists(row, min_size=1, max_size=40))
def test_histogram_gives_the_labels_of_the_row_by_row_path(
    engine: sa.Engine, db_url: str, rows: list[tuple[Any, ...]]
) -> None:
    t = name()
    load(engine, t, COLUMNS, rows)
    if any(r[2] is None for r in rows):  # refused by the row-by-row path too
        with pytest.raises(InputError, match=r"missing value"):
            row_level(db_url, t, QIS, S)
    if any(r[2] is None or not r[2].strip() for r in rows):
        # blank: refused unless published as missing_as (the file readers' rule; the
        # row-by-row SQL path published an empty text as it was, docs/warehouses.md)
        with pytest.raises(InputError, match=r"blank cells? .*--missing-as"):
            sql.histogram(engine, t, QIS, S)
        h = sql.histogram(engine, t, QIS, S, missing_as="?")
        assert labels_of(h.encoded()) == expected_labels(rows, "?")
    else:
        h = sql.histogram(engine, t, QIS, S)
        enc = h.encoded()
        assert labels_of(enc) == labels_of(row_level(db_url, t, QIS, S))
        assert labels_of(enc) == expected_labels(rows)
    enc = h.encoded()
    assert enc.n == len(rows) == h.records
    assert len(set(labels_of(enc))) == enc.rows  # one row per distinct label tuple
    assert h.dropped == ()


def test_histogram_refuses_missing_qi_values_as_the_row_by_row_path(
    engine: sa.Engine, db_url: str
) -> None:
    t = name()
    load(engine, t, COLUMNS, [(1, None, "a"), (2, None, "a"), (None, "b", "a"), (3, "c", "b")])
    with pytest.raises(InputError) as old:
        row_level(db_url, t, QIS, S)
    with pytest.raises(InputError) as new:
        sql.histogram(engine, t, QIS, S)
    assert (
        str(new.value)
        == str(old.value)
        == ("column 'age' has 1 missing value(s); fill or drop them first")
    )
    with pytest.raises(InputError, match="'zip code' has 2 missing"):
        sql.histogram(engine, t, ["zip code", "age"], S)
    load(engine, t, COLUMNS, [])
    with pytest.raises(InputError, match=r"^the input table is empty \(0 records\)$"):
        sql.histogram(engine, t, QIS, S)
    with pytest.raises(InputError, match="quasi-identifier 'nope' does not exist"):
        sql.histogram(engine, t, ["nope"], S)
    with pytest.raises(InputError, match="table 'no_such' does not exist"):
        sql.histogram(engine, "no_such", QIS, S)


def test_histogram_of_other_types_uses_the_drivers_text(engine: sa.Engine, db_url: str) -> None:
    """Floats, booleans, dates: labels are ``str`` of the driver's values, as the row-by-row
    path makes them; they are joined back on their typed values."""
    import datetime

    t = name()
    cols = {"x": sa.Float, "flag": sa.Boolean, "day": sa.Date, "s": sa.Text, "extra": sa.Text}
    day = datetime.date(2024, 2, 29)
    rows = [(1.0, True, day, "a", "p"), (1.0, True, day, "a", "q"), (2.5, False, day, "b", "r")]
    load(engine, t, cols, rows)
    h = sql.histogram(engine, t, ["x", "flag", "day"], "s")
    assert h.dropped == ("extra",)
    enc = h.encoded()
    assert labels_of(enc) == labels_of(row_level(db_url, t, ["x", "flag", "day"], "s"))
    # what each driver returns: SQLite stores a boolean as 1 and a date as its text
    flag = "1" if engine.dialect.name == "sqlite" else "True"
    assert labels_of(enc)[("1.0", flag, "2024-02-29", "a")] == 2
    rec = generalizing(h, 9)
    assert sql.write_release(engine, t, h, rec, t + "_out") == 3
    got = release_counts(engine, t + "_out", ["x", "flag", "day", "s"])
    assert got == expected_release(h, rec)


# ----------------------------------------------------------------------- write-back
@settings(max_examples=25, deadline=None, suppress_health_check=SLOW_FIXTURE)
@given(
    rows=st.lists(row, min_size=1, max_size=40),
    how=st.sampled_from(["generalize", "suppress", "split", "split-suppress"]),
)
def test_written_release_holds_what_the_recoding_decides(
    engine: sa.Engine, db_url: str, rows: list[tuple[Any, ...]], how: str
) -> None:
    t, out = name(), name()
    load(engine, t, COLUMNS, rows)
    missing = "?" if any(r[2] is None or not r[2].strip() for r in rows) else None
    h = sql.histogram(engine, t, QIS, S, missing_as=missing)
    rec = {
        "generalize": lambda: generalizing(h, 1),
        "suppress": lambda: generalizing(h, 1, min_size=3),
        "split": lambda: splitting(h, 3),
        "split-suppress": lambda: splitting(h, 2, keep=0.5),
    }[how]()
    written = sql.write_release(engine, t, h, rec, out, missing_as=missing)
    assert written == rec.records
    want = expected_release(h, rec, missing)
    assert sides(release_counts(engine, out, published(h, rec)), h, rec) == sides(want, h, rec)
    if not rec.records:
        return
    # re-checked on the warehouse's counts, as the gate's SQL check counts them
    spec = ReleaseSpec(sensitive=S, group_columns=rec.columns)
    b = sql.count(engine, out, spec)
    old = read_counts(ReleaseRef(sql_table=out, conn=db_url), spec, GateContext())
    same(b.normalized(), old.normalized())
    cells = Counter({(*g, v): int(b.counts[i, j]) for i, g in enumerate(b.groups)
                     for j, v in enumerate(b.values) if b.counts[i, j]})  # fmt: skip
    at = [published(h, rec).index(c) for c in [*rec.columns, S]]
    by_group: Counter[tuple[str, ...]] = Counter()
    for key, n in want.items():
        by_group[tuple(key[i] for i in at)] += n
    assert cells == by_group


def test_written_columns_are_text_in_order(engine: sa.Engine) -> None:
    t, out = name(), name()
    load(engine, t, COLUMNS, [(1, "a", "x"), (2, "b", "y"), (2, "b", "y")])
    h = sql.histogram(engine, t, QIS, S)
    rec = splitting(h, 2)
    assert sql.write_release(engine, t, h, rec, out) == 3
    cols = sa.inspect(engine).get_columns(out)
    assert [c["name"] for c in cols] == [*QIS, "bucket", S]
    assert all(isinstance(c["type"], sa.Text | sa.String) for c in cols)


def test_blank_sensitive_values_published_as_missing_as(engine: sa.Engine) -> None:
    """NULL, '' and '  ' are one published value; records of each split over buckets."""
    t, out = name(), name()
    rows = [(1, "a", None), (1, "a", ""), (1, "a", "  "), (1, "a", "  "), (2, "b", "v")]
    load(engine, t, COLUMNS, rows)
    h = sql.histogram(engine, t, QIS, S, missing_as="(none)")
    assert isinstance(h, sql.SqlHistogram) and h.source_row is not None
    assert labels_of(h.encoded()) == expected_labels(rows, "(none)")
    assert h.counts.tolist() == [4, 1]
    rec = splitting(h, 3)
    assert sql.write_release(engine, t, h, rec, out, missing_as="(none)") == 5
    assert_release(engine, out, h, rec)
    assert release_counts(engine, out, ["bucket", S]) == Counter(
        {("B0", "(none)"): 2, ("B1", "(none)"): 1, ("B2", "(none)"): 1, ("B1", "v"): 1}
    )


# -------------------------------------------------------------------------- failures
def test_failure_mid_write_leaves_the_old_table_untouched(engine: sa.Engine) -> None:
    t, out = name(), name()
    load(engine, t, COLUMNS, [(1, "a", "x"), (2, "b", "y"), (2, "b", "z")])
    load(engine, out, {"old": sa.Text}, [("kept",), ("kept too",)])
    h = sql.histogram(engine, t, QIS, S)
    rec = splitting(h, 2)

    def fail(conn: Any, cursor: Any, statement: str, *args: Any) -> Any:
        if "INSERT INTO" in statement.upper() and "SELECT" in statement.upper():
            return "SELECT * FROM no_such_table_here", args[0]
        return statement, args[0]

    sa.event.listen(engine, "before_cursor_execute", fail, retval=True)
    try:
        with pytest.raises(InputError, match="old table, if any, is unchanged") as err:
            sql.write_release(engine, t, h, rec, out)
    finally:
        sa.event.remove(engine, "before_cursor_execute", fail)
    assert "no_such_table" not in str(err.value)  # the driver's text is not quoted
    assert release_counts(engine, out, ["old"]) == Counter({("kept",): 1, ("kept too",): 1})
    left = set(sa.inspect(engine).get_table_names())
    assert not any("__ap_" in n or n.startswith("ap_recoding_") for n in left)


def test_a_source_changed_since_its_histogram_is_refused(engine: sa.Engine) -> None:
    t, out = name(), name()
    load(engine, t, COLUMNS, [(1, "a", "x"), (2, "b", "y")])
    load(engine, out, {"old": sa.Text}, [("kept",)])
    h = sql.histogram(engine, t, QIS, S)
    with engine.begin() as conn:
        conn.execute(sql._table(t, list(COLUMNS)).insert().values(
            {"age": 2, "zip code": "b", S: "y"}))  # fmt: skip
    with pytest.raises(InputError, match="changed since its histogram was taken"):
        sql.write_release(engine, t, h, splitting(h, 1), out)
    assert release_counts(engine, out, ["old"]) == Counter({("kept",): 1})


def test_replaces_an_existing_release(engine: sa.Engine) -> None:
    t, out = name(), name()
    load(engine, t, COLUMNS, [(1, "a", "x"), (2, "b", "y")])
    load(engine, out, {"old": sa.Text}, [("kept",)])
    h = sql.histogram(engine, t, QIS, S)
    rec = generalizing(h, 9)
    assert sql.write_release(engine, t, h, rec, out) == 2
    assert release_counts(engine, out, [*QIS, S]) == expected_release(h, rec)
    with pytest.raises(InputError, match="would overwrite the input"):
        sql.write_release(engine, t, h, rec, t)


def test_inconsistent_recodings_are_bugs(engine: sa.Engine) -> None:
    t = name()
    load(engine, t, COLUMNS, [(1, "a", "x")])
    h = sql.histogram(engine, t, QIS, S)
    zero, one, two = (np.asarray([i], np.int64) for i in range(3))
    too_many = Recoding(("g",), (("*",),), zero, zero, two)
    with pytest.raises(ValueError, match="more records"):
        sql.write_release(engine, t, h, too_many, name())
    no_label = Recoding(("g",), (("*",),), zero, one, one)
    with pytest.raises(ValueError, match="without labels"):
        sql.write_release(engine, t, h, no_label, name())


# ----------------------------------------------------------------- names shaped like SQL
WEIRD = ['t"; DROP TABLE victim; --', "ta ble", "tåble ü 日本", "T'x"]


@pytest.mark.parametrize("weird", WEIRD)
def test_names_and_values_shaped_like_sql_stay_data(engine: sa.Engine, weird: str) -> None:
    victim = sa.Table("victim", sa.MetaData(), sa.Column("v", sa.Text))
    with engine.begin() as conn:
        victim.create(conn, checkfirst=True)
    cols = {weird: sa.Integer, "q'; --": sa.Text, 's"; DROP TABLE victim; --': sa.Text}
    src, out = weird, weird + " out"
    rows = [(1, "'; DROP TABLE victim; --", "x"), (1, "'; DROP TABLE victim; --", "x"),
            (2, '"', "'); DELETE FROM victim; --")]  # fmt: skip
    load(engine, src, cols, rows)
    qis, s = [weird, "q'; --"], 's"; DROP TABLE victim; --'
    h = sql.histogram(engine, src, qis, s)
    assert labels_of(h.encoded()) == expected_labels(rows)
    for rec in (generalizing(h, 9), splitting(h, 2)):
        assert sql.write_release(engine, src, h, rec, out) == 3
        assert_release(engine, out, h, rec)
    assert sa.inspect(engine).has_table("victim")


def test_schema_qualified_names_on_postgresql(pg_url: str) -> None:  # noqa: F811
    engine = sa.create_engine(pg_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.schema.CreateSchema("my schema"))
        src, out = "my schema.src", "my schema.out"
        load(engine, src, COLUMNS, [(1, "a", "x"), (1, "a", "x"), (2, "b", "y")])
        h = sql.histogram(engine, src, QIS, S)
        rec = splitting(h, 2)
        assert sql.write_release(engine, src, h, rec, out) == 3
        assert_release(engine, out, h, rec)
        assert sa.inspect(engine).has_table("out", schema="my schema")
        spec = ReleaseSpec(sensitive=S, group_columns=("bucket",))
        assert int(sql.count(engine, out, spec).counts.sum()) == 3
    finally:
        engine.dispose()


def test_count_matches_the_gates_sql_count(engine: sa.Engine, db_url: str) -> None:
    t = name()
    rows = [(1, "a", "x"), (1, "a", " "), (2, "b", None), (2, "b", "y")]
    load(engine, t, COLUMNS, rows)
    spec = ReleaseSpec(sensitive=S, group_columns=tuple(QIS))
    ref = ReleaseRef(sql_table=t, conn=db_url)
    for missing in (None, "?"):
        try:
            old: Any = read_counts(ref, spec, GateContext(), missing_as=missing)
        except InputError as exc:
            old = str(exc)
        try:
            new: Any = sql.count(engine, t, spec, missing_as=missing)
        except InputError as exc:
            new = str(exc)
        same(new, old)
    with pytest.raises(InputError, match="column 'nope' does not exist in table"):
        sql.count(engine, t, ReleaseSpec(sensitive="nope", group_columns=("age",)))


def test_a_plain_histogram_of_int_and_text_keys_is_written_too(engine: sa.Engine) -> None:
    """A :class:`Histogram` built elsewhere (no warehouse tuples kept): its typed int and
    text keys are joined on directly."""
    t, out = name(), name()
    rows = [(1, "a", "x"), (1, "a", "x"), (2, "é", "'"), (3, '"', "x")]
    load(engine, t, COLUMNS, rows)
    h = sql.histogram(engine, t, QIS, S)
    plain = Histogram(h.qis, h.sensitive, h.keys, h.counts)
    for rec in (generalizing(plain, 9), splitting(plain, 2, keep=0.5)):
        assert sql.write_release(engine, t, plain, rec, out) == rec.records
        assert_release(engine, out, plain, rec)


def test_a_bucketization_does_not_pair_a_records_qis_with_its_own_value(
    engine: sa.Engine,
) -> None:
    """Within a bucket the QI side and the sensitive side are paired by rank (each in its
    own order), so a row's sensitive value is not its record's: here every record's value
    is the reverse of its QI's order, and no published row keeps a record's pair."""
    t, out = name(), name()
    rows = [(1, "a", "z"), (2, "b", "y"), (3, "c", "x"), (4, "d", "w")]
    load(engine, t, COLUMNS, rows)
    h = sql.histogram(engine, t, QIS, S)
    rec = splitting(h, 1)
    assert sql.write_release(engine, t, h, rec, out) == 4
    got = release_counts(engine, out, published(h, rec))
    assert got == Counter({("1", "a", "B0", "w"): 1, ("2", "b", "B0", "x"): 1,
                           ("3", "c", "B0", "y"): 1, ("4", "d", "B0", "z"): 1})  # fmt: skip
    assert not set(got) & {(str(a), b, "B0", c) for a, b, c in rows}
