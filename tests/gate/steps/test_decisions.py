"""A steward's decisions (``ledger mark-published | mark-blocked | supersede | override |
approve | reject``) are steps like the others: the command line is derived from their
declarations and gives the envelope the layer gives with the same values, on two ledgers
that went through the same history; its exit code says whether the decision was done."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.cli import main
from airflow_privacy.errors import ReleaseBlocked
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.steps import STEPS
from tests.gate.conftest import KEY, Workspace
from tests.gate.lifecycle_support import attempt, check, gate, make_release, uuid_of
from tests.gate.parity_support import normal

DECISIONS = ("mark-published", "block", "supersede", "override", "approve", "reject")


def _history(ws: Workspace, before: str) -> str:
    """A release and its attempt in state ``before``: ``passing`` (open, its check passed),
    ``open`` (its check failed), ``blocked``, ``asked`` (blocked, an override asked by
    alice). Returns the attempt's UUID."""
    ctx = GateContext()
    rel = make_release(ws, ctx, "v1", 0)
    u = uuid_of(attempt(ws, ctx, rel, first_release=True, required=["strict"]))
    check(ws, ctx, rel, u, k=3 if before == "passing" else 500, name="strict")
    if before in ("blocked", "asked"):
        with pytest.raises(ReleaseBlocked):
            gate(ws, ctx, rel, u)
    if before == "asked":
        assert _cli(ws, ["ledger", "override", u, "--by", "alice", "--reason", "r"])[0] == 1
    return u


def _cli(ws: Workspace, argv: list[str]) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = main([*argv, "--ledger", ws.ledger, "--format", "json", "--quiet"], out)
    return code, json.loads(out.getvalue())


def _layer(ws: Workspace, name: str, values: dict[str, Any]) -> dict[str, Any]:
    step = STEPS[name]
    try:
        env = step.run(step.request({**values, "ledger": ws.ledger}), GateContext())
    except ReleaseBlocked as exc:
        assert exc.envelope is not None
        env = exc.envelope  # type: ignore[assignment]
    out: dict[str, Any] = env.to_dict()
    return out


# (decision, the attempt's state before, its words on the command line after ATTEMPT or
# RELEASE, its values in the layer, the outcome, the exit code)
CASES: list[tuple[str, str, list[str], dict[str, Any], str, int]] = [
    ("mark-published", "passing", [], {}, "published", 0),
    ("mark-published", "open", [], {}, "blocked", 1),
    ("block", "open", ["--reason", "a data error", "--reason", "and another"],
     {"reasons": ["a data error", "and another"]}, "blocked", 0),
    ("block", "open", ["--reason", "a data error", "--by", "dpo"],
     {"reasons": ["a data error"], "by": "dpo"}, "blocked", 0),
    ("supersede", "blocked", ["--reason", "fixed upstream", "--by", "alice"],
     {"reason": "fixed upstream", "by": "alice"}, "proposed", 1),
    ("override", "blocked", ["--reason", "accepted risk", "--by", "alice"],
     {"reason": "accepted risk", "by": "alice"}, "proposed", 1),
    ("approve", "asked", ["--reason", "board decision", "--by", "bob"],
     {"reason": "board decision", "by": "bob"}, "published", 0),
    ("approve", "asked", ["--set-aside", "--reason", "set aside", "--by", "bob"],
     {"reason": "set aside", "by": "bob", "set_aside": True}, "superseded", 0),
    ("reject", "asked", ["--reason", "no", "--by", "bob"],
     {"reason": "no", "by": "bob"}, "rejected", 1),
]  # fmt: skip


@pytest.mark.parametrize(("name", "before", "words", "values", "outcome", "code"), CASES)
def test_the_command_line_equals_the_layer(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    before: str,
    words: list[str],
    values: dict[str, Any],
    outcome: str,
    code: int,
) -> None:
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_KEY", KEY)
    monkeypatch.delenv("AIRFLOW_PRIVACY_LEDGER_URL", raising=False)
    one, two = (Workspace(tmp_path / s, f"sqlite:///{tmp_path / s / 'ledger.db'}") for s in "ab")
    for ws in (one, two):
        ws.root.mkdir()
    u1, u2 = _history(one, before), _history(two, before)
    by_release = name in ("mark-published", "block")
    target = ["1"] if by_release else [u1]
    got_code, by_cli = _cli(one, ["ledger", STEPS[name].command[-1], *target, *words])
    key = {"release_id": "1"} if by_release else {"blocked_attempt": u2}
    by_layer = _layer(two, name, {**key, **values})
    assert (by_cli["outcome"], got_code) == (outcome, code)
    assert normal(by_cli) == normal(by_layer)
    if values.get("by"):  # who decided is said, and kept with the attempt
        assert values["by"] in by_cli["summary"] or by_cli["details"].get("superseded_by")


def test_every_decision_is_declared_and_has_its_parity_case() -> None:
    assert {c[0] for c in CASES} == set(DECISIONS) <= set(STEPS)
    assert all(STEPS[d].command[0] == "ledger" for d in DECISIONS)
