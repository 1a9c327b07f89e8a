"""The release ledger on SQLite and on a real PostgreSQL server: round trip, idempotency,
status transitions, migrations, concurrent writers, a killed writer, SQL injection attempts,
keyed identifier hashes, bad URLs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, select, text
from sqlalchemy.orm import Session

from airflow_privacy.core.composition import PublishedRelease
from airflow_privacy.errors import InputError
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.ledger.migrate import head
from airflow_privacy.ledger.models import GroupRow, MemberRow, ReleaseRow
from tests.conftest_pg import pg_server, pg_url  # noqa: F401  (fixtures)
from tests.ledger_worker import KILLED, make_release

ROOT = Path(__file__).resolve().parent.parent
KEY = b"ledger-test-key"

INJECTIONS = [
    "x'; DROP TABLE ledger_releases; --",
    'a" OR "1"="1',
    "a' OR '1'='1",
    "Robert'); DELETE FROM ledger_groups WHERE ('1'='1",
    "%; \\'; SELECT pg_sleep(5); --",
    "naïve ✓ 'quoted' \"double\" \\backslash\\ ;semicolon",
]


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'ledger.db'}"
    else:
        yield request.getfixturevalue("pg_url")


def sample(kind: str = "generalized") -> PublishedRelease:
    if kind == "bucketized":
        return PublishedRelease.from_groups(
            ("age", "zip"),
            "disease",
            [(("1",), {"flu": 2, "cancer": 1}), (("2",), {"aids": 1, "flu": 1})],
            kind="bucketized",
            members=[
                [(("28", "13012"), 2), (("35", "13053"), 1)],
                [(("40", "14850"), 1), (("28", "13012"), 1)],
            ],
            name="b",
        )
    if kind == "microaggregated":
        return PublishedRelease.from_groups(
            ("age", "income"),
            "disease",
            [(("31.5", "40000"), {"flu": 2}), (("52.25", "61000.5"), {"cancer": 1, "flu": 1})],
            kind="microaggregated",
        )
    return PublishedRelease.from_groups(
        ("age", "zip"),
        "disease",
        [(("<30", "130**"), {"aids": 1, "flu": 3}), ((">=30", "130**"), {"cancer": 4})],
    )


@pytest.mark.parametrize("kind", ["generalized", "bucketized", "microaggregated"])
def test_round_trip(url: str, kind: str) -> None:
    ledger = ReleaseLedger(url, hash_key=KEY)
    rel = sample(kind)
    spec = {"sensitive": "disease", "qis": ["age", "zip"]}
    manifest = {"method": "mondrian", "k": 5, "score": float("inf")}
    criteria = [{"criterion": "k-anonymity", "safe": True, "value": 4.0}]
    info = ledger.record(
        "hospital",
        rel,
        spec=spec,
        manifest=manifest,
        criteria=criteria,
        identifiers=["id-1", "id-2", "id-2"],
    )
    assert info.created and info.version == "1" and info.status == "candidate"
    assert (info.records, info.groups, info.members) == (rel.n_records, rel.n_groups, 2)
    back = ledger.release(info.id)
    assert back.to_dict() | {"name": ""} == rel.to_dict() | {"name": ""}
    assert back.name == "hospital v1" and back.kind == kind
    assert back.content_hash(sorted(ledger.member_hashes(info.id) or ())) == info.content_hash
    assert ledger.verify(info.id)
    got = ledger.info(info.id)
    assert got.spec == spec and got.criteria == criteria
    assert got.manifest == {"method": "mondrian", "k": 5, "score": "inf"}
    assert ledger.resolve(str(info.id)).id == info.id
    assert ledger.resolve("hospital@1").id == info.id
    assert ledger.member_hashes(info.id) == frozenset(ledger.hash_identifiers(["id-1", "id-2"]))
    # a second process sees the same thing
    again = ReleaseLedger(url, hash_key=KEY)
    assert again.release(info.id).to_dict() == back.to_dict()
    ledger.close()
    again.close()


def test_idempotent_and_statuses(url: str) -> None:
    ledger = ReleaseLedger(url)
    a = ledger.record("monthly", sample())
    b = ledger.record("monthly", sample())
    assert a.created and not b.created and a.id == b.id
    assert ledger.record("other", sample()).id != a.id  # another dataset: its own record
    c = ledger.record("monthly", sample("microaggregated"))
    assert c.created and c.version == "2"
    with pytest.raises(InputError, match="version '2' is already recorded with different content"):
        ledger.record("monthly", sample("bucketized"), version="2")
    d = ledger.record("monthly", sample("bucketized"), version="2024-06")
    assert d.version == "2024-06"
    # candidate -> published by recording the same content as published
    assert ledger.record("monthly", sample(), status="published").status == "published"
    assert ledger.info(a.id).status == "published"
    assert ledger.mark_published(a.id).status == "published"  # no-op
    with pytest.raises(InputError, match="already published"):
        ledger.mark_blocked(a.id, ["too late"])
    with pytest.raises(InputError, match="is published; it cannot be deleted"):
        ledger.delete(a.id)
    blocked = ledger.mark_blocked(c.id, ["PVP_100 = 12% > 0%"])
    assert blocked.status == "blocked" and blocked.reasons == ["PVP_100 = 12% > 0%"]
    with pytest.raises(InputError, match=r"was blocked \(PVP_100 = 12% > 0%\)"):
        ledger.mark_published(c.id)
    with pytest.raises(InputError, match="was blocked"):
        ledger.record("monthly", sample("microaggregated"), status="published")
    with pytest.raises(InputError, match="needs at least one reason"):
        ledger.record("monthly", make_release(1, 3), status="blocked")
    assert [r.status for r in ledger.list("monthly")] == ["published", "blocked", "candidate"]
    assert [r.id for r in ledger.list(status="published")] == [a.id]
    ledger.delete(d.id)
    assert [r.version for r in ledger.list("monthly")] == ["1", "2"]
    with pytest.raises(InputError, match=f"release #{d.id} does not exist"):
        ledger.info(d.id)
    with pytest.raises(InputError, match="not a release reference"):
        ledger.resolve("monthly")
    with pytest.raises(InputError, match="unknown status 'live'"):
        ledger.list(status="live")


def test_sql_injection_attempts_are_stored_literally(url: str) -> None:
    ledger = ReleaseLedger(url)
    for i, evil in enumerate(INJECTIONS):
        rel = PublishedRelease.from_groups(
            (evil, "zip"),
            evil + "!",
            [((evil, "130**"), {evil: 2, "flu": 1}), (("*", evil), {"x" + evil: 1})],
        )
        info = ledger.record(
            evil, rel, version=evil, reasons=[evil], status="blocked", manifest={evil: evil}
        )
        got = ledger.find(evil, evil)
        assert (got.dataset, got.version, got.reasons, got.qis) == (
            evil,
            evil,
            [evil],
            [evil, "zip"],
        )
        assert got.manifest == {evil: evil} and got.sensitive == evil + "!"
        assert ledger.release(info.id).to_dict() | {"name": ""} == rel.to_dict() | {"name": ""}
        assert [r.dataset for r in ledger.list(dataset=evil)] == [evil]
        assert len(ledger.list()) == i + 1
    names = set(inspect(ledger.engine).get_table_names())
    assert {"ledger_releases", "ledger_groups", "ledger_members", "ledger_alembic_version"} <= names


def test_migrations_run_on_first_use_and_match_the_models(url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from airflow_privacy.ledger.models import VERSION_TABLE, Base

    engine = create_engine(url)
    assert "ledger_releases" not in inspect(engine).get_table_names()
    ReleaseLedger(url).close()
    with engine.connect() as conn:
        assert conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar() == head()
        ctx = MigrationContext.configure(
            conn, opts={"compare_type": True, "version_table": VERSION_TABLE}
        )
        assert compare_metadata(ctx, Base.metadata) == []
    ReleaseLedger(url, migrate=True).close()  # second open: nothing to do
    engine.dispose()


def test_engine_passthrough_for_hooks(url: str) -> None:
    engine = create_engine(url)
    ledger = ReleaseLedger.from_engine(engine)
    info = ledger.record("hooked", sample())
    assert ReleaseLedger.from_url(url).info(info.id).dataset == "hooked"
    engine.dispose()


def _worker(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.ledger_worker", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _race(url: str, tmp_path: Path, seeds: tuple[int, int], groups: int) -> list[dict[str, object]]:
    go = tmp_path / "go"
    ready = [tmp_path / f"ready{i}" for i in range(2)]
    procs = [
        _worker("publish", url, "race", str(seed), str(groups), str(r), str(go))
        for seed, r in zip(seeds, ready, strict=True)
    ]
    deadline = time.monotonic() + 120
    while not all(r.exists() for r in ready):
        assert time.monotonic() < deadline, "workers did not start"
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.01)
    go.touch()
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        assert p.returncode == 0, stderr
        out.append(json.loads(stdout))
    return out


def test_two_processes_publishing_at_once_both_land(url: str, tmp_path: Path) -> None:
    # fresh database: both processes also race to run the migrations
    results = _race(url, tmp_path, (1, 2), groups=3000)
    assert sorted(str(r["version"]) for r in results) == ["1", "2"]
    assert all(r["created"] for r in results)
    ledger = ReleaseLedger(url)
    releases = ledger.list("race")
    assert len(releases) == 2 and all(r.status == "published" for r in releases)
    for r in releases:
        assert r.groups == 3000 and ledger.verify(r.id)  # no corruption: groups hash back
    by_seed = {make_release(s, 3000).content_hash(): s for s in (1, 2)}
    assert {r.content_hash for r in releases} == set(by_seed)


def test_opening_a_fresh_sqlite_ledger_waits_for_a_process_holding_the_file(
    tmp_path: Path,
) -> None:
    # Regression (CI failure): switching a fresh file to WAL ignores the busy handler, so
    # the second of two processes opening a new ledger at once failed with "database is
    # locked" immediately. It must wait for the lock like every other statement.
    import sqlite3
    import threading

    path = tmp_path / "ledger.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # a writer mid-transaction, still in rollback mode
    holder.execute("CREATE TABLE other_tool (x INTEGER)")
    release = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        started = time.monotonic()
        ledger = ReleaseLedger(f"sqlite:///{path}")
        assert time.monotonic() - started >= 0.4  # it waited for the lock, then went on
        assert ledger.record("after-wait", sample()).created
        ledger.close()
    finally:
        release.join()
        holder.close()


def test_two_processes_publishing_identical_content_record_it_once(
    url: str, tmp_path: Path
) -> None:
    results = _race(url, tmp_path, (5, 5), groups=2000)
    assert results[0]["id"] == results[1]["id"]
    assert sorted(bool(r["created"]) for r in results) == [False, True]
    assert len(ReleaseLedger(url).list("race")) == 1


def test_a_killed_writer_leaves_no_partial_release(url: str) -> None:
    ReleaseLedger(url).record("before", sample())
    proc = _worker("crash", url, "crashing", "12000")
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == KILLED, stderr
    ledger = ReleaseLedger(url)
    assert [r.dataset for r in ledger.list()] == ["before"]
    with Session(ledger.engine) as s:
        ids = set(s.scalars(select(ReleaseRow.id)))
        orphans = s.scalars(select(GroupRow.release_id).where(GroupRow.release_id.not_in(ids)))
        assert list(orphans) == []
        assert list(s.scalars(select(MemberRow.release_id))) == []
    # the database is not left locked: the next writer gets through
    info = ledger.record("crashing", make_release(99, 12000), status="published")
    assert info.created and ledger.verify(info.id)


def test_identifier_hashes_need_the_same_key(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_LEDGER_KEY", "first secret")
    ledger = ReleaseLedger(url, key_env="MY_LEDGER_KEY")
    info = ledger.record("ids", sample(), identifiers=["alice", "bob"])
    assert len(ledger.member_hashes(info.id) or ()) == 2
    raw = json.dumps([r.to_dict() for r in ledger.list()])
    assert "alice" not in raw
    with Session(ledger.engine) as s:
        stored = list(s.scalars(select(MemberRow.id_hash)))
    assert all(len(h) == 64 and "alice" not in h for h in stored)
    monkeypatch.setenv("MY_LEDGER_KEY", "another secret")
    with pytest.raises(InputError, match="hashed with another key"):
        ReleaseLedger(url, key_env="MY_LEDGER_KEY").member_hashes(info.id)
    monkeypatch.delenv("MY_LEDGER_KEY")
    with pytest.raises(InputError, match="environment variable MY_LEDGER_KEY holds no key"):
        ReleaseLedger(url, key_env="MY_LEDGER_KEY").member_hashes(info.id)
    assert ledger.record("noids", sample()).members is None


def test_bad_urls(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown ledger URL scheme 'foo'"):
        ReleaseLedger("foo://somewhere/ledger")
    with pytest.raises(InputError, match="does not exist"):
        ReleaseLedger(str(tmp_path / "missing" / "ledger.db"))
    with pytest.raises(InputError, match=r"ledger file .* does not exist"):
        ReleaseLedger(str(tmp_path / "nope.db"), create=False)
    with pytest.raises(InputError, match="is a directory"):
        ReleaseLedger(str(tmp_path))
    with pytest.raises(InputError, match="is not a ledger URL"):
        ReleaseLedger("://")
    with pytest.raises(InputError, match=r"cannot open ledger postgresql\+psycopg://u:\*\*\*@127"):
        ReleaseLedger("postgresql://u:secret@127.0.0.1:1/db")
    # a plain path is a SQLite file
    ReleaseLedger(str(tmp_path / "plain.db")).close()
    assert (tmp_path / "plain.db").exists()


def test_default_url_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_URL", f"sqlite:///{tmp_path / 'env.db'}")
    ReleaseLedger().record("d", sample())
    assert (tmp_path / "env.db").exists()
    monkeypatch.delenv("AIRFLOW_PRIVACY_LEDGER_URL")
    monkeypatch.chdir(tmp_path)
    ReleaseLedger().close()
    assert (tmp_path / "airflow-privacy-ledger.db").exists()


def test_the_ledger_and_the_audit_never_load_airflow(tmp_path: Path) -> None:
    code = f"""
import sys
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.core.composition import Population, composition_audit
from tests.ledger_worker import make_release
ledger = ReleaseLedger({str(tmp_path / "l.db")!r}, hash_key=b"k")
info = ledger.record("d", make_release(1, 20), status="published", identifiers=["a"])
prior = ledger.release(info.id)
pop = Population({{"age": ("5",), "sex": ("M",), "site": ("s1",)}}, 1)
composition_audit(pop, make_release(2, 20), [prior])
loaded = sorted(m for m in sys.modules if m == "airflow" or m.startswith("airflow."))
assert not loaded, loaded
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def test_in_memory_sqlite_ledger() -> None:
    ledger = ReleaseLedger("sqlite://")
    info = ledger.record("d", make_release(1, 5), status="published")
    assert [r.id for r in ledger.list(status="published")] == [info.id] and ledger.verify(info.id)


def test_reports_are_stored_replaced_and_deleted_with_their_release(url: str) -> None:
    ledger = ReleaseLedger(url)
    info = ledger.record("clinic", sample(), status="blocked", reasons=["too risky"])
    other = ledger.record("clinic", sample("microaggregated"))
    assert ledger.report(info.id) is None and ledger.report_times() == {}
    evil = INJECTIONS[0]
    first = {
        "verdict": {"status": "blocked", "reasons": [evil, "<script>alert(1)</script>"]},
        "numbers": [1, 2.5, float("inf")],
        evil: {"nested": [evil]},
    }
    stored_at = ledger.attach_report(info.id, first)
    got = ledger.report(info.id)
    assert got == {**first, "numbers": [1, 2.5, "inf"]}  # JSON-safe: inf as text
    assert ledger.report_times() == {info.id: stored_at}
    assert ledger.report_times([other.id]) == {}
    assert ledger.report(other.id) is None
    # a re-run replaces the report: one report per release
    second = {"verdict": {"status": "blocked", "reasons": ["the second run"]}}
    ledger.attach_report(info.id, second)
    assert ledger.report(info.id) == second
    with Session(ledger.engine) as s:
        assert s.scalar(text("SELECT COUNT(*) FROM ledger_reports")) == 1
    # another process sees it
    with ReleaseLedger(url) as again:
        assert again.report(info.id) == second
    with pytest.raises(InputError, match="release #999 does not exist"):
        ledger.attach_report(999, second)
    with pytest.raises(InputError, match="release #999 does not exist"):
        ledger.report(999)
    with pytest.raises(InputError, match="a release report is a mapping"):
        ledger.attach_report(info.id, ["not", "a", "mapping"])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="not JSON-serializable"):
        ledger.attach_report(info.id, {"x": object()})
    assert ledger.report(info.id) == second  # a refused write changed nothing
    ledger.delete(info.id)
    assert ledger.report_times() == {}
    ledger.close()


def test_the_reports_migration_upgrades_a_ledger_holding_releases(url: str) -> None:
    from alembic import command

    from airflow_privacy.ledger.migrate import alembic_config

    engine = create_engine(url)
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "0001_initial")
    assert "ledger_reports" not in inspect(engine).get_table_names()
    old = ReleaseLedger(engine, migrate=False)
    info = old.record("clinic", sample(), status="published")
    engine.dispose()
    with ReleaseLedger(url) as ledger:  # opens at head: 0002 adds the reports table
        assert "ledger_reports" in inspect(ledger.engine).get_table_names()
        assert ledger.info(info.id).status == "published" and ledger.report(info.id) is None
        ledger.attach_report(info.id, {"verdict": {"status": "published"}})
        assert ledger.report(info.id) == {"verdict": {"status": "published"}}
