"""The ledger's migrations on SQLite and PostgreSQL: ledgers written at revision 0001 and
0002 (releases of every status, identifier hashes under a legacy key fingerprint, a stored
report) upgrade to the newest schema with the right attempts, reports, datasets and UUIDs,
and end up exactly like the models; Alembic's INFO lines never reach the logs."""

from __future__ import annotations

import hashlib
import hmac
import logging
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import Connection

from airflow_privacy.core.composition import PublishedRelease
from airflow_privacy.core.composition.identifiers import hash_identifiers
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.ledger.engine import parse_url
from airflow_privacy.ledger.migrate import alembic_config, head
from airflow_privacy.ledger.models import VERSION_TABLE, Base
from tests.conftest_pg import pg_server, pg_url  # noqa: F401  (fixtures)
from tests.ledger.support import DIGEST, INJECTIONS, KEY, ROOT, env, gate_rules, sample, url
from tests.ledger_worker import make_release

__all__ = ["url"]

_LEGACY = b"airflow-privacy ledger key fingerprint v1"
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)

_PLAIN = (
    "id", "dataset", "version", "created_at", "updated_at", "status", "kind", "sensitive",
    "content_hash", "n_records", "n_groups", "n_members", "key_fingerprint",
)  # fmt: skip
releases_0001 = sa.table(
    "ledger_releases",
    *(sa.column(c) for c in _PLAIN),
    *(sa.column(c, sa.JSON()) for c in ("qis", "spec", "manifest", "criteria", "reasons")),
)
groups_0001 = sa.table(
    "ledger_groups",
    sa.column("release_id"),
    sa.column("position"),
    sa.column("descriptor", sa.JSON()),
    sa.column("size"),
    sa.column("sensitive", sa.JSON()),
    sa.column("members", sa.JSON()),
)
members_0001 = sa.table("ledger_members", sa.column("release_id"), sa.column("id_hash"))
reports_0002 = sa.table(
    "ledger_reports",
    sa.column("release_id"),
    sa.column("created_at"),
    sa.column("report", sa.JSON()),
)


def _upgrade_to(url: str, revision: str) -> None:
    engine = create_engine(parse_url(url))
    from alembic import command

    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), revision)
    engine.dispose()


def _old_release(
    conn: Connection,
    rid: int,
    dataset: str,
    version: str,
    status: str,
    rel: PublishedRelease,
    *,
    reasons: list[str] | None = None,
    identifiers: list[str] | None = None,
) -> str:
    """A release as the code of revision 0001/0002 wrote it; returns its content hash."""
    hashes = sorted(set(hash_identifiers(identifiers, KEY))) if identifiers else []
    fingerprint = hmac.new(KEY, _LEGACY, hashlib.sha256).hexdigest()[:16] if hashes else None
    content = rel.content_hash(hashes)
    when = T0 + timedelta(days=rid)
    conn.execute(
        releases_0001.insert().values(
            id=rid, dataset=dataset, version=version, created_at=when, updated_at=when,
            status=status, kind=rel.kind, sensitive=rel.sensitive, qis=list(rel.qis),
            spec={"qis": list(rel.qis)}, manifest=None, criteria=None, reasons=reasons or [],
            content_hash=content, n_records=rel.n_records, n_groups=rel.n_groups,
            n_members=len(hashes) if hashes else None, key_fingerprint=fingerprint,
        )
    )  # fmt: skip
    conn.execute(
        groups_0001.insert(),
        [
            {"release_id": rid, "position": g, **rec, "members": rec.get("members")}
            for g, rec in enumerate(rel.group_records())
        ],
    )
    if hashes:
        conn.execute(members_0001.insert(), [{"release_id": rid, "id_hash": h} for h in hashes])
    return content


@pytest.fixture(params=["0001_initial", "0002_reports"])
def old_ledger(request: pytest.FixtureRequest, url: str) -> Iterator[tuple[str, str]]:
    """A ledger at an old revision holding a published release (with identifier hashes
    under a legacy fingerprint), a blocked one with reasons, a candidate, a published one of
    another dataset with a non-numeric label and, at 0002, a stored report."""
    revision = request.param
    _upgrade_to(url, revision)
    engine = create_engine(parse_url(url))
    with engine.begin() as conn:
        _old_release(conn, 1, "monthly", "1", "published", sample(), identifiers=["al", "bo"])
        _old_release(
            conn, 2, "monthly", "2", "blocked", sample("bucketized"),
            reasons=["PVP_100 = 12% > 0%", INJECTIONS[0]],
        )  # fmt: skip
        _old_release(conn, 3, "monthly", "3", "candidate", sample("microaggregated"))
        _old_release(conn, 4, "other", "2024-06", "published", make_release(4, 30))
        if revision == "0002_reports":
            conn.execute(
                reports_0002.insert().values(
                    release_id=2, created_at=T0, report={"verdict": {"status": "blocked"}}
                )
            )
        if conn.dialect.name == "postgresql":  # rows inserted with explicit ids
            conn.execute(text("SELECT setval('ledger_releases_id_seq', 4)"))
    engine.dispose()
    yield url, revision


def test_an_old_ledger_upgrades_with_attempts_reports_datasets_and_uuids(
    old_ledger: tuple[str, str],
) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    url, revision = old_ledger
    with ReleaseLedger(url, hash_key=KEY, create=False) as ledger:  # a reader upgrades it
        rows = ledger.list()
        assert [(r.id, r.dataset, r.version, r.status, r.content_status) for r in rows] == [
            (1, "monthly", "1", "published", "published"),
            (2, "monthly", "2", "blocked", "candidate"),
            (3, "monthly", "3", "candidate", "candidate"),
            (4, "other", "2024-06", "published", "published"),
        ]
        # uuids: valid, distinct, and they find their release
        uuids = [r.uuid for r in rows]
        assert len(set(uuids)) == 4 and all(str(uuid.UUID(u)) == u for u in uuids)
        assert [ledger.by_uuid(u).id for u in uuids] == [1, 2, 3, 4]
        # one attempt per earlier release, with its status and reasons
        attempts = {r.id: ledger.attempts(r.id) for r in rows}
        assert {rid: [a.status for a in a_list] for rid, a_list in attempts.items()} == {
            1: ["published"],
            2: ["blocked"],
            3: ["open"],
            4: ["published"],
        }
        assert attempts[2][0].reasons == ["PVP_100 = 12% > 0%", INJECTIONS[0]]
        assert all(a[0].origin["front_end"] == "migration" for a in attempts.values())
        assert ledger.info(1).published_at == rows[0].updated_at and rows[2].published_at is None
        # content is intact: groups and the legacy-fingerprinted hashes verify; the hashes,
        # stored unwrapped then, are wrapped with the key derived from this ledger's salt
        assert all(ledger.verify(r.id) for r in rows)
        with ledger.engine.connect() as conn:
            salt = conn.execute(
                text("SELECT value FROM ledger_settings WHERE name = 'identifier_key_salt'")
            ).scalar_one()
        k2 = hashlib.scrypt(KEY, salt=bytes.fromhex(salt), n=2**14, r=8, p=1, dklen=32)
        assert ledger.member_hashes(1) == frozenset(
            hmac.new(k2, h.encode(), hashlib.sha256).hexdigest()
            for h in hash_identifiers(["al", "bo"], KEY)
        )
        # revision 0005: the content recorded with identifiers is found without them too
        again = ledger.open_attempt("monthly", sample(), required=["c"], content_digest=DIGEST)
        assert again.status == "already-published" and again.release.id == 1
        # reports now belong to an attempt
        expected = {"verdict": {"status": "blocked"}} if revision == "0002_reports" else None
        assert ledger.report(2) == expected
        assert ledger.attempt_report(attempts[2][0].uuid) == expected
        # datasets: versions continue after the highest number
        assert ledger.record("monthly", make_release(10, 3)).version == "4"
        assert ledger.record("other", make_release(11, 3)).version == "1"
        # the migrated open attempt names no required checks: the gate never publishes it on
        # whatever single check is recorded (a new attempt names them)
        ledger.record_check(
            attempts[3][0].uuid, name="check", step="check", safe=True, outcome="passed",
            envelope={"safe": True}, reads_release=False,
        )  # fmt: skip
        decided = ledger.mark_published(3, gate_rules)
        assert decided.status == "blocked"
        assert any("names no required checks" in r for r in decided.reasons)
        # the schema is exactly the models' (SQLite's batch moves included)
        with ledger.engine.connect() as conn:
            assert conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar() == (
                head()
            )
            ctx = MigrationContext.configure(
                conn, opts={"compare_type": True, "version_table": VERSION_TABLE}
            )
            assert compare_metadata(ctx, Base.metadata) == []


def test_a_ledger_at_0001_gets_the_reports_table(url: str) -> None:
    _upgrade_to(url, "0001_initial")
    engine = create_engine(parse_url(url))
    assert "ledger_reports" not in inspect(engine).get_table_names()
    engine.dispose()
    with ReleaseLedger(url) as ledger:
        assert "ledger_reports" in inspect(ledger.engine).get_table_names()
        attempt = ledger.open_attempt("clinic", sample(), required=["c"], first_release=True)
        ledger.attach_report(attempt.uuid, {"verdict": {"status": "open"}})
        assert ledger.report(attempt.release.id) == {"verdict": {"status": "open"}}


# -------------------------------------------------------------------- logging
ALEMBIC_NOISE = ("Context impl", "Will assume", "setup plugin", "Running upgrade")


@pytest.fixture
def loud_alembic() -> Iterator[None]:
    """Alembic's loggers set to INFO explicitly, as an application's logging config may."""
    names = ("alembic", "alembic.runtime.migration", "alembic.runtime.plugins")
    levels = {n: logging.getLogger(n).level for n in names}
    for n in names:
        logging.getLogger(n).setLevel(logging.INFO)
    yield
    for n, level in levels.items():
        logging.getLogger(n).setLevel(level)


def _alembic_lines(records: list[logging.LogRecord]) -> list[str]:
    return [
        f"{r.name}: {r.getMessage()}"
        for r in records
        if r.name.startswith("alembic") or any(n in r.getMessage() for n in ALEMBIC_NOISE)
    ]


def test_alembic_info_lines_stay_out_of_the_logs(
    url: str, caplog: pytest.LogCaptureFixture, loud_alembic: None
) -> None:
    _upgrade_to(url, "0001_initial")  # set-up: a ledger to migrate (its lines do not count)
    caplog.clear()
    caplog.set_level(logging.INFO)
    with ReleaseLedger(url) as ledger:  # migrates 0001 -> head
        ledger.record("d", sample())
    ReleaseLedger(url, create=False).close()  # opens a ledger at head
    assert _alembic_lines(caplog.records) == []
    # only the ledger's own use is quiet: Alembic elsewhere in the process still logs
    from alembic.runtime.migration import MigrationContext

    engine = create_engine(parse_url(url))
    with engine.connect() as conn:
        MigrationContext.configure(conn)
    engine.dispose()
    assert any("Context impl" in line for line in _alembic_lines(caplog.records))


def test_a_fresh_process_logs_nothing_from_alembic(tmp_path: Path) -> None:
    # import time too: Alembic logs "setup plugin ..." at INFO when it is first imported
    code = f"""
import logging
logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
from airflow_privacy.ledger import ReleaseLedger
ReleaseLedger({str(tmp_path / "fresh.db")!r}).close()
ReleaseLedger({str(tmp_path / "fresh.db")!r}, create=False).close()
print("opened")
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env(), capture_output=True, text=True
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "opened", proc.stderr
    assert "alembic" not in proc.stderr and proc.stderr.strip() == "", proc.stderr
