"""The release lifecycle through the gate's services, on SQLite and PostgreSQL: first
releases must be declared, typos never audit against nothing, blocked attempts do not block
content forever, published content is never published again, and the gate reads every
check back from the ledger."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from airflow_privacy.errors import IllegalTransition, InputError, ReleaseBlocked
from airflow_privacy.gate.attempts import (
    OverrideRequest,
    override,
    supersede,
)
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.envelope import Envelope
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.steps.audit import AuditRequest, run_audit
from airflow_privacy.ledger import ReleaseLedger
from tests.conftest_pg import pg_server, pg_url  # noqa: F401  (fixtures)
from tests.gate.conftest import Workspace
from tests.gate.lifecycle_support import attempt, check, gate, make_release, uuid_of


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, ws: Workspace) -> Iterator[Workspace]:
    if request.param == "postgresql":
        ws.ledger = request.getfixturevalue("pg_url")
    yield ws


def test_first_release_must_be_declared_then_publishes(
    backend: Workspace, ctx: GateContext
) -> None:
    ws = backend
    rel = make_release(ws, ctx, "v1", 0)
    if ws.ledger.startswith("sqlite"):
        with pytest.raises(InputError, match=r"does not exist.*first-release"):
            attempt(ws, ctx, rel)
        assert not (ws.root / "ledger.db").exists()  # nothing created
    else:
        with pytest.raises(InputError, match=r"no ledger yet|first-release"):
            attempt(ws, ctx, rel)
    env = attempt(ws, ctx, rel, first_release=True)
    assert env.outcome == "opened" and env.attempt is not None
    assert env.attempt.version == "1" and env.attempt.release_status == "candidate"
    passed = check(ws, ctx, rel, uuid_of(env))
    assert passed.safe is True and passed.attempt is not None
    done = gate(ws, ctx, rel, uuid_of(env))
    assert done.outcome == "published" and done.safe is True
    assert sorted(p.name for p in (ws.root / "published").iterdir()) == [
        "v1.parquet",
        "v1.parquet.manifest.json",
    ]
    with ReleaseLedger(ws.ledger, create=False) as db:
        (info,) = db.list()
        assert info.status == "published" and info.published_at
        assert db.attempt(uuid_of(env)).status == "published"
    # declaring a first release again, for a dataset with history: bad input
    rel2 = make_release(ws, ctx, "v2", 1000)
    with pytest.raises(InputError, match="already has 1 published release"):
        attempt(ws, ctx, rel2, first_release=True)


def test_rerunning_published_content_is_idempotent(ws: Workspace, ctx: GateContext) -> None:
    rel = make_release(ws, ctx, "v1", 0)
    first = attempt(ws, ctx, rel, first_release=True)
    check(ws, ctx, rel, uuid_of(first))
    gate(ws, ctx, rel, uuid_of(first))
    (ws.root / "published" / "v1.parquet").unlink()  # proves nothing is copied again
    again = attempt(ws, ctx, rel)  # no first_release needed: the content is published
    assert again.outcome == "already-published"
    assert "already published as release #1 (adult v1)" in again.summary
    skipped = check(ws, ctx, rel, uuid_of(again))
    assert skipped.outcome == "already-published" and skipped.safe is None
    done = gate(ws, ctx, rel, uuid_of(again))
    assert done.outcome == "already-published" and "release #1" in done.summary
    assert not (ws.root / "published" / "v1.parquet").exists()
    with ReleaseLedger(ws.ledger, create=False) as db:
        assert [r.status for r in db.list()] == ["published"]
        assert [a.status for a in db.attempts(1)] == ["published", "already-published"]


def test_blocked_attempt_then_a_fresh_attempt_publishes(ws: Workspace, ctx: GateContext) -> None:
    rel = make_release(ws, ctx, "v1", 0)
    first = attempt(ws, ctx, rel, first_release=True, required=["check", "strict"])
    check(ws, ctx, rel, uuid_of(first))
    failed = check(ws, ctx, rel, uuid_of(first), k=50, name="strict")
    assert failed.safe is False
    with pytest.raises(ReleaseBlocked) as blocked:
        gate(ws, ctx, rel, uuid_of(first))
    env = blocked.value.envelope
    assert isinstance(env, Envelope) and env.outcome == "blocked" and env.safe is False
    assert any(r.startswith("strict: k-anonymity") for r in env.reasons)
    # the way forward: every bucket fails k=50 (nothing short of suppressing all of them
    # passes), and the strictest k the release passes is said, re-checked, by its check
    (forward,) = env.advice
    assert forward["check"] == "strict" and forward["kind"] == "parameter"
    assert forward["parameter"] == "k" and forward["asked"] == 50
    assert 1 <= forward["passes_at"] < 50
    assert not (ws.root / "published").exists()
    # a decided attempt takes no more checks, and deciding again changes nothing
    with pytest.raises(IllegalTransition, match="already decided"):
        check(ws, ctx, rel, uuid_of(first), name="strict")
    with pytest.raises(ReleaseBlocked):
        gate(ws, ctx, rel, uuid_of(first))
    # the steward asks to set it aside: under the dataset's policy that takes a second,
    # different person (four eyes); asked, the attempt stays blocked
    sup = supersede(uuid_of(first), "k=50 was a typo in the DAG", ctx, ws.ledger, by="steward")
    assert sup.outcome == "proposed" and "asked by steward" in sup.summary
    with ReleaseLedger(ws.ledger, create=False) as db:
        assert db.attempt(uuid_of(first)).status == "blocked"
    with pytest.raises(IllegalTransition, match="waiting for a second person"):
        supersede(uuid_of(first), "again", ctx, ws.ledger, by="other")
    with pytest.raises(IllegalTransition, match="four eyes"):
        override(OverrideRequest(attempt=uuid_of(first), action="approve", reason="mine",
                                 by="Steward", ledger=ws.ledger), ctx)  # fmt: skip
    with pytest.raises(InputError, match="a supersede, which publishes nothing"):
        override(OverrideRequest(attempt=uuid_of(first), action="approve", reason="ok",
                                 by="officer", ledger=ws.ledger,
                                 release=ReleaseRef(path=str(rel)),
                                 destination=str(ws.root / "published")), ctx)  # fmt: skip
    sup = override(OverrideRequest(attempt=uuid_of(first), action="approve", reason="agreed",
                                   by="officer", ledger=ws.ledger), ctx)  # fmt: skip
    assert sup.outcome == "superseded" and sup.step == "supersede"
    assert "asked by steward, approved by officer" in sup.summary
    with ReleaseLedger(ws.ledger, create=False) as db:
        a = db.attempt(uuid_of(first))
        assert (a.status, a.superseded_by, a.supersede_reason) == (
            "superseded",
            "steward",
            "k=50 was a typo in the DAG",
        )
        assert a.superseded_at
        assert a.override is not None and a.override["decided_by"] == "officer"
        assert db.list()[0].status == "superseded"
    with pytest.raises(IllegalTransition, match="only a blocked attempt"):
        supersede(uuid_of(first), "again", ctx, ws.ledger)
    # the same content, after the decision changed: judged afresh, and published
    second = attempt(ws, ctx, rel, first_release=True, required=["check", "strict"])
    check(ws, ctx, rel, uuid_of(second))
    check(ws, ctx, rel, uuid_of(second), k=3, name="strict")
    assert gate(ws, ctx, rel, uuid_of(second)).outcome == "published"
    with ReleaseLedger(ws.ledger, create=False) as db:
        assert db.list()[0].status == "published"


@pytest.mark.parametrize("case", ["missing", "failed-task", "nothing", "no-verdict"])
def test_the_gate_names_every_missing_or_failed_step(
    ws: Workspace, ctx: GateContext, case: str
) -> None:
    rel = make_release(ws, ctx, "v1", 0)
    required = ["check", "audit"] if case != "nothing" else ["check"]
    env = attempt(ws, ctx, rel, first_release=True, required=required)
    failed: dict[str, str] = {}
    if case in ("missing", "failed-task"):
        check(ws, ctx, rel, uuid_of(env))
    if case == "failed-task":
        failed = {"notify_steward": "failed"}
        check(ws, ctx, rel, uuid_of(env), name="audit")
    if case == "no-verdict":
        from airflow_privacy.gate.custom import record_check

        with pytest.raises(InputError, match="must be true or false"):
            record_check(uuid_of(env), "check", "yes", "looks fine", ctx, ledger=ws.ledger)  # type: ignore[arg-type]
        record_check(uuid_of(env), "check", True, "fine", ctx, ledger=ws.ledger)
        with ReleaseLedger(ws.ledger) as db:  # an estimate without a threshold: no verdict
            db.record_check(
                uuid_of(env),
                name="audit",
                step="maxent",
                safe=None,
                outcome="estimated",
                envelope={"summary": "estimate only"},
                reads_release=False,
            )
    with pytest.raises(ReleaseBlocked) as blocked:
        gate(ws, ctx, rel, uuid_of(env), failed_tasks=failed)
    reasons = " | ".join(blocked.value.envelope.reasons)  # type: ignore[attr-defined]
    expected = {
        "missing": "audit: no result was recorded",
        "failed-task": "task notify_steward ended failed",
        "nothing": "no check was recorded for this attempt",
        "no-verdict": "audit: gave no verdict: estimate only",
    }[case]
    assert expected in reasons
    if case == "nothing":
        assert "check: no result was recorded" in reasons
    assert not (ws.root / "published").exists()


def test_a_file_changed_after_its_checks_is_not_published(ws: Workspace, ctx: GateContext) -> None:
    rel = make_release(ws, ctx, "v1", 0)
    env = attempt(ws, ctx, rel, first_release=True)
    check(ws, ctx, rel, uuid_of(env))
    other = make_release(ws, ctx, "other", 2000)
    rel.write_bytes(other.read_bytes())
    with pytest.raises(ReleaseBlocked, match=r"not the file attempt .* was opened on"):
        gate(ws, ctx, rel, uuid_of(env))


def test_typos_never_audit_against_nothing(ws: Workspace, ctx: GateContext) -> None:
    rel = make_release(ws, ctx, "v1", 0)
    env = attempt(ws, ctx, rel, first_release=True, required=["audit"])
    audited = run_audit(
        AuditRequest(
            candidate=ReleaseRef(path=str(rel)),
            attempt=uuid_of(env),
            ledger=ws.ledger,
            datasets=["adult"],
        ),
        ctx,
    )
    assert audited.safe is True and audited.details["first_release"] is True
    gate(ws, ctx, rel, uuid_of(env))
    rel2 = make_release(ws, ctx, "v2", 200)
    cand = ReleaseRef(path=str(rel2))
    with pytest.raises(InputError, match=r"dataset 'adlut' is not in ledger.*typo"):
        run_audit(AuditRequest(candidate=cand, ledger=ws.ledger, datasets=["adlut"]), ctx)
    typo = f"sqlite:///{ws.root / 'ledgr.db'}"
    with pytest.raises(InputError, match=r"ledgr.db.*does not exist.*first-release"):
        run_audit(AuditRequest(candidate=cand, ledger=typo), ctx)
    assert not (ws.root / "ledgr.db").exists()
    with pytest.raises(InputError, match=r"'/nonexistent/dir/l.db'.*does not exist"):
        run_audit(AuditRequest(candidate=cand, ledger="sqlite:////nonexistent/dir/l.db"), ctx)
    # the real audit: 200 people of v2 are in v1
    real = run_audit(AuditRequest(candidate=cand, ledger=ws.ledger, datasets=["adult"]), ctx)
    assert real.step == "audit" and real.details["overlap_size"] > 0
    assert [p["name"] for p in real.details["priors"]] == ["adult v1"]


def test_known_overlap_across_two_months(ws: Workspace, ctx: GateContext) -> None:
    """Member hashes recorded with the attempt make a later ``overlap=known`` audit work."""
    m1 = make_release(ws, ctx, "m1", 0)
    env = attempt(
        ws,
        ctx,
        m1,
        first_release=True,
        required=["audit"],
        population=ReleaseRef(path=str(ws.root / "m1-input.parquet")),
        id_column="id",
    )
    assert env.details["members"] == 400
    run_audit(
        AuditRequest(candidate=ReleaseRef(path=str(m1)), attempt=uuid_of(env), ledger=ws.ledger),
        ctx,
    )
    gate(ws, ctx, m1, uuid_of(env))
    m2 = make_release(ws, ctx, "m2", 300)  # 100 people in common
    known = run_audit(
        AuditRequest(
            candidate=ReleaseRef(path=str(m2)),
            ledger=ws.ledger,
            overlap="known",
            population=ReleaseRef(path=str(ws.root / "m2-input.parquet")),
            id_column="id",
        ),
        ctx,
    )
    worst = run_audit(AuditRequest(candidate=ReleaseRef(path=str(m2)), ledger=ws.ledger), ctx)
    assert known.details["overlap_size"] == 100
    assert worst.details["overlap_size"] > 100  # the worst case assumes more


def test_a_publish_interrupted_while_copying_counts_as_published(
    ws: Workspace, ctx: GateContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    import airflow_privacy.gate.attempts as attempts

    rel = make_release(ws, ctx, "v1", 0)
    env = attempt(ws, ctx, rel, first_release=True)
    check(ws, ctx, rel, uuid_of(env))

    def broken(*_: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(attempts, "_copy", broken)
    with pytest.raises(OSError, match="disk full"):
        gate(ws, ctx, rel, uuid_of(env))
    with ReleaseLedger(ws.ledger, create=False) as db:
        # the content already counts for every later audit (the safe side) ...
        assert db.list(status="published")[0].id == 1
        assert db.attempt(uuid_of(env)).status == "publishing"
    monkeypatch.undo()
    # ... and a re-run of the gate completes it
    assert gate(ws, ctx, rel, uuid_of(env)).outcome == "published"
    assert (ws.root / "published" / "v1.parquet").is_file()
