"""The anonymizers' own decisions applied in the warehouse: Adult records in SQLite and
PostgreSQL, anonymized from the SQL histogram (``anonymize_histogram``), the release
written there (``write_release``) and re-counted there (``count``), compared with the
in-process anonymization of the same rows read one by one (the gate's reader): the same
per-group counts, the same released rows for the lattice and Mondrian, the same QI and
sensitive multisets per bucket for a bucketization (whose rows pair them by rank, Xiao and
Tao 2006, section 3)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from airflow_privacy.core import anonymize as anonymize_module
from airflow_privacy.core.backends import sql
from airflow_privacy.core.datasets import adult_hierarchies, adult_path
from airflow_privacy.core.io import read_release
from airflow_privacy.core.model import ReleaseSpec
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.tables import read_table
from tests.conftest_pg import pg_server, pg_url  # noqa: F401

QIS = ["age", "sex", "race", "marital-status", "education"]
S = "occupation"
CASES = [
    ("lattice", [("k-anonymity", {"k": 5})]),
    ("lattice", [("distinct-l-diversity", {"l": 2})]),
    ("mondrian", [("k-anonymity", {"k": 4})]),
    ("bucketize", [("distinct-l-diversity", {"l": 3})]),
]


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'warehouse.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.fixture
def engine(db_url: str) -> Iterator[sa.Engine]:
    if not hasattr(anonymize_module, "anonymize_histogram"):
        pytest.skip("anonymize_histogram (deciding from a histogram) is not in this tree yet")
    eng = sa.create_engine(db_url)
    adult = read_release(adult_path(), [*QIS, S]).slice(0, 800)
    columns = [sa.Column(c, sa.Integer if c == "age" else sa.Text) for c in [*QIS, S]]
    t = sa.Table("adult", sa.MetaData(), *columns)
    rows = adult.to_pylist()
    for r in rows:
        r["age"] = int(r["age"])
    with eng.begin() as conn:
        t.create(conn)
        conn.execute(t.insert(), rows)
    try:
        yield eng
    finally:
        eng.dispose()


def rows_of(engine: sa.Engine, table: str, columns: list[str]) -> Counter[tuple[Any, ...]]:
    t = sa.table(table, *[sa.column(c) for c in columns])
    with engine.connect() as conn:
        return Counter(tuple(r) for r in conn.execute(sa.select(*[t.c[c] for c in columns])))


def sides(release: Counter[tuple[Any, ...]]) -> tuple[Counter[Any], Counter[Any]]:
    """Per bucket (column 5), the QI multiset and the sensitive multiset."""
    qi: Counter[Any] = Counter()
    s: Counter[Any] = Counter()
    for key, n in release.items():
        qi[(key[5], key[:5])] += n
        s[(key[5], key[6])] += n
    return qi, s


@pytest.mark.parametrize(("method", "criteria"), CASES)
def test_the_warehouse_release_is_the_in_process_release(
    engine: sa.Engine, db_url: str, method: Any, criteria: Any
) -> None:
    hier = {q: h for q, h in adult_hierarchies().items() if q in QIS}
    hier_or_none = None if method == "bucketize" else hier
    table = read_table(ReleaseRef(sql_table="adult", conn=db_url), None, GateContext())
    old = anonymize_module.anonymize(table, QIS, S, method, criteria, hier_or_none, 0)
    h = sql.histogram(engine, "adult", QIS, S)
    decide: Any = vars(anonymize_module)["anonymize_histogram"]
    new = decide(h, method, criteria, hier_or_none, 0)
    rec = new.recoding
    assert rec is not None
    assert sql.write_release(engine, "adult", h, rec, "release") == old.release.num_rows
    spec = ReleaseSpec(sensitive=S, group_columns=tuple(old.group_columns))
    b = sql.count(engine, "release", spec).normalized()
    want = old.bucketization.normalized()
    assert (b.groups, b.values, b.counts.tolist()) == (
        want.groups, want.values, want.counts.tolist(),
    )  # fmt: skip
    cols = list(old.release.column_names)
    got = rows_of(engine, "release", cols)
    mine = Counter(zip(*[[str(v) for v in old.release.column(c).to_pylist()] for c in cols],
                       strict=True))  # fmt: skip
    if method == "bucketize":
        assert sides(got) == sides(mine)
    else:
        assert got == mine
