"""Releases that are SQL tables go through the gate like files: the attempt records their
groups (counted in the database), the checks read them there, the gate verifies the
content digest of a snapshot and publishes it as a table, and never replaces other content.
On SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from airflow_privacy.errors import InputError, ReleaseBlocked
from airflow_privacy.gate.attempts import (
    PublishRequest,
    content_digest,
    publish,
)
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.steps.attempt import AttemptRequest, open_attempt
from airflow_privacy.gate.steps.check import CheckRequest, run_check
from airflow_privacy.ledger import ReleaseLedger
from tests.conftest_pg import pg_server, pg_url  # noqa: F401  (fixtures)
from tests.gate.conftest import Workspace
from tests.policy_setup import record_policy

ROWS: list[tuple[str, str, str]] = (
    [("30-39", "M", "flu")] * 3
    + [("30-39", "M", "cold")] * 2
    + [("40-49", "F", "flu")] * 2
    + [("40-49", "F", "asthma")] * 3
)


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, ws: Workspace) -> Iterator[str]:
    if request.param == "postgresql":
        yield request.getfixturevalue("pg_url")
    else:
        yield f"sqlite:///{ws.root / 'warehouse.db'}"


def write(url: str, name: str, rows: list[tuple[str, str, str]]) -> None:
    engine = sa.create_engine(url)
    md = sa.MetaData()
    t = sa.Table(name, md, sa.Column("age", sa.Text), sa.Column("sex", sa.Text),
                 sa.Column("disease", sa.Text))  # fmt: skip
    with engine.begin() as conn:
        md.drop_all(conn)
        md.create_all(conn)
        conn.execute(t.insert(), [{"age": a, "sex": s, "disease": d} for a, s, d in rows])
    engine.dispose()


def rows_of(url: str, name: str) -> Counter[tuple[Any, ...]]:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        out = Counter(tuple(r) for r in conn.execute(sa.text(f'SELECT * FROM "{name}"')))
    engine.dispose()
    return out


def expected_digest(rows: list[tuple[str, str, str]]) -> str:
    """The definition: SHA-256 of the column names and the sorted canonical groups."""
    h = hashlib.sha256(json.dumps(["age", "sex", "disease"]).encode())
    for line in sorted(json.dumps([*k, n]) for k, n in Counter(rows).items()):
        h.update(b"\n" + line.encode())
    return "sha256:" + h.hexdigest()


def ref(url: str, name: str) -> ReleaseRef:
    return ReleaseRef(sql_table=name, conn=url)


def manifest(ws: Workspace) -> ReleaseRef:
    path = ws.root / "release.manifest.json"
    path.write_text(json.dumps({"qis": ["age", "sex"], "sensitive": "disease",
                                "method": "lattice", "group_columns": ["age", "sex"]}))  # fmt: skip
    return ReleaseRef(path=str(path))


def opened(ws: Workspace, ctx: GateContext, url: str, name: str = "release_v1") -> str:
    record_policy(ws.ledger, "clinic")
    env = open_attempt(
        AttemptRequest(release=ref(url, name), dataset="clinic", required=["k"],
                       first_release=True, ledger=ws.ledger, manifest=manifest(ws)),
        ctx,
    )  # fmt: skip
    assert env.outcome == "opened" and env.attempt is not None
    assert env.release is not None and env.release.records == len(ROWS)
    return env.attempt.uuid


def checked(ws: Workspace, ctx: GateContext, url: str, uuid: str, k: int) -> bool:
    env = run_check(
        CheckRequest(release=ref(url, "release_v1"), sensitive="disease",
                     group_columns=["age", "sex"], criteria=[f"k-anonymity:k={k}"], name="k",
                     attempt=uuid, ledger=ws.ledger),
        ctx,
    )  # fmt: skip
    return bool(env.safe)


def gate(ws: Workspace, ctx: GateContext, url: str, uuid: str, to: str) -> Any:
    return publish(
        PublishRequest(attempt=uuid, release=ref(url, "release_v1"), destination=to,
                       ledger=ws.ledger),
        ctx,
    )  # fmt: skip


def test_table_digest_is_its_rows_as_a_multiset(ws: Workspace, db: str) -> None:
    ctx = GateContext()
    write(db, "release_v1", ROWS)
    assert content_digest(ref(db, "release_v1"), ctx) == expected_digest(ROWS)
    write(db, "release_v1", list(reversed(ROWS)))  # row order is not content
    assert content_digest(ref(db, "release_v1"), ctx) == expected_digest(ROWS)
    write(db, "release_v1", [*ROWS[:-1], ("40-49", "F", "flu")])
    assert content_digest(ref(db, "release_v1"), ctx) != expected_digest(ROWS)


def test_a_checked_table_is_published_as_a_table(ws: Workspace, db: str) -> None:
    ctx = GateContext()
    write(db, "release_v1", ROWS)
    uuid = opened(ws, ctx, db)
    assert checked(ws, ctx, db, uuid, k=5)
    env = gate(ws, ctx, db, uuid, "table:published_v1")
    assert env.outcome == "published"
    assert rows_of(db, "published_v1") == Counter(ROWS)
    with ReleaseLedger(ws.ledger, create=False) as ledger:
        assert ledger.attempt(uuid).status == "published"
    # no snapshot table left behind
    names = sa.inspect(sa.create_engine(db)).get_table_names()
    assert not [n for n in names if n.startswith("airflow_privacy_snapshot_")]


def test_a_failed_check_blocks_and_nothing_is_published(ws: Workspace, db: str) -> None:
    ctx = GateContext()
    write(db, "release_v1", ROWS)
    uuid = opened(ws, ctx, db)
    assert not checked(ws, ctx, db, uuid, k=6)
    with pytest.raises(ReleaseBlocked):
        gate(ws, ctx, db, uuid, "table:published_v1")
    assert not sa.inspect(sa.create_engine(db)).has_table("published_v1")


def test_a_table_changed_after_its_checks_is_not_published(ws: Workspace, db: str) -> None:
    ctx = GateContext()
    write(db, "release_v1", ROWS)
    uuid = opened(ws, ctx, db)
    assert checked(ws, ctx, db, uuid, k=5)
    write(db, "release_v1", [*ROWS, ("50-59", "M", "flu")])  # a row added after the check
    with pytest.raises(ReleaseBlocked, match="not the file attempt"):
        gate(ws, ctx, db, uuid, "table:published_v1")
    assert not sa.inspect(sa.create_engine(db)).has_table("published_v1")


def test_other_content_at_the_destination_is_never_replaced(ws: Workspace, db: str) -> None:
    ctx = GateContext()
    write(db, "release_v1", ROWS)
    write(db, "published_v1", ROWS[:4])
    uuid = opened(ws, ctx, db)
    assert checked(ws, ctx, db, uuid, k=5)
    with pytest.raises(InputError, match="already exists with other content"):
        gate(ws, ctx, db, uuid, "table:published_v1")
    assert rows_of(db, "published_v1") == Counter(ROWS[:4])


def test_the_report_of_a_published_table_counts_it_in_the_database(ws: Workspace, db: str) -> None:
    """The report reads a release table's groups by GROUP BY and its manifest file: the same
    records, groups and verdict as the report of the same release as a file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from airflow_privacy.gate.report import ReportRequest, run_report

    ctx = GateContext()
    write(db, "release_v1", ROWS)
    uuid = opened(ws, ctx, db)
    assert checked(ws, ctx, db, uuid, k=5)
    gate(ws, ctx, db, uuid, "table:published_v1")
    out = ws.root / "table.report.html"
    env = run_report(
        ReportRequest(release=ref(db, "release_v1"), attempt=uuid, out=ReleaseRef(path=str(out)),
                      manifest=manifest(ws), ledger=ws.ledger),
        ctx,
    )  # fmt: skip
    assert env.details["status"] == "published" and out.is_file()
    assert env.outputs == {"report": str(out)}  # no file beside a published table
    # the same release as a file, reported from the checks alone
    path = ws.root / "release.parquet"
    cols = list(zip(*ROWS, strict=True))
    pq.write_table(pa.table({"age": cols[0], "sex": cols[1], "disease": cols[2]}), path)
    path.with_name("release.parquet.manifest.json").write_text(
        (ws.root / "release.manifest.json").read_text()
    )
    from_file = run_report(
        ReportRequest(release=ReleaseRef(path=str(path)), out=ReleaseRef(path=str(ws.root /
                      "file.report.html"))),
        ctx,
    )  # fmt: skip
    for key in ("records", "groups"):
        assert env.release is not None and from_file.release is not None
        assert getattr(env.release, key) == getattr(from_file.release, key)


def test_a_report_of_a_table_needs_its_output_file(ws: Workspace, db: str) -> None:
    from airflow_privacy.gate.report import ReportRequest, run_report

    write(db, "release_v1", ROWS)
    with pytest.raises(InputError, match=r"is a SQL table: give --out, the file"):
        run_report(ReportRequest(release=ref(db, "release_v1")), GateContext())


def _adult_table(url: str, name: str = "adult_in") -> None:
    from airflow_privacy.core.datasets import load_adult

    engine = sa.create_engine(url)
    table = load_adult().slice(0, 600).select(["age", "sex", "race", "occupation"])
    table.to_pandas().to_sql(name, engine, index=False, if_exists="replace")
    engine.dispose()


def _anonymize(ws: Workspace, url: str, out: str, k: int = 5, replace: bool = False) -> Any:
    from airflow_privacy.gate.anonymize import AnonymizeRequest, run_anonymize

    return run_anonymize(
        AnonymizeRequest(
            source=ref(url, "adult_in"), release=ref(url, out), qis=["age", "sex", "race"],
            sensitive="occupation", method="mondrian", criteria=[f"k-anonymity:k={k}"],
            manifest=ReleaseRef(path=str(ws.root / "m.json")), replace=replace,
        ),
        GateContext(),
    )  # fmt: skip


def test_an_anonymization_never_writes_over_its_input_table(ws: Workspace, db: str) -> None:
    _adult_table(db)
    before = rows_of(db, "adult_in")
    with pytest.raises(InputError, match=r"would overwrite the input 'table:adult_in'"):
        _anonymize(ws, db, "adult_in")
    with pytest.raises(InputError, match=r"would overwrite the input"):
        _anonymize(ws, db, "main.adult_in" if db.startswith("sqlite") else "public.adult_in")
    assert rows_of(db, "adult_in") == before
    assert not (ws.root / "m.json").exists()


def test_a_release_table_failing_its_recheck_leaves_the_old_one(
    ws: Workspace, db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The release is built under a private name, re-checked, then put in place: a failed
    re-check (a bug, exit 3) leaves the earlier release table and no staging table."""
    from airflow_privacy.gate import pushdown

    _adult_table(db)
    env = _anonymize(ws, db, "rel", k=5)
    assert env.details["backend"] == "sql"
    first = rows_of(db, "rel")
    assert sum(first.values()) == env.release.records if env.release else False

    def broken(*_a: Any, **_k: Any) -> None:
        raise RuntimeError("the written release does not have the counts decided")

    monkeypatch.setattr(pushdown, "recheck", broken)
    with pytest.raises(RuntimeError, match="counts decided"):
        _anonymize(ws, db, "rel", k=10, replace=True)
    assert rows_of(db, "rel") == first
    names = sa.inspect(sa.create_engine(db)).get_table_names()
    assert not [n for n in names if "__ap_" in n], names
    monkeypatch.undo()
    again = _anonymize(ws, db, "rel", k=10, replace=True)  # a passing re-check replaces it
    assert sum(rows_of(db, "rel").values()) == again.release.records if again.release else False
    assert rows_of(db, "rel") != first


def test_an_existing_release_table_is_written_over_only_when_asked(ws: Workspace, db: str) -> None:
    """Issue 27: ``anonymize --out table:NAME`` replaced an existing table. Without
    ``replace`` an existing release table (or manifest) is bad input, named, and nothing is
    written; with it the table is replaced."""
    _adult_table(db)
    _anonymize(ws, db, "rel", k=5)
    first, manifest = rows_of(db, "rel"), (ws.root / "m.json").read_bytes()
    with pytest.raises(
        InputError, match=r"^the release \(--out\) table:rel exists already: give --replace"
    ):
        _anonymize(ws, db, "rel", k=10)
    assert rows_of(db, "rel") == first and (ws.root / "m.json").read_bytes() == manifest
    (ws.root / "m.json").unlink()
    _anonymize(ws, db, "rel2", k=5)  # a new table, but the manifest exists
    with pytest.raises(InputError, match=r"^the manifest \(--manifest\) .*m.json exists already"):
        _anonymize(ws, db, "rel3", k=5)
    names = sa.inspect(sa.create_engine(db)).get_table_names()
    assert "rel3" not in names
    _anonymize(ws, db, "rel", k=10, replace=True)
    assert rows_of(db, "rel") != first
