"""An attempt is bound to what it recorded (issue: "the decision belongs to the
organization"): its bytes, its columns, its own dataset in every audit's scope, its run; a
decided attempt is never decided again; two attempts in each other's audit scope never both
publish (PostgreSQL, concurrent gates)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.errors import IllegalTransition, InputError, ReleaseBlocked
from airflow_privacy.gate.attempts import PublishRequest, publish
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.envelope import Envelope
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.report import ReportRequest, run_report
from airflow_privacy.gate.steps.audit import AuditRequest, run_audit
from airflow_privacy.gate.steps.check import CheckRequest, run_check
from airflow_privacy.gate.steps.maxent import MaxEntRequest, run_maxent
from airflow_privacy.ledger import ReleaseLedger
from tests.conftest_pg import PgServer, pg_server  # noqa: F401  (fixtures)
from tests.gate.conftest import Workspace
from tests.gate.lifecycle_support import attempt, check, gate, make_release, uuid_of
from tests.ledger.support import gate_rules


def _check(ws: Workspace, ctx: GateContext, rel: Path, uuid: str | None, **kw: Any) -> Envelope:
    return run_check(
        CheckRequest(
            release=ReleaseRef(path=str(rel)),
            sensitive=kw.pop("sensitive", "occupation"),
            group_columns=kw.pop("group_columns", ["bucket"]),
            criteria=kw.pop("criteria", ["k-anonymity:k=3"]),
            name=kw.pop("name", "check"),
            attempt=uuid,
            ledger=ws.ledger,
        ),
        ctx,
    )


def _published(ws: Workspace) -> list[str]:
    folder = ws.root / "published"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# ---------------------------------------------------------------------------- columns
def test_a_check_of_other_columns_is_refused_naming_both(ws: Workspace, ctx: GateContext) -> None:
    rel = make_release(ws, ctx, "v1", 0)
    u = uuid_of(attempt(ws, ctx, rel, first_release=True))
    # k-anonymity on one QI alone passes easily and says nothing about (age, ..., sex)
    with pytest.raises(InputError) as other_groups:
        _check(ws, ctx, rel, u, group_columns=["sex"], sensitive="occupation")
    text = str(other_groups.value)
    assert "grouped the records by (sex)" in text
    assert "the attempt recorded QIs (age, marital-status, race, sex)" in text
    with pytest.raises(InputError, match="measured sensitive column 'race', but the attempt "
                       "recorded 'occupation'"):  # fmt: skip
        _check(ws, ctx, rel, u, sensitive="race")
    with pytest.raises(InputError, match=r"estimated with QIs \(age\), but the attempt"):
        run_maxent(
            MaxEntRequest(release=ReleaseRef(path=str(rel)), sensitive="occupation",
                          bucket="bucket", qis=["age"], c=0.9, attempt=u, ledger=ws.ledger,
                          name="maxent"),
            ctx,
        )  # fmt: skip
    # nothing was recorded: the attempt has no checks, and the gate blocks
    with ReleaseLedger(ws.ledger) as db:
        assert db.attempt(u).checks == []
    # the accepted groupings of a bucketized release: the bucket, the QIs, both
    for cols in (["bucket"], ["age", "marital-status", "race", "sex", "bucket"]):
        env = _check(ws, ctx, rel, u, group_columns=cols, name="c" + str(len(cols)))
        assert env.attempt is not None  # recorded under the attempt (a verdict either way)


def test_a_check_recorded_around_the_layer_does_not_count(ws: Workspace, ctx: GateContext) -> None:
    """The ledger's API records what it is given; the gate's rules still read each check's
    columns and verdict rows when it decides."""
    rel = make_release(ws, ctx, "v1", 0)
    u = uuid_of(attempt(ws, ctx, rel, first_release=True, required=["check", "rows"]))
    digest = None
    with ReleaseLedger(ws.ledger) as db:
        digest = db.attempt(u).content_digest
        other = {"step": "check", "name": "check", "outcome": "passed", "safe": True,
                 "summary": "k holds", "release": {"ref": "x", "sensitive": "occupation",
                                                   "group_columns": ["zip"]}}  # fmt: skip
        db.record_check(u, name="check", step="check", safe=True, outcome="passed",
                        envelope=other, content_digest=digest)  # fmt: skip
        rows = {"step": "check", "name": "rows", "outcome": "passed", "safe": True,
                "summary": "fine",
                "results": [{"criterion": "k-anonymity", "safe": False}]}  # fmt: skip
        db.record_check(u, name="rows", step="check", safe=True, outcome="passed",
                        envelope=rows, content_digest=digest)  # fmt: skip
    with pytest.raises(ReleaseBlocked) as blocked:
        gate(ws, ctx, rel, u)
    reasons = blocked.value.envelope.reasons  # type: ignore[attr-defined]
    assert any("check: does not count for this attempt: it grouped the records by (zip)" in r
               for r in reasons)  # fmt: skip
    assert any("rows: does not count for this attempt: its verdict is 'passed' but its "
               "result(s) k-anonymity did not pass" in r for r in reasons)  # fmt: skip
    assert _published(ws) == []


# ---------------------------------------------------------------------------- audit scope
def _two_datasets(ws: Workspace, ctx: GateContext) -> tuple[Path, str]:
    """``adult`` v1 and ``other`` v1 published; an open attempt of ``adult`` v2 (its people
    overlap v1's) requiring an audit."""
    v1 = make_release(ws, ctx, "v1", 0)
    a = uuid_of(attempt(ws, ctx, v1, first_release=True))
    check(ws, ctx, v1, a)
    gate(ws, ctx, v1, a)
    o1 = make_release(ws, ctx, "o1", 5000)
    o = uuid_of(attempt(ws, ctx, o1, dataset="other", first_release=True))
    check(ws, ctx, o1, o)
    gate(ws, ctx, o1, o)
    v2 = make_release(ws, ctx, "v2", 200)
    return v2, uuid_of(attempt(ws, ctx, v2, required=["check", "audit"]))


def test_an_audit_scoped_away_from_its_dataset_does_not_count(
    ws: Workspace, ctx: GateContext
) -> None:
    v2, u = _two_datasets(ws, ctx)
    cand = ReleaseRef(path=str(v2))
    with pytest.raises(InputError) as away:
        run_audit(AuditRequest(candidate=cand, attempt=u, ledger=ws.ledger, datasets=["other"],
                               name="audit"), ctx)  # fmt: skip
    assert "leaves out the attempt's own dataset 'adult'" in str(away.value)
    # releases named by hand must include every published release of its own dataset
    fixed = run_audit(
        AuditRequest(candidate=cand, attempt=u, ledger=ws.ledger, against=["other@1"],
                     name="audit", max_pvp=100.0),
        ctx,
    )  # fmt: skip
    assert fixed.safe is True  # against the other dataset alone it passes
    _check(ws, ctx, v2, u)
    with pytest.raises(ReleaseBlocked) as blocked:
        gate(ws, ctx, v2, u)
    reasons = " | ".join(blocked.value.envelope.reasons)  # type: ignore[attr-defined]
    assert "audit: the audit's releases leave out published release(s) #1 (adult v1)" in reasons
    assert _published(ws) == ["o1.parquet", "o1.parquet.manifest.json", "v1.parquet",
                              "v1.parquet.manifest.json"]  # fmt: skip


# ------------------------------------------------------------------------- bytes and runs
def test_a_pasted_attempt_of_other_bytes_publishes_nothing(ws: Workspace, ctx: GateContext) -> None:
    v1 = make_release(ws, ctx, "v1", 0)
    a = uuid_of(attempt(ws, ctx, v1, first_release=True))
    check(ws, ctx, v1, a)
    gate(ws, ctx, v1, a)
    v2 = make_release(ws, ctx, "v2", 1000)
    # a published attempt pasted for other bytes: refused, nothing copied, nothing decided
    with pytest.raises(InputError, match=r"is not the file attempt .* nothing is published"):
        gate(ws, ctx, v2, a)
    assert "v2.parquet" not in _published(ws)
    # a blocked attempt pasted for other bytes: the same
    b = uuid_of(attempt(ws, ctx, v2, required=["strict"]))
    check(ws, ctx, v2, b, k=500, name="strict")
    with pytest.raises(ReleaseBlocked):
        gate(ws, ctx, v2, b)
    with pytest.raises(InputError, match=r"blocked .*nothing is published"):
        gate(ws, ctx, v1, b)
    # the blocked attempt re-run on its own bytes says it is decided, when, and what to do
    with pytest.raises(ReleaseBlocked) as again:
        gate(ws, ctx, v2, b)
    summary = again.value.envelope.summary  # type: ignore[attr-defined]
    assert f"attempt {b} was already decided (blocked at" in summary
    assert "open a new attempt" in summary and "clear this run's open-attempt task" in summary
    # a published attempt re-run to another destination: refused
    with pytest.raises(InputError, match="must name the same place"):
        elsewhere = str(ws.root / "elsewhere")
        publish(PublishRequest(attempt=a, release=ReleaseRef(path=str(v1)),
                               destination=elsewhere, ledger=ws.ledger), ctx)  # fmt: skip
    assert not (ws.root / "elsewhere").exists()


def test_a_published_attempt_rerun_says_whether_its_files_are_there(
    ws: Workspace, ctx: GateContext
) -> None:
    v1 = make_release(ws, ctx, "v1", 0)
    a = uuid_of(attempt(ws, ctx, v1, first_release=True))
    check(ws, ctx, v1, a)
    gate(ws, ctx, v1, a)
    assert "its files are in place (verified)" in gate(ws, ctx, v1, a).summary
    (ws.root / "published" / "v1.parquet").unlink()
    gone = gate(ws, ctx, v1, a)
    assert gone.outcome == "published" and "files are NOT there any more" in gone.summary
    ledger_only = publish(PublishRequest(attempt=a, ledger=ws.ledger), ctx)
    assert "were not looked at" in ledger_only.summary


def test_a_run_works_only_on_the_attempt_it_opened(ws: Workspace) -> None:
    def run(run_id: str) -> GateContext:
        return GateContext(origin={"front_end": "airflow", "dag_id": "rel", "run_id": run_id})

    mine, theirs = run("manual__1"), run("manual__2")
    v1 = make_release(ws, mine, "v1", 0)
    u = uuid_of(attempt(ws, mine, v1, first_release=True))
    # another run (a pasted UUID, an edited XCom) cannot check, decide or report it
    with pytest.raises(InputError, match="was opened by run 'manual__1' of DAG 'rel', not by "
                       "this run \\('manual__2'"):  # fmt: skip
        check(ws, theirs, v1, u)
    with pytest.raises(InputError, match="not by this run"):
        gate(ws, theirs, v1, u)
    with pytest.raises(InputError, match="not by this run"):
        run_report(ReportRequest(release=ReleaseRef(path=str(v1)), attempt=u,
                                 ledger=ws.ledger), theirs)  # fmt: skip
    with ReleaseLedger(ws.ledger) as db:
        assert db.attempt(u).status == "open" and db.attempt(u).checks == []
    # an attempt opened on the command line is not a run's either
    v2 = make_release(ws, mine, "v2", 500)
    cli = uuid_of(attempt(ws, GateContext(), v2, dataset="other", first_release=True))
    with pytest.raises(InputError, match="opened by the cli front end"):
        gate(ws, mine, v2, cli)
    # its own run: checked and published
    check(ws, mine, v1, u)
    assert gate(ws, mine, v1, u).outcome == "published"


def test_an_attempt_without_a_content_digest_is_blocked(ws: Workspace, ctx: GateContext) -> None:
    from airflow_privacy.core.composition.files import read_release_file

    rel = make_release(ws, ctx, "v1", 0)
    release = read_release_file(rel).release
    with ReleaseLedger(ws.ledger, create=True) as db:  # as ledgers before revision 0004 held
        a = db.open_attempt("adult", release, required=["c"], first_release=True)
        db.record_check(a.uuid, name="c", step="validate", safe=True, outcome="passed",
                        envelope={"safe": True, "outcome": "passed"},
                        reads_release=False)  # fmt: skip
        decided = db.decide(a.uuid, rules=gate_rules)
    assert decided.status == "blocked"
    assert any("recorded no content digest" in r for r in decided.reasons)


def test_a_decided_attempt_takes_no_check(ws: Workspace, ctx: GateContext) -> None:
    rel = make_release(ws, ctx, "v1", 0)
    u = uuid_of(attempt(ws, ctx, rel, first_release=True))
    check(ws, ctx, rel, u)
    gate(ws, ctx, rel, u)
    with pytest.raises(IllegalTransition, match="already decided"):
        _check(ws, ctx, rel, u, name="late")


# ------------------------------------------------------------------------ content identity
def test_one_content_is_one_release_with_or_without_identifiers(
    ws: Workspace, ctx: GateContext
) -> None:
    v1 = make_release(ws, ctx, "v1", 0)
    people = {"population": ReleaseRef(path=str(ws.root / "v1-input.parquet")), "id_column": "id"}
    a = uuid_of(attempt(ws, ctx, v1, first_release=True, **people))
    check(ws, ctx, v1, a)
    gate(ws, ctx, v1, a)
    # the same file without identifiers: already published, nothing checked or copied again
    again = attempt(ws, ctx, v1)
    assert again.outcome == "already-published" and "release #1" in again.summary
    # with other people's identifiers: refused (one content is one set of people)
    other = make_release(ws, ctx, "x", 3000)  # writes x-input.parquet
    with pytest.raises(InputError, match="holds this content with other identifier hashes"):
        attempt(ws, ctx, v1, population=ReleaseRef(path=str(ws.root / "x-input.parquet")),
                id_column="id")  # fmt: skip
    assert other.exists()
    # content first recorded without identifiers: hashes given later are attached to it
    v2 = make_release(ws, ctx, "v2", 5000)
    b = uuid_of(attempt(ws, ctx, v2, required=["strict"]))
    check(ws, ctx, v2, b, k=500, name="strict")
    with pytest.raises(ReleaseBlocked):
        gate(ws, ctx, v2, b)
    c = attempt(ws, ctx, v2, population=ReleaseRef(path=str(ws.root / "v2-input.parquet")),
                id_column="id")  # fmt: skip
    with ReleaseLedger(ws.ledger) as db:
        assert c.attempt is not None and c.attempt.release_id == db.attempt(b).release.id
        assert db.info(c.attempt.release_id).members == 400
        assert [r.status for r in db.list()] == ["published", "candidate"]  # c is open


# ------------------------------------------------------------------- concurrent gates (PG)
def test_two_gates_in_each_others_audit_scope_never_both_publish(
    ws: Workspace,
    ctx: GateContext,
    pg_server: PgServer,  # noqa: F811
) -> None:
    """20 trials, each on a fresh PostgreSQL database: datasets ``a`` and ``b`` (first
    releases), each attempt audited against every dataset before either publishes, then both
    gates decide at the same moment. At most one publishes; the other is blocked because a
    release in its audit's scope was published after the audit read the ledger."""
    a_rel = make_release(ws, ctx, "a", 0)
    b_rel = make_release(ws, ctx, "b", 100)  # 300 people in common
    outcomes: list[tuple[str, ...]] = []
    for _trial in range(20):
        name = pg_server.create_database()
        try:
            ws.ledger = pg_server.url(name)
            ua = uuid_of(attempt(ws, ctx, a_rel, dataset="a", first_release=True,
                                 required=["audit"]))  # fmt: skip
            ub = uuid_of(attempt(ws, ctx, b_rel, dataset="b", first_release=True,
                                 required=["audit"]))  # fmt: skip
            for rel, u in ((a_rel, ua), (b_rel, ub)):
                env = run_audit(AuditRequest(candidate=ReleaseRef(path=str(rel)), attempt=u,
                                             ledger=ws.ledger, name="audit"), ctx)  # fmt: skip
                assert env.safe is True, env.reasons  # nothing published yet: nothing to combine
            outcomes.append(_race(ws.ledger, {"a": ua, "b": ub}))
        finally:
            pg_server.drop_database(name)
    assert all(o.count("published") <= 1 for o in outcomes), outcomes
    assert all(o.count("published") == 1 for o in outcomes), outcomes  # one wins each time


def _race(ledger: str, attempts: dict[str, str]) -> tuple[str, ...]:
    """Every attempt's gate started at the same moment (one thread each); the outcomes."""
    barrier = threading.Barrier(len(attempts))
    got: dict[str, str] = {}

    def go(label: str, u: str) -> None:
        barrier.wait()
        try:
            got[label] = publish(PublishRequest(attempt=u, ledger=ledger), GateContext()).outcome
        except ReleaseBlocked:
            got[label] = "blocked"

    threads = [threading.Thread(target=go, args=item) for item in attempts.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return tuple(got.get(label, "?") for label in attempts)


def test_the_audits_scope_is_people_not_names(ws: Workspace, ctx: GateContext) -> None:
    """A new dataset (confirmed by name) whose people are in a published release of another
    dataset: the gate blocks an audit that did not read that release, and an audit under the
    attempt reads it by itself (the identifier hashes tell who is where)."""
    v1 = make_release(ws, ctx, "v1", 0)
    ids = {"id_column": "id"}
    a = uuid_of(
        attempt(
            ws,
            ctx,
            v1,
            first_release=True,
            required=["check"],
            population=ReleaseRef(path=str(ws.root / "v1-input.parquet")),
            **ids,
        )
    )
    check(ws, ctx, v1, a)
    typo = make_release(ws, ctx, "t", 200)  # people 200..599: 200 of them are in v1
    who = ReleaseRef(path=str(ws.root / "t-input.parquet"))
    t = uuid_of(
        attempt(
            ws,
            ctx,
            typo,
            dataset="adlut",
            first_release=True,
            new_dataset="adlut",
            required=["audit"],
            population=who,
            **ids,
        )
    )
    cand = ReleaseRef(path=str(typo))
    first = run_audit(
        AuditRequest(candidate=cand, attempt=t, ledger=ws.ledger, datasets=["adlut"], name="audit"),
        ctx,
    )
    assert first.safe is True  # nothing published yet
    gate(ws, ctx, v1, a)  # adult v1 is published now, sharing 200 people with the candidate
    with pytest.raises(ReleaseBlocked) as blocked:
        gate(ws, ctx, typo, t)
    reasons = " | ".join(blocked.value.envelope.reasons)  # type: ignore[attr-defined]
    assert "published release(s) #1 (adult v1) share people with this release" in reasons
    # a new attempt: the audit reads adult v1 by itself, and says so
    t2 = uuid_of(
        attempt(
            ws,
            ctx,
            typo,
            dataset="adlut",
            first_release=True,
            new_dataset="adlut",
            required=["audit"],
            population=who,
            **ids,
        )
    )
    again = run_audit(
        AuditRequest(
            candidate=cand,
            attempt=t2,
            ledger=ws.ledger,
            datasets=["adlut"],
            name="audit",
            max_pvp=100.0,
        ),
        ctx,
    )
    assert [p["name"] for p in again.details["priors"]] == ["adult v1"]
    assert again.details["ledger_scope"]["people"] == [1]
    assert any("sharing people with the candidate" in n for n in again.details["notes"])
