"""The release ledger on SQLite and on a real PostgreSQL server: round trip, idempotency by
content, the lifecycle of attempts (the gate decides, a block belongs to an attempt),
reports per attempt, UUIDs, migrations that match the models, concurrent writers, a killed
writer, SQL injection attempts, keyed identifier hashes under strong keys, bad URLs.

Heavier concurrency, crash and robustness tests live in ``tests/ledger/``."""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, delete, inspect, select, text, update
from sqlalchemy.orm import Session

from airflow_privacy.core.composition import PublishedRelease
from airflow_privacy.core.composition.identifiers import key_fingerprint
from airflow_privacy.errors import IllegalTransition, InputError, LedgerUnavailable
from airflow_privacy.gate.rules import reasons
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.ledger.engine import parse_url
from airflow_privacy.ledger.migrate import head
from airflow_privacy.ledger.models import (
    AttemptRow,
    DatasetRow,
    GroupRow,
    MemberRow,
    ReleaseRow,
    ReportRow,
)
from tests.conftest_pg import pg_server, pg_url  # noqa: F401  (fixtures)
from tests.ledger.support import (
    DIGEST,
    INJECTIONS,
    KEY,
    OTHER_KEY,
    ROOT,
    gate_rules,
    sample,
    url,
    worker,
)
from tests.ledger_worker import KILLED, make_release

__all__ = ["url"]  # the fixture, imported for this module's tests


def _passed(ledger: ReleaseLedger, attempt: str, name: str = "check") -> None:
    ledger.record_check(
        attempt,
        name=name,
        step="check",
        safe=True,
        outcome="passed",
        envelope={"step": "check", "safe": True, "summary": "k-anonymity holds"},
        content_digest=DIGEST,
    )


def _is_uuid(text: str) -> bool:
    return str(uuid.UUID(text)) == text


# ------------------------------------------------------------------ round trip
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
    assert info.content_status == "candidate" and info.published_at is None
    assert _is_uuid(info.uuid)
    assert (info.records, info.groups, info.members) == (rel.n_records, rel.n_groups, 2)
    back = ledger.release(info.id)
    assert back.to_dict() | {"name": ""} == rel.to_dict() | {"name": ""}
    assert back.name == "hospital v1" and back.kind == kind
    assert back.content_hash() == info.content_hash  # content alone (revision 0005)
    assert ledger.verify(info.id)
    got = ledger.info(info.id)
    assert got.spec == spec and got.criteria == criteria
    assert got.manifest == {"method": "mondrian", "k": 5, "score": "inf"}
    assert ledger.resolve(str(info.id)).id == info.id
    assert ledger.resolve(f"#{info.id}").id == info.id
    assert ledger.resolve("hospital@1").id == info.id
    assert ledger.resolve(info.uuid).id == ledger.by_uuid(info.uuid).id == info.id
    assert ledger.member_hashes(info.id) == frozenset(
        ledger.stored_hashes(ledger.hash_identifiers(["id-1", "id-2"]))
    )
    assert info.to_dict()["key_fingerprint"] == "recorded"  # never the value
    # a second process sees the same thing
    again = ReleaseLedger(url, hash_key=KEY, create=False)
    assert again.release(info.id).to_dict() == back.to_dict()
    assert again.info(info.id).uuid == info.uuid
    ledger.close()
    again.close()


def test_content_is_recorded_once_and_the_gate_decides_attempts(url: str) -> None:
    ledger = ReleaseLedger(url)
    a = ledger.record("monthly", sample())
    b = ledger.record("monthly", sample())
    assert a.created and not b.created and (a.id, a.uuid) == (b.id, b.uuid)
    other = ledger.record("other", sample())  # another dataset: its own record
    assert other.id != a.id and other.uuid != a.uuid and other.version == "1"
    c = ledger.record("monthly", sample("microaggregated"))
    assert c.created and c.version == "2"
    # a label of unpublished content may be used again
    d = ledger.record("monthly", sample("bucketized"), version="2")
    assert d.created and d.version == "2" and d.id != c.id
    d = ledger.record("monthly", sample("bucketized"), version="2024-06")  # relabelled
    assert not d.created and d.version == "2024-06"
    # a block belongs to an attempt, never to content
    with pytest.raises(InputError, match="candidate or published, not 'blocked'"):
        ledger.record("monthly", make_release(1, 3), status="blocked")
    # importing history: the same content recorded as published elsewhere
    pub = ledger.record("monthly", sample(), status="published")
    assert (pub.id, pub.status, pub.content_status) == (a.id, "published", "published")
    assert ledger.info(a.id).published_at is not None
    [imported] = ledger.attempts(a.id)
    assert imported.status == "published" and imported.origin.get("import") is True
    # a published label cannot be taken by other content, by recording or relabelling
    with pytest.raises(InputError, match="version '1' is already published"):
        ledger.record("monthly", make_release(2, 3), version="1")
    with pytest.raises(InputError, match="version '1' is already published"):
        ledger.record("monthly", sample("bucketized"), version="1")
    # published content: no open attempt to decide, no deletion
    with pytest.raises(IllegalTransition, match="has no open attempt"):
        ledger.mark_published(a.id, gate_rules)
    with pytest.raises(IllegalTransition, match="has no open attempt"):
        ledger.mark_blocked(a.id, ["too late"])
    with pytest.raises(IllegalTransition, match="is published; it cannot be deleted"):
        ledger.delete(a.id)
    # mark_published goes through the gate: nothing checked -> blocked with every reason
    first = ledger.open_attempt(
        "monthly", sample("microaggregated"), required=["check"], content_digest=DIGEST
    )
    assert first.release.id == c.id and first.status == "open" and _is_uuid(first.uuid)
    blocked = ledger.mark_published(c.id, gate_rules)
    assert blocked.status == "blocked" and blocked.uuid == first.uuid
    assert any("check: no result was recorded" in r for r in blocked.reasons)
    assert any("no check was recorded" in r for r in blocked.reasons)
    assert ledger.info(c.id).status == "blocked"
    assert ledger.info(c.id).content_status == "candidate"
    with pytest.raises(IllegalTransition, match="already decided"):
        _passed(ledger, first.uuid)
    # a failed check blocks too, with its reasons
    second = ledger.open_attempt(
        "monthly", sample("microaggregated"), required=["check"], content_digest=DIGEST
    )
    ledger.record_check(
        second.uuid,
        name="check",
        step="check",
        safe=False,
        outcome="failed",
        envelope={"reasons": ["PVP_100 = 12% > 0%"]},
        content_digest=DIGEST,
    )
    assert ledger.mark_published(c.id, gate_rules).reasons == ["check: PVP_100 = 12% > 0%"]
    # a steward supersedes a blocked attempt; a new attempt is judged afresh
    sup = ledger.supersede(second.uuid, "the data error is fixed", by="steward")
    assert (sup.status, sup.superseded_by) == ("superseded", "steward")
    assert ledger.info(c.id).status == "superseded"
    third = ledger.open_attempt(
        "monthly", sample("microaggregated"), required=["check"], content_digest=DIGEST
    )
    _passed(ledger, third.uuid)
    done = ledger.mark_published(c.id, gate_rules)
    assert done.status == "published" and done.release.status == "published"
    assert [x.status for x in ledger.attempts(c.id)] == ["blocked", "superseded", "published"]
    # published content gets an already-published attempt: nothing is checked again
    again = ledger.open_attempt(
        "monthly", sample("microaggregated"), required=["check"], content_digest=DIGEST
    )
    assert again.status == "already-published" and "already published" in again.reasons[0]
    # a block by hand, on an open attempt only
    e = ledger.open_attempt(
        "monthly", make_release(3, 4), required=["check"], content_digest=DIGEST
    )
    assert e.release.version == "3"
    assert ledger.mark_blocked(e.release.id, ["by hand"], by="steward").status == "blocked"
    assert [r.status for r in ledger.list("monthly")] == [
        "published",
        "published",
        "candidate",
        "blocked",
    ]
    assert [r.id for r in ledger.list(status="published")] == [a.id, c.id]
    assert [r.id for r in ledger.list(status="blocked")] == [e.release.id]
    assert ledger.datasets() == ["monthly", "other"]
    ledger.delete(d.id)
    ledger.delete(e.release.id)  # blocked, never published: deleted with its attempts
    assert [r.version for r in ledger.list("monthly")] == ["1", "2"]
    with pytest.raises(InputError, match=f"release #{d.id} does not exist"):
        ledger.info(d.id)
    with pytest.raises(InputError, match="not a release reference"):
        ledger.resolve("monthly")
    with pytest.raises(InputError, match="unknown status 'live'"):
        ledger.list(status="live")
    with Session(ledger.engine) as s:
        assert s.get(DatasetRow, "monthly") is not None
        assert s.scalar(select(AttemptRow.id).where(AttemptRow.uuid == e.uuid)) is None
    ledger.close()


def test_sql_injection_attempts_are_stored_literally(url: str) -> None:
    ledger = ReleaseLedger(url)
    for i, evil in enumerate(INJECTIONS):
        rel = PublishedRelease.from_groups(
            (evil, "zip"),
            evil + "!",
            [((evil, "130**"), {evil: 2, "flu": 1}), (("*", evil), {"x" + evil: 1})],
        )
        attempt = ledger.open_attempt(
            evil,
            rel,
            version=evil,
            required=[evil],
            first_release=True,
            origin={evil: evil},
            manifest={evil: evil},
            content_digest=DIGEST,
        )
        ledger.record_check(
            attempt.uuid,
            name=evil,
            step="check",
            safe=False,
            outcome="failed",
            envelope={"reasons": [evil]},
            content_digest=DIGEST,
        )
        decided = ledger.decide(attempt.uuid, rules=functools.partial(_failed_rules, evil))
        assert decided.status == "blocked"
        got = ledger.find(evil, evil)
        assert (got.dataset, got.version, got.status, got.qis) == (
            evil,
            evil,
            "blocked",
            [evil, "zip"],
        )
        assert got.manifest == {evil: evil} and got.sensitive == evil + "!"
        [back] = ledger.attempts(got.id)
        assert back.required == [evil] and back.origin == {evil: evil}
        assert [c.name for c in back.checks] == [evil] and back.checks[0].envelope == {
            "reasons": [evil]
        }
        assert f"{evil}: {evil}" in back.reasons
        assert f"task {evil} ended failed: the release depends on it" in back.reasons
        assert ledger.release(got.id).to_dict() | {"name": ""} == rel.to_dict() | {"name": ""}
        assert [r.dataset for r in ledger.list(dataset=evil)] == [evil]
        assert len(ledger.list()) == i + 1
    names = set(inspect(ledger.engine).get_table_names())
    assert {
        "ledger_datasets",
        "ledger_releases",
        "ledger_attempts",
        "ledger_checks",
        "ledger_groups",
        "ledger_members",
        "ledger_reports",
        "ledger_alembic_version",
    } <= names
    ledger.close()


def test_migrations_run_on_first_use_and_match_the_models(url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from airflow_privacy.ledger.models import VERSION_TABLE, Base

    engine = create_engine(parse_url(url))
    assert "ledger_releases" not in inspect(engine).get_table_names()
    ReleaseLedger(url).close()
    with engine.connect() as conn:
        assert conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar() == head()
        ctx = MigrationContext.configure(
            conn, opts={"compare_type": True, "version_table": VERSION_TABLE}
        )
        assert compare_metadata(ctx, Base.metadata) == []
    ReleaseLedger(url, migrate=True).close()  # second open: nothing to do
    ReleaseLedger(url, create=False).close()
    engine.dispose()


def test_engine_passthrough_for_hooks(url: str) -> None:
    engine = create_engine(parse_url(url))
    ledger = ReleaseLedger.from_engine(engine)
    info = ledger.record("hooked", sample())
    assert ReleaseLedger.from_url(url, create=False).info(info.id).dataset == "hooked"
    if engine.dialect.name == "sqlite":  # the SQLite settings were installed on it
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    engine.dispose()


# ------------------------------------------------------------------ processes
def _race(url: str, tmp_path: Path, seeds: tuple[int, int], groups: int) -> list[dict[str, Any]]:
    go = tmp_path / "go"
    ready = [tmp_path / f"ready{i}" for i in range(2)]
    procs = [
        worker("publish", url, "race", str(seed), str(groups), str(r), str(go))
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
    # fresh database: both processes also race to create the ledger and run the migrations
    results = _race(url, tmp_path, (1, 2), groups=3000)
    assert sorted(str(r["version"]) for r in results) == ["1", "2"]
    assert all(r["created"] for r in results)
    ledger = ReleaseLedger(url, create=False)
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
    assert len(ReleaseLedger(url, create=False).list("race")) == 1


def test_a_killed_writer_leaves_no_partial_release(url: str) -> None:
    ReleaseLedger(url).record("before", sample())
    proc = worker("crash", url, "crashing", "12000")
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == KILLED, stderr  # killed at its commit: every row was written
    ledger = ReleaseLedger(url)
    assert [r.dataset for r in ledger.list()] == ["before"]
    with Session(ledger.engine) as s:
        ids = set(s.scalars(select(ReleaseRow.id)))
        orphans = s.scalars(select(GroupRow.release_id).where(GroupRow.release_id.not_in(ids)))
        assert list(orphans) == []
        assert list(s.scalars(select(MemberRow.release_id))) == []
        assert s.get(DatasetRow, "crashing") is None  # the dataset row went with it
    # the database is not left locked: the next writer gets through
    info = ledger.record("crashing", make_release(99, 12000), status="published")
    assert info.created and info.version == "1" and ledger.verify(info.id)


# ----------------------------------------------------------------- identifiers
def _salt(ledger: ReleaseLedger) -> bytes:
    with Session(ledger.engine) as s:
        value = s.scalar(
            text("SELECT value FROM ledger_settings WHERE name = 'identifier_key_salt'")
        )
    assert value is not None
    return bytes.fromhex(value)


def _stored(key: bytes, salt: bytes, identifiers: list[str]) -> set[str]:
    """What the ledger stores, from the definitions: ``HMAC(K2, HMAC(key, id))`` in hex with
    ``K2 = scrypt(key, salt)`` (n 2^14, r 8, p 1, 32 bytes)."""
    k2 = hashlib.scrypt(key, salt=salt, n=2**14, r=8, p=1, dklen=32)
    inner = [hmac.new(key, i.encode(), hashlib.sha256).hexdigest() for i in identifiers]
    return {hmac.new(k2, h.encode(), hashlib.sha256).hexdigest() for h in inner}


def test_identifier_hashes_need_the_same_strong_key(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_LEDGER_KEY", KEY.decode())
    ledger = ReleaseLedger(url, key_env="MY_LEDGER_KEY")
    info = ledger.record("ids", sample(), identifiers=["alice", "bob"])
    assert len(ledger.member_hashes(info.id) or ()) == 2
    raw = json.dumps([r.to_dict() for r in ledger.list()])
    assert "alice" not in raw
    with Session(ledger.engine) as s:
        stored = list(s.scalars(select(MemberRow.id_hash)))
        fingerprint = s.scalar(select(ReleaseRow.key_fingerprint).where(ReleaseRow.id == info.id))
    assert all(len(h) == 64 and "alice" not in h for h in stored)
    salt = _salt(ledger)
    assert len(salt) == 16
    assert set(stored) == _stored(KEY, salt, ["alice", "bob"])
    assert set(stored) == set(ledger.stored_hashes(ledger.hash_identifiers(["alice", "bob"])))
    # never the fast keyed hash a guessed key could be tested against with one HMAC
    assert not set(stored) & set(ledger.hash_identifiers(["alice", "bob"]))
    monkeypatch.setenv("MY_LEDGER_KEY", OTHER_KEY.decode())
    with pytest.raises(InputError, match="hashed with another key"):
        ReleaseLedger(url, key_env="MY_LEDGER_KEY").member_hashes(info.id)
    monkeypatch.delenv("MY_LEDGER_KEY")
    with pytest.raises(InputError, match="environment variable MY_LEDGER_KEY holds no key"):
        ReleaseLedger(url, key_env="MY_LEDGER_KEY").member_hashes(info.id)
    assert ledger.record("noids", sample()).members is None
    # weak keys are refused: a 1-character key, the old 15-byte test key, a repeated pattern
    for weak in ("k", "ledger-test-key", "ab" * 20, "0123456789" * 4,
                 "correct-horse-" * 3):  # fmt: skip
        monkeypatch.setenv("MY_LEDGER_KEY", weak)
        with pytest.raises(InputError, match="too weak"):
            ReleaseLedger(url, key_env="MY_LEDGER_KEY").record(
                "weak", make_release(7, 3), identifiers=["alice"]
            )
    with pytest.raises(InputError, match="too weak"):
        ReleaseLedger(url, hash_key=b"k").record("weak", make_release(8, 3), identifiers=["a"])
    assert [r.dataset for r in ledger.list()] == ["ids", "noids"]  # nothing recorded
    # the stored fingerprint: a keyed hash under the derived key, so checking a guessed key
    # costs the scrypt evaluation; never a fast keyed hash of a constant under the key
    assert fingerprint is not None
    prefix, digest = fingerprint.split("$")
    k2 = hashlib.scrypt(KEY, salt=salt, n=2**14, r=8, p=1, dklen=32)
    message = b"airflow-privacy derived identifier key fingerprint v1"
    assert prefix == "kdf1" and digest == hmac.new(k2, message, hashlib.sha256).hexdigest()
    legacy = hmac.new(KEY, b"airflow-privacy ledger key fingerprint v1", hashlib.sha256)
    assert legacy.hexdigest()[:16] not in fingerprint
    assert all(
        hmac.new(KEY, m, h).hexdigest() not in fingerprint
        for m in (b"", message, salt)
        for h in (hashlib.sha256, hashlib.sha512, hashlib.blake2b)
    )


def test_every_ledger_has_its_own_salt(tmp_path: Path) -> None:
    """The same people under the same key are stored differently in two ledgers: no table
    of guesses computed for one ledger serves another."""
    one = ReleaseLedger(f"sqlite:///{tmp_path / 'one.db'}", hash_key=KEY)
    two = ReleaseLedger(f"sqlite:///{tmp_path / 'two.db'}", hash_key=KEY)
    a = one.record("d", sample(), identifiers=["alice", "bob"])
    b = two.record("d", sample(), identifiers=["alice", "bob"])
    assert _salt(one) != _salt(two)
    assert not (one.member_hashes(a.id) or set()) & (two.member_hashes(b.id) or set())
    assert one.member_hashes(a.id) == frozenset(_stored(KEY, _salt(one), ["alice", "bob"]))
    with Session(one.engine) as s:
        fp_one = s.scalar(select(ReleaseRow.key_fingerprint))
    with Session(two.engine) as s:
        fp_two = s.scalar(select(ReleaseRow.key_fingerprint))
    assert fp_one != fp_two


def _unwrap(ledger: ReleaseLedger, release_id: int, key: bytes, ids: list[str], fp: str) -> None:
    """Store a release's people as a ledger written before the derivation did."""
    inner = [hmac.new(key, i.encode(), hashlib.sha256).hexdigest() for i in ids]
    with Session(ledger.engine) as s, s.begin():
        s.execute(delete(MemberRow).where(MemberRow.release_id == release_id))
        for h in inner:
            s.add(MemberRow(release_id=release_id, id_hash=h))
        s.execute(update(ReleaseRow).where(ReleaseRow.id == release_id).values(key_fingerprint=fp))


def test_hashes_stored_unwrapped_are_wrapped_on_first_use(url: str) -> None:
    ledger = ReleaseLedger(url, hash_key=KEY)
    legacy = hmac.new(KEY, b"airflow-privacy ledger key fingerprint v1", hashlib.sha256)
    old = ledger.record("old", sample(), identifiers=["alice", "bob"], status="published")
    older = ledger.record(
        "older", make_release(5, 3), identifiers=["bob", "carol"], status="published"
    )
    foreign = ledger.record("foreign", make_release(6, 3), identifiers=["dan"])
    _unwrap(ledger, old.id, KEY, ["alice", "bob"], key_fingerprint(KEY))  # salted scrypt
    _unwrap(ledger, older.id, KEY, ["bob", "carol"], legacy.hexdigest()[:16])  # first one
    _unwrap(ledger, foreign.id, OTHER_KEY, ["dan"], key_fingerprint(OTHER_KEY))
    salt = _salt(ledger)
    fresh = ReleaseLedger(url, hash_key=KEY)
    assert fresh.member_hashes(old.id) == frozenset(_stored(KEY, salt, ["alice", "bob"]))
    assert fresh.member_hashes(older.id) == frozenset(_stored(KEY, salt, ["bob", "carol"]))
    # the people are compared again across old and new releases: bob is shared
    new = fresh.record("new", make_release(7, 3), identifiers=["bob"], status="published")
    assert fresh.sharing_releases(new.id) == [old.id, older.id]
    with Session(fresh.engine) as s:
        prints = dict(s.execute(select(ReleaseRow.id, ReleaseRow.key_fingerprint)).all())
    assert prints[old.id] == prints[older.id] == prints[new.id]
    assert str(prints[old.id]).startswith("kdf1$")
    # hashes of another key are left as they were, and reading them names the key
    assert str(prints[foreign.id]).startswith("scrypt1$")
    with pytest.raises(InputError, match="hashed with another key"):
        fresh.member_hashes(foreign.id)
    # ... until the ledger is used with their key: then they are wrapped too
    other = ReleaseLedger(url, hash_key=OTHER_KEY)
    assert other.member_hashes(foreign.id) == frozenset(_stored(OTHER_KEY, salt, ["dan"]))
    with pytest.raises(InputError, match="hashed with another key"):
        other.member_hashes(old.id)
    # wrapping twice never happens: a third opening with the key changes nothing
    again = ReleaseLedger(url, hash_key=KEY)
    assert again.member_hashes(old.id) == frozenset(_stored(KEY, salt, ["alice", "bob"]))


# ---------------------------------------------------------------------- URLs
def test_bad_urls(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown ledger URL scheme 'foo'"):
        ReleaseLedger("foo://somewhere/ledger")
    with pytest.raises(InputError, match="does not exist"):
        ReleaseLedger(str(tmp_path / "missing" / "ledger.db"))
    with pytest.raises(InputError, match=r"ledger file .* does not exist"):
        ReleaseLedger(str(tmp_path / "nope.db"), create=False)
    assert not (tmp_path / "nope.db").exists()
    with pytest.raises(InputError, match="is a folder"):
        ReleaseLedger(str(tmp_path))
    with pytest.raises(InputError, match="is not a ledger URL"):
        ReleaseLedger("://")
    with pytest.raises(InputError, match="the ledger URL is empty"):
        ReleaseLedger("  ")
    with pytest.raises(LedgerUnavailable, match=r"postgresql\+psycopg://u:\*\*\*@127") as err:
        ReleaseLedger("postgresql://u:secret@127.0.0.1:1/db")
    assert "secret" not in str(err.value)
    # a plain path is a SQLite file
    ReleaseLedger(str(tmp_path / "plain.db")).close()
    assert (tmp_path / "plain.db").exists()


def test_default_url_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT", raising=False)
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_URL", f"sqlite:///{tmp_path / 'env.db'}")
    ReleaseLedger().record("d", sample())
    assert (tmp_path / "env.db").exists()
    monkeypatch.delenv("AIRFLOW_PRIVACY_LEDGER_URL")
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    ReleaseLedger().close()
    assert (tmp_path / "home" / "privacy_ledger.db").exists()


def test_the_ledger_and_the_audit_never_load_airflow(tmp_path: Path) -> None:
    code = f"""
import sys
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.core.composition import Population, composition_audit
from tests.ledger_worker import make_release
ledger = ReleaseLedger({str(tmp_path / "l.db")!r}, hash_key={KEY!r})
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
    assert ledger.release(info.id).n_groups == 5


# -------------------------------------------------------------------- reports
def test_reports_are_stored_per_attempt_replaced_and_deleted_with_their_release(
    url: str,
) -> None:
    ledger = ReleaseLedger(url)
    first = ledger.open_attempt(
        "clinic", sample(), required=["check"], first_release=True, content_digest=DIGEST
    )
    info = first.release
    ledger.block(first.uuid, ["too risky"])
    other = ledger.record("clinic", sample("microaggregated"))
    assert ledger.report(info.id) is None and ledger.report_times() == {}
    evil = INJECTIONS[0]
    report = {
        "verdict": {"status": "blocked", "reasons": [evil, "<script>alert(1)</script>"]},
        "numbers": [1, 2.5, float("inf")],
        evil: {"nested": [evil]},
    }
    stored_at = ledger.attach_report(first.uuid, report)
    got = ledger.report(info.id)
    assert got == {**report, "numbers": [1, 2.5, "inf"]}  # JSON-safe: inf as text
    assert ledger.attempt_report(first.uuid) == got
    assert ledger.report_times() == {info.id: stored_at}
    assert ledger.report_times([other.id]) == {}
    assert ledger.report(other.id) is None
    # a re-run replaces the report of the attempt: one report per attempt
    rerun = {"verdict": {"status": "blocked", "reasons": ["the second run"]}}
    ledger.attach_report(first.id, rerun)  # by id as well as by UUID
    assert ledger.report(info.id) == rerun
    with Session(ledger.engine) as s:
        assert s.scalar(select(text("COUNT(*)")).select_from(ReportRow)) == 1
    # a later attempt has its own report; the release shows the newest
    ledger.supersede(first.uuid, "fixed", by="steward")
    second = ledger.open_attempt(
        "clinic", sample(), required=["check"], first_release=True, content_digest=DIGEST
    )
    ledger.attach_report(second.uuid, {"verdict": {"status": "open"}})
    assert ledger.report(info.id) == {"verdict": {"status": "open"}}
    assert ledger.attempt_report(first.uuid) == rerun
    assert ledger.attempt_report(second.uuid) == {"verdict": {"status": "open"}}
    # another process sees it
    with ReleaseLedger(url, create=False) as again:
        assert again.attempt_report(first.uuid) == rerun
    with pytest.raises(InputError, match="attempt 999 does not exist"):
        ledger.attach_report(999, rerun)
    with pytest.raises(InputError, match="release #999 does not exist"):
        ledger.report(999)
    with pytest.raises(InputError, match="a release report is a mapping"):
        ledger.attach_report(first.uuid, ["not", "a", "mapping"])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="not JSON-serializable"):
        ledger.attach_report(first.uuid, {"x": object()})
    assert ledger.attempt_report(first.uuid) == rerun  # a refused write changed nothing
    ledger.delete(info.id)
    assert ledger.report_times() == {}
    with Session(ledger.engine) as s:
        assert s.scalar(select(text("COUNT(*)")).select_from(ReportRow)) == 0
    ledger.close()


def _failed_rules(task: str, info: Any, policy: Any = None) -> list[str]:
    return reasons(info, {task: "failed"}, policy)


def test_the_period_of_a_key_is_its_shortest_repeated_unit() -> None:
    """Against the definition: the smallest p such that every byte equals the one p before
    it (p = len when none), on every short key over a small alphabet."""
    import itertools

    from airflow_privacy.core.composition.identifiers import period

    def brute(key: bytes) -> int:
        return next(p for p in range(1, len(key) + 1)
                    if all(key[i] == key[i - p] for i in range(p, len(key))))  # fmt: skip

    for n in range(1, 9):
        for key in itertools.product(b"ab", repeat=n):
            assert period(bytes(key)) == brute(bytes(key)), key
    assert period(b"0123456789" * 4) == 10 and period(b"0123456789" * 4 + b"0") == 10
    assert period(b"tests-only-key-0123456789abcdefghijklmnopq") == 42
