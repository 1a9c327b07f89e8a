"""What the checks saw must still hold when the gate decides: checks tied to the attempt's
bytes, failed verdicts that stand, concurrent attempts of the same content or dataset, audits
that went stale, destinations that are never overwritten, imports that would go around the
gate. On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from airflow_privacy.core.composition.files import read_release_file
from airflow_privacy.errors import IllegalTransition, InputError, ReleaseBlocked
from airflow_privacy.gate.attempts import PublishRequest, publish
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.steps.audit import AuditRequest, run_audit
from airflow_privacy.ledger import ReleaseLedger
from tests.conftest_pg import pg_server, pg_url  # noqa: F401  (fixtures)
from tests.gate.conftest import Workspace
from tests.gate.lifecycle_support import attempt, check, gate, make_release, uuid_of
from tests.ledger.support import gate_rules


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, ws: Workspace) -> Iterator[Workspace]:
    if request.param == "postgresql":
        ws.ledger = request.getfixturevalue("pg_url")
    yield ws


def _status(ws: Workspace, uuid: str) -> str:
    with ReleaseLedger(ws.ledger, create=False) as db:
        return db.attempt(uuid).status


def test_a_check_of_another_file_is_not_a_check_of_the_attempt(
    backend: Workspace, ctx: GateContext
) -> None:
    ws = backend
    risky = make_release(ws, ctx, "v2", 0)
    safe = make_release(ws, ctx, "v1", 400)
    u = uuid_of(attempt(ws, ctx, risky, first_release=True))
    with pytest.raises(InputError, match=r"not the file attempt .* was opened on"):
        check(ws, ctx, safe, u)
    with ReleaseLedger(ws.ledger, create=False) as db:
        assert db.attempt(u).checks == []  # nothing recorded
    # the ledger refuses it too, in its own transaction (a caller that skips the gate layer)
    with ReleaseLedger(ws.ledger) as db, pytest.raises(InputError, match="did not read"):
        db.record_check(u, name="check", step="check", safe=True, outcome="passed",
                        envelope={"safe": True, "outcome": "passed"},
                        content_digest="sha256:" + "0" * 64)  # fmt: skip
    with pytest.raises(ReleaseBlocked, match="check: no result was recorded"):
        gate(ws, ctx, risky, u)
    assert not (ws.root / "published").exists()


def test_a_failed_verdict_stands_for_its_attempt(backend: Workspace, ctx: GateContext) -> None:
    ws = backend
    rel = make_release(ws, ctx, "v1", 0)
    u = uuid_of(attempt(ws, ctx, rel, first_release=True))
    assert check(ws, ctx, rel, u, k=50).safe is False
    with pytest.raises(IllegalTransition, match="already failed"):
        check(ws, ctx, rel, u, k=2)  # looser criteria, same check name
    with pytest.raises(ReleaseBlocked):
        gate(ws, ctx, rel, u)
    # a passing verdict may be replaced (a re-run), and the replacement decides
    v = uuid_of(attempt(ws, ctx, rel, first_release=True))
    assert check(ws, ctx, rel, v).safe is True
    assert check(ws, ctx, rel, v, k=50).safe is False
    with pytest.raises(ReleaseBlocked, match="k-anonymity"):
        gate(ws, ctx, rel, v)


def test_two_attempts_of_the_same_content_publish_it_once(
    backend: Workspace, ctx: GateContext
) -> None:
    ws = backend
    rel = make_release(ws, ctx, "v1", 0)
    a = uuid_of(attempt(ws, ctx, rel, first_release=True))
    b = uuid_of(attempt(ws, ctx, rel, first_release=True))
    check(ws, ctx, rel, a)
    check(ws, ctx, rel, b)
    assert gate(ws, ctx, rel, a).outcome == "published"
    second = gate(ws, ctx, rel, b)
    assert second.outcome == "already-published" and second.safe is None
    assert "by another attempt" in second.summary
    assert _status(ws, b) == "already-published"


def test_concurrent_first_releases_of_one_dataset_publish_one(
    backend: Workspace, ctx: GateContext
) -> None:
    ws = backend
    one = make_release(ws, ctx, "v1", 0)
    two = make_release(ws, ctx, "v2", 400)
    a = uuid_of(attempt(ws, ctx, one, first_release=True))
    b = uuid_of(attempt(ws, ctx, two, first_release=True))
    check(ws, ctx, one, a)
    check(ws, ctx, two, b)
    assert gate(ws, ctx, one, a).outcome == "published"
    with pytest.raises(ReleaseBlocked, match="declared a first release, but release #"):
        gate(ws, ctx, two, b)


def _audit(ws: Workspace, ctx: GateContext, rel: object, uuid: str) -> None:
    env = run_audit(  # a lenient audit (every person may be pinned down): staleness is tested
        AuditRequest(candidate=ReleaseRef(path=str(rel)), attempt=uuid, ledger=ws.ledger,
                     max_pvp=100.0),
        ctx,
    )  # fmt: skip
    assert env.safe is True


def test_an_audit_is_stale_once_a_release_it_did_not_see_is_published(
    backend: Workspace, ctx: GateContext
) -> None:
    ws = backend
    first = make_release(ws, ctx, "v1", 0)
    u = uuid_of(attempt(ws, ctx, first, first_release=True))
    check(ws, ctx, first, u)
    assert gate(ws, ctx, first, u).outcome == "published"
    # two candidates audited against v1 only; one is published, then the other may not be
    two = make_release(ws, ctx, "v2", 400)
    three = make_release(ws, ctx, "v3", 800)
    b = uuid_of(attempt(ws, ctx, two, required=["check", "audit"]))
    c = uuid_of(attempt(ws, ctx, three, required=["check", "audit"]))
    for rel, uid in ((two, b), (three, c)):
        check(ws, ctx, rel, uid)
        _audit(ws, ctx, rel, uid)
    assert gate(ws, ctx, two, b).outcome == "published"
    with pytest.raises(ReleaseBlocked, match="published after this audit read the ledger"):
        gate(ws, ctx, three, c)
    # a new attempt is audited against both and may publish
    d = uuid_of(attempt(ws, ctx, three, required=["check", "audit"]))
    check(ws, ctx, three, d)
    _audit(ws, ctx, three, d)
    assert gate(ws, ctx, three, d).outcome == "published"


def test_publishing_never_overwrites_and_checks_the_destination_first(
    backend: Workspace, ctx: GateContext
) -> None:
    ws = backend
    rel = make_release(ws, ctx, "v1", 0)
    u = uuid_of(attempt(ws, ctx, rel, first_release=True))
    check(ws, ctx, rel, u)
    # another file where the release would go: refused before the gate decides
    dest = ws.root / "published"
    dest.mkdir()
    (dest / rel.name).write_bytes(b"another release")
    with pytest.raises(InputError, match="already exists with other content"):
        gate(ws, ctx, rel, u)
    assert _status(ws, u) == "open"
    # a destination below a file: refused before deciding too
    (ws.root / "afile").write_text("x")
    with pytest.raises(InputError, match="is a file, not a folder"):
        publish(PublishRequest(attempt=u, release=ReleaseRef(path=str(rel)),
                               destination=str(ws.root / "afile" / "sub"), ledger=ws.ledger),
                ctx)  # fmt: skip
    assert _status(ws, u) == "open"
    (dest / rel.name).unlink()
    assert gate(ws, ctx, rel, u).outcome == "published"
    assert (dest / rel.name).read_bytes() == rel.read_bytes()
    assert read_release_file(dest / rel.name).release.n_records == 400


def test_an_interrupted_publish_finishes_only_to_the_same_place(
    backend: Workspace, ctx: GateContext
) -> None:
    ws = backend
    rel = make_release(ws, ctx, "v1", 0)
    u = uuid_of(attempt(ws, ctx, rel, first_release=True))
    check(ws, ctx, rel, u)
    with ReleaseLedger(ws.ledger) as db:  # the gate allowed it; the copy never happened
        assert db.decide(
            u, rules=gate_rules, destination=str(ws.root / "published" / rel.name)
        ).status == ("publishing")
    with pytest.raises(InputError, match="must name the same place"):
        publish(PublishRequest(attempt=u, release=ReleaseRef(path=str(rel)),
                               destination=str(ws.root / "elsewhere"), ledger=ws.ledger),
                ctx)  # fmt: skip
    assert gate(ws, ctx, rel, u).outcome == "published"
    assert (ws.root / "published" / rel.name).read_bytes() == rel.read_bytes()


def test_importing_gated_content_as_history_is_refused(
    backend: Workspace, ctx: GateContext
) -> None:
    ws = backend
    rel = make_release(ws, ctx, "v1", 0)
    u = uuid_of(attempt(ws, ctx, rel, first_release=True))
    check(ws, ctx, rel, u, k=50)
    with pytest.raises(ReleaseBlocked):
        gate(ws, ctx, rel, u)
    with ReleaseLedger(ws.ledger) as db, pytest.raises(IllegalTransition, match="around the gate"):
        db.record("adult", read_release_file(rel).release, status="published")
    with ReleaseLedger(ws.ledger, create=False) as db:
        assert db.list()[0].content_status == "candidate"
