"""Overriding a blocked attempt takes four eyes: one person asks, a second, different person
approves (it publishes: the bytes verified, the files copied, who/when/why and the policy
version recorded) or rejects (the block stands)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from airflow_privacy.cli import main
from airflow_privacy.errors import IllegalTransition, InputError, ReleaseBlocked
from airflow_privacy.gate.attempts import OverrideRequest, override
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.policy import set_policy
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.steps.policy import build_policy
from airflow_privacy.ledger import ReleaseLedger
from tests.gate.conftest import Workspace
from tests.gate.lifecycle_support import attempt, check, gate, make_release, uuid_of


def _blocked(ws: Workspace, ctx: GateContext, name: str = "v1", first: int = 0) -> tuple[Path, str]:
    rel = make_release(ws, ctx, name, first)
    u = uuid_of(attempt(ws, ctx, rel, first_release=True, required=["strict"]))
    check(ws, ctx, rel, u, k=500, name="strict")
    with pytest.raises(ReleaseBlocked):
        gate(ws, ctx, rel, u)
    return rel, u


def _ov(ws: Workspace, ctx: GateContext, u: str, action: str, by: str, **kw: object) -> object:
    return override(OverrideRequest(attempt=u, action=action, reason=f"{by}'s reason", by=by,
                                    ledger=ws.ledger, **kw), ctx)  # type: ignore[arg-type]  # fmt: skip


def test_an_override_publishes_only_with_a_second_person(ws: Workspace, ctx: GateContext) -> None:
    set_policy("adult", build_policy(criteria=["k-anonymity:k=3"]), by="officer", reason="r",
               ctx=ctx, ledger=ws.ledger)  # fmt: skip
    rel, u = _blocked(ws, ctx)
    with pytest.raises(IllegalTransition, match="no override or supersede waiting"):
        _ov(ws, ctx, u, "approve", "bob")
    asked = _ov(ws, ctx, u, "ask", "alice")
    assert asked.outcome == "proposed"  # type: ignore[attr-defined]
    with pytest.raises(IllegalTransition, match="waiting for a second person"):
        _ov(ws, ctx, u, "ask", "carol")
    with pytest.raises(IllegalTransition, match="four eyes"):
        _ov(ws, ctx, u, "approve", "Alice ")
    assert not (ws.root / "published").exists()
    other = make_release(ws, ctx, "other", 3000)
    to = str(ws.root / "published")
    with pytest.raises(InputError, match="nothing is published"):
        _ov(ws, ctx, u, "approve", "bob", release=ReleaseRef(path=str(other)), destination=to)
    done = _ov(ws, ctx, u, "approve", "bob", release=ReleaseRef(path=str(rel)), destination=to)
    assert done.outcome == "published" and done.safe is True  # type: ignore[attr-defined]
    summary = done.summary  # type: ignore[attr-defined]
    assert "asked by alice, approved by bob" in summary and "policy v1" in summary
    assert sorted(p.name for p in (ws.root / "published").iterdir()) == [
        "v1.parquet", "v1.parquet.manifest.json",
    ]  # fmt: skip
    with ReleaseLedger(ws.ledger) as db:
        a = db.attempt(u)
        assert a.status == "published" and a.policy_version == 1
        assert a.override is not None
        assert (a.override["requested_by"], a.override["decided_by"]) == ("alice", "bob")
        assert a.override["outcome"] == "approved" and a.reasons  # the reasons stay recorded
        assert db.info(a.release.id).status == "published"


def test_a_rejected_override_keeps_the_block(ws: Workspace, ctx: GateContext) -> None:
    _rel, u = _blocked(ws, ctx)
    _ov(ws, ctx, u, "ask", "alice")
    assert _ov(ws, ctx, u, "reject", "bob").outcome == "rejected"  # type: ignore[attr-defined]
    with ReleaseLedger(ws.ledger) as db:
        a = db.attempt(u)
        assert a.status == "blocked" and a.override is not None
        assert a.override["outcome"] == "rejected"
    assert not (ws.root / "published").exists()
    _ov(ws, ctx, u, "ask", "alice")  # a new request may follow a rejection


def test_only_the_policys_approvers_approve(ws: Workspace, ctx: GateContext) -> None:
    set_policy("adult", build_policy(criteria=["k-anonymity:k=3"], approvers=["dpo"]),
               by="officer", reason="r", ctx=ctx, ledger=ws.ledger)  # fmt: skip
    _rel, u = _blocked(ws, ctx)
    _ov(ws, ctx, u, "ask", "alice")
    with pytest.raises(IllegalTransition, match="names dpo"):
        _ov(ws, ctx, u, "approve", "bob")
    assert _ov(ws, ctx, u, "approve", "dpo").outcome == "published"  # type: ignore[attr-defined]


def test_overrides_on_the_command_line(ws: Workspace, ctx: GateContext) -> None:
    _rel, u = _blocked(ws, ctx)

    def run(*argv: str) -> tuple[int, dict[str, object]]:
        out = io.StringIO()
        code = main([*argv, "--ledger", ws.ledger, "--format", "json", "--quiet"], out=out)
        return code, json.loads(out.getvalue()) if out.getvalue() else {}

    code, env = run("ledger", "override", u, "--by", "alice", "--reason", "accepted risk")
    assert code == 1 and env["step"] == "override" and env["outcome"] == "proposed"
    assert run("ledger", "approve", u, "--by", "alice", "--reason", "mine")[0] == 5
    code, env = run("ledger", "approve", u, "--by", "bob", "--reason", "board decision")
    assert code == 0 and env["outcome"] == "published"


def test_a_pending_override_set_aside_by_a_second_person(ws: Workspace, ctx: GateContext) -> None:
    """The steward's third answer (issue 23): a pending override approved as a supersede.
    Four eyes as for an approval; nothing is published; the attempt is superseded, recorded
    as a supersede asked as an override; a new attempt of the same release is judged
    afresh; the command line and the layer agree."""
    set_policy("adult", build_policy(criteria=["k-anonymity:k=3"]), by="officer", reason="r",
               ctx=ctx, ledger=ws.ledger)  # fmt: skip
    rel, u = _blocked(ws, ctx)
    with pytest.raises(IllegalTransition, match="no override or supersede waiting"):
        _ov(ws, ctx, u, "set-aside", "bob")
    _ov(ws, ctx, u, "ask", "alice")
    with pytest.raises(IllegalTransition, match="four eyes"):
        _ov(ws, ctx, u, "set-aside", "alice")
    with pytest.raises(InputError, match="go with approving only"):
        _ov(ws, ctx, u, "set-aside", "bob", release=ReleaseRef(path=str(rel)))
    done = _ov(ws, ctx, u, "set-aside", "bob")
    assert done.outcome == "superseded" and done.step == "supersede"  # type: ignore[attr-defined]
    summary = done.summary  # type: ignore[attr-defined]
    assert "asked by alice (asked as an override), approved by bob" in summary
    assert summary.endswith("bob's reason")
    assert not (ws.root / "published").exists()
    with ReleaseLedger(ws.ledger) as db:
        a = db.attempt(u)
        assert a.status == "superseded" and a.override is not None
        assert (a.override["kind"], a.override["asked_as"]) == ("supersede", "override")
        assert (a.override["requested_by"], a.override["decided_by"]) == ("alice", "bob")
        assert a.override["policy_version"] == 1
        assert db.info(a.release.id).status != "published"
    again = uuid_of(attempt(ws, ctx, rel, first_release=True, required=["strict"]))  # afresh
    assert again != u
    # the same through the command line
    _rel2, u2 = _blocked(ws, ctx, "v2", 3000)

    def run(*argv: str) -> tuple[int, dict[str, object]]:
        out = io.StringIO()
        code = main([*argv, "--ledger", ws.ledger, "--format", "json", "--quiet"], out=out)
        return code, json.loads(out.getvalue()) if out.getvalue() else {}

    assert run("ledger", "override", u2, "--by", "alice", "--reason", "r")[0] == 1
    code, env = run("ledger", "approve", u2, "--set-aside", "--by", "bob", "--reason", "bob's")
    assert code == 0 and env["step"] == "supersede" and env["outcome"] == "superseded"
    code, _ = run("ledger", "approve", u2, "--set-aside", "--by", "carol", "--reason", "x")
    assert code != 0  # decided already
