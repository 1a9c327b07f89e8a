"""A release that never leaves PostgreSQL, end to end through ``dag.test`` (slow): the input
table is anonymized in the database into a release table, the attempt and the check count
it there, and the gate publishes it as a table, or blocks it. The gate fails closed: a
release anonymized to weaker criteria than the check's is blocked (red) and no published
table appears; anonymized to the check's criteria it is published (green) and the published
table holds exactly the checked rows."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from tests.airflow.release_runs import (  # noqa: F401  (the module's fixture)
    airflow_home,
    drive,
    envelope,
    green,
    ledger_state,
)
from tests.conftest_pg import PgServer, pg_server, pg_url  # noqa: F401  (fixtures)
from tests.policy_setup import record_policy

WAREHOUSE_DAGS = Path(__file__).resolve().parent / "warehouse_dags"
QIS = ["age", "marital-status", "race", "sex"]


def rows(url: str, table: str) -> Counter[tuple[Any, ...]]:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        out = Counter(tuple(r) for r in conn.execute(sa.text(f'SELECT * FROM "{table}"')))
    engine.dispose()
    return out


def tables(url: str) -> list[str]:
    engine = sa.create_engine(url)
    names = sa.inspect(engine).get_table_names()
    engine.dispose()
    return sorted(names)


def test_a_release_anonymized_checked_and_published_inside_postgresql(
    airflow_home: Path,  # noqa: F811
    tmp_path: Path,
    pg_server: PgServer,  # noqa: F811
    pg_url: str,  # noqa: F811
) -> None:
    u = sa.engine.make_url(pg_url)
    warehouse = json.dumps({
        "conn_type": "postgres", "host": u.host, "port": u.port, "login": u.username,
        "password": u.password, "schema": u.database,
    })  # fmt: skip
    ledger = f"sqlite:///{tmp_path / 'ledger.db'}"
    record_policy(ledger, "weak", "target")  # the officer's part
    runs, _ = drive(
        airflow_home, WAREHOUSE_DAGS, "privacy_warehouse", tmp_path / "out", ledger,
        [
            {"dataset": "weak", "anonymize_criteria": ["k-anonymity:k=2"]},
            {"dataset": "target"},
        ],
        extra_env={"AIRFLOW_CONN_WAREHOUSE": warehouse},
    )  # fmt: skip
    weak, target = runs
    # anonymized to 2-anonymity, checked for 10: blocked, nothing published
    assert not green(weak)
    assert weak["tasks"]["check"] == "success" and weak["tasks"]["publish"] == "failed"
    assert envelope(weak, "check")["safe"] is False
    assert envelope(weak, "anonymize")["details"]["backend"] == "sql"
    assert envelope(weak, "report")["details"]["status"] == "blocked"
    published = [t for t in tables(pg_url) if t.startswith("published_")]
    assert len(published) == 1  # only the target run's
    # anonymized to the check's criteria: published as a table with the checked rows
    assert green(target), target["tasks"]
    anon = envelope(target, "anonymize")
    assert (
        anon["details"]["backend"] == "sql"
        and anon["release"]["records"] == 2000 - anon["details"]["suppressed"]
    )
    check = envelope(target, "check")
    assert check["safe"] is True and check["details"]["backend"] == "sql"
    assert envelope(target, "publish")["outcome"] == "published"
    report = envelope(target, "report")
    assert report["details"]["status"] == "published"
    assert Path(report["outputs"]["report"]).is_file()
    release = f"release_{published[0].removeprefix('published_')}"
    assert rows(pg_url, published[0]) == rows(pg_url, release)
    assert sum(rows(pg_url, release).values()) == anon["release"]["records"]
    assert ledger_state(ledger) == [
        ("1", "blocked", ["blocked"]),
        ("1", "published", ["published"]),
    ]
    # no snapshot or mapping table is left in the warehouse
    leftovers = [t for t in tables(pg_url) if t.startswith("airflow_privacy")]
    assert leftovers == []
