"""``-0.0`` and ``0.0`` in a float column: one rule on every backend, whatever the row order.

The rule: a float zero keeps its sign, as a released file shows it (``-0.0`` is written, and
read back, as ``-0.0``), so the two are different values, as the text ``-0`` and ``0`` of a
CSV file are. SQL finds ``-0.0 = 0.0`` and its ``GROUP BY`` merges them under whichever sign
its first row has: before this rule, the check of a PostgreSQL table passed or failed on
the same rows in another order.

Expected counts come from the definition (a ``Counter`` of each record's ``(str(q), s)``,
Martin et al. 2007, section 2.1's ``n_b(s)``), never from another backend. Five backends,
two row orders each: Arrow, DuckDB and Spark on a Parquet file; SQLite (an untyped column,
the only kind SQLite stores ``-0.0`` in) and PostgreSQL (``double precision``) tables,
through the gate's push-down count, the core ``count``, the anonymizer's histogram and a
release written back in the warehouse.
"""

from __future__ import annotations

import math
import secrets
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from airflow_privacy.core.anonymize.plan import Recoding
from airflow_privacy.core.backends import count_release, sql
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.tables import read_counts
from tests.conftest_pg import pg_server, pg_url  # noqa: F401

#: A float QI ``q`` with both zeros and a text sensitive column ``s``: 3 records of
#: ``(-0.0, a)``, 2 of ``(0.0, a)``, one each of ``(0.0, b)`` and ``(-0.0, b)``.
ROWS: list[tuple[float, str]] = [
    (-0.0, "a"), (0.0, "a"), (0.0, "b"), (-0.0, "b"), (-0.0, "a"), (1.5, "a"), (1.5, "b"),
    (0.0, "a"), (-0.0, "a"), (2.5, "b"),
]  # fmt: skip
ORDERS = {"forward": ROWS, "reversed": ROWS[::-1], "positive-first": sorted(ROWS, key=str)}
SPEC = ReleaseSpec("s", ("q",))


def label(v: float) -> str:
    """A value's label: its text with its sign (Python's ``str``, as every backend writes
    it)."""
    return str(v)


def expected(rows: list[tuple[float, str]]) -> Counter[tuple[str, str]]:
    return Counter((label(q), s) for q, s in rows)


def cells(b: Bucketization) -> Counter[tuple[str, str]]:
    out: Counter[tuple[str, str]] = Counter()
    for i, g in enumerate(b.groups):
        for j, v in enumerate(b.values):
            if b.counts[i, j]:
                out[(g[0], v)] += int(b.counts[i, j])
    return out


def test_the_rows_hold_both_zeros() -> None:
    signs = {math.copysign(1.0, q) for q, _ in ROWS if q == 0}
    assert signs == {1.0, -1.0}
    assert expected(ROWS)[("-0.0", "a")] == 3 and expected(ROWS)[("0.0", "a")] == 2


# -------------------------------------------------------------------- files: three backends
def parquet(tmp_path: Path, rows: list[tuple[float, str]]) -> Path:
    path = tmp_path / f"r-{secrets.token_hex(3)}.parquet"
    table = pa.table({"q": pa.array([q for q, _ in rows], pa.float64()),
                      "s": [s for _, s in rows]})  # fmt: skip
    pq.write_table(table, path)
    return path


@pytest.mark.parametrize("order", list(ORDERS))
@pytest.mark.parametrize("backend", ["arrow", "duckdb"])
def test_file_backends_keep_the_sign(tmp_path: Path, backend: str, order: str) -> None:
    rows = ORDERS[order]
    b, used = count_release(parquet(tmp_path, rows), SPEC, requested=backend)
    assert used == backend
    assert cells(b) == expected(rows)


@pytest.mark.parametrize("order", list(ORDERS))
def test_spark_keeps_the_sign(spark: Any, tmp_path: Path, order: str) -> None:
    rows = ORDERS[order]
    b, used = count_release(parquet(tmp_path, rows), SPEC, requested="spark")
    assert used == "spark"
    assert cells(b) == expected(rows)


# -------------------------------------------------------------------- SQL: two databases
@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'warehouse.db'}"
    else:
        url = request.getfixturevalue("pg_url")
    eng = sa.create_engine(url)
    try:
        yield eng
    finally:
        eng.dispose()


def load(engine: sa.Engine, rows: list[tuple[float, str]]) -> str:
    """A table ``q`` float (SQLite: untyped, which keeps ``-0.0``; a ``REAL`` column stores
    it as ``0.0``), ``s`` text, the rows inserted in the given order; its name."""
    name = f"t_{secrets.token_hex(4)}"
    q_type = "" if engine.dialect.name == "sqlite" else "double precision"
    t = sa.table(name, sa.column("q"), sa.column("s"))
    with engine.begin() as conn:
        conn.exec_driver_sql(f"CREATE TABLE {name} (q {q_type}, s TEXT)")
        for q, s in rows:  # one statement per row: the table's physical order is the order
            conn.execute(t.insert(), {"q": q, "s": s})
    with engine.connect() as conn:
        stored = [r[0] for r in conn.execute(sa.select(t.c.q))]
    assert [math.copysign(1.0, v) for v in stored] == [math.copysign(1.0, q) for q, _ in rows]
    return name


@pytest.mark.parametrize("order", list(ORDERS))
def test_sql_counts_keep_the_sign(engine: sa.Engine, order: str) -> None:
    rows = ORDERS[order]
    name = load(engine, rows)
    ref = ReleaseRef(sql_table=name, conn=engine.url.render_as_string(hide_password=False))
    assert cells(read_counts(ref, SPEC, GateContext())) == expected(rows)
    assert cells(sql.count(engine, name, SPEC)) == expected(rows)
    got = Counter({(label(r[0]), r[1]): r[2] for r in sql.group_counts(engine, name, ["q", "s"])})
    assert got == expected(rows)


@pytest.mark.parametrize("order", list(ORDERS))
def test_sql_histogram_and_write_back_keep_the_sign(engine: sa.Engine, order: str) -> None:
    """The anonymizer's histogram has one row per signed tuple; a recoding that publishes
    every record under its own ``q`` label (records of each tuple split over two groups
    where it has more than one, so the write-back's record numbering is exercised) writes
    each record once, under its own sign."""
    rows = ORDERS[order]
    name = load(engine, rows)
    h = sql.histogram(engine, name, ["q"], "s")
    enc = h.encoded()
    w = enc.row_weights()
    got: Counter[tuple[str, str]] = Counter()
    for r in range(enc.rows):
        got[(enc.qis[0].values[int(enc.qis[0].codes[r])],
             enc.sensitive.values[int(enc.sensitive.codes[r])])] += int(w[r])  # fmt: skip
    assert got == expected(rows)
    labels: list[tuple[str, ...]] = []
    out_rows, groups, counts = [], [], []
    for r in range(enc.rows):
        q = enc.qis[0].values[int(enc.qis[0].codes[r])]
        n = int(w[r])
        parts = [n] if n == 1 else [1, n - 1]
        for k, c in enumerate(parts):
            labels.append((f"{q}#{k}",))
            out_rows.append(r)
            groups.append(len(labels) - 1)
            counts.append(c)
    rec = Recoding(("q",), tuple(labels), np.asarray(out_rows, np.int64),
                   np.asarray(groups, np.int64), np.asarray(counts, np.int64))  # fmt: skip
    target = f"out_{secrets.token_hex(4)}"
    assert sql.write_release(engine, name, h, rec, target) == len(rows)
    t = sa.table(target, sa.column("q"), sa.column("s"))
    with engine.connect() as conn:
        out = conn.execute(sa.select(t.c.q, t.c.s)).all()
    written = Counter((str(q).split("#")[0], s) for q, s in out)
    assert written == expected(rows)


# ------------------------------------------------------- the verdicts: check and risk
def _url(engine: sa.Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


@pytest.mark.parametrize("order", list(ORDERS))
def test_check_and_risk_verdicts_equal_the_files(
    engine: sa.Engine, tmp_path: Path, order: str
) -> None:
    """The check's verdict and results and the risk step's numbers of the table equal the
    Parquet file's on the same rows, in every order (the sign kept: ``-0.0`` has 4
    records, ``0.0`` 3, ``1.5`` 2, ``2.5`` one)."""
    from airflow_privacy.gate.steps.check import CheckRequest, run_check
    from airflow_privacy.gate.steps.risk import RiskRequest, run_risk

    rows = ORDERS[order]
    table = ReleaseRef(sql_table=load(engine, rows), conn=_url(engine))
    file = ReleaseRef(path=str(parquet(tmp_path, rows)))
    ctx = GateContext()

    def check(ref: ReleaseRef, criteria: list[str]) -> Any:
        return run_check(CheckRequest(release=ref, sensitive="s", group_columns=["q"],
                                      criteria=criteria), ctx)  # fmt: skip

    for criterion in ("k-anonymity:k=3", "k-anonymity:k=4", "distinct-l-diversity:l=2",
                      "ck-safety:c=0.7,k=1"):  # fmt: skip
        criteria = [criterion]
        a, b = check(table, criteria), check(file, criteria)
        assert (a.safe, a.outcome) == (b.safe, b.outcome), criteria
        assert a.results == b.results, criteria
    assert check(table, ["k-anonymity:k=4"]).safe is False
    ra = run_risk(RiskRequest(release=table, qis=["q"]), ctx)
    rb = run_risk(RiskRequest(release=file, qis=["q"]), ctx)
    assert ra.details["measures"] == rb.details["measures"]
    assert ra.details["suda"] == rb.details["suda"]
