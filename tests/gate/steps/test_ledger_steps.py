"""The ledger's own commands and the policy's readings and decisions (``ledger list | show |
import``, ``policy show | approve | reject``) are declared steps like the others: the command
line is derived from their declarations and prints what the layer returns with the same
values (the ledger's commands: the envelope's details, as they always printed; the policy's:
the envelope), on ledgers that went through the same history."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.cli import main
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.steps import STEPS
from tests.gate.conftest import Workspace
from tests.gate.lifecycle_support import make_release
from tests.gate.parity_support import normal
from tests.policy_setup import record_policy

COLUMNS = ["--sensitive", "occupation", "--kind", "bucketized", "--bucket", "bucket"]


def _cli(ledger: str, argv: list[str]) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = main([*argv, "--ledger", ledger, "--format", "json", "--quiet"], out)
    return code, json.loads(out.getvalue())


def _layer(ledger: str, name: str, values: dict[str, Any]) -> Any:
    step = STEPS[name]
    return step.run(step.request({**values, "ledger": ledger}), GateContext())


def _two_ledgers(ws: Workspace) -> tuple[str, str, Path]:
    """Two ledgers with the same history: a policy for ``adult`` and one imported release."""
    release = make_release(ws, GateContext(), "v1", 0)
    ledgers = (f"sqlite:///{ws.root / 'a.db'}", f"sqlite:///{ws.root / 'b.db'}")
    for url in ledgers:
        record_policy(url, "adult")
        code, _ = _cli(url, ["ledger", "import", str(release), "--dataset", "adult"])
        assert code == 0
    return ledgers[0], ledgers[1], release


def test_import_cli_equals_the_layer(ws: Workspace) -> None:
    release = make_release(ws, GateContext(), "v1", 0)
    a, b = (f"sqlite:///{ws.root / name}" for name in ("a.db", "b.db"))
    code, printed = _cli(a, ["ledger", "import", str(release), "--dataset", "adult",
                             "--status", "published"])  # fmt: skip
    env = _layer(b, "ledger-import", {"release": ReleaseRef(path=str(release)),
                                      "dataset": "adult", "status": "published"})  # fmt: skip
    assert code == 0 and env.step == "record" and env.outcome == "recorded"
    assert normal(printed) == normal(env.details) and printed["created"] is True
    # the same content again: recorded once, said so, in both front ends
    code, again = _cli(a, ["ledger", "import", str(release), "--dataset", "adult"])
    env = _layer(b, "ledger-import", {"release": ReleaseRef(path=str(release)),
                                      "dataset": "adult"})  # fmt: skip
    assert code == 0 and again["created"] is False and env.outcome == "already-published"
    assert normal(again) == normal(env.details)


@pytest.mark.parametrize(
    ("argv", "name", "values"),
    [
        (["ledger", "list"], "ledger-list", {}),
        (["ledger", "list", "--dataset", "adult", "--status", "candidate"], "ledger-list",
         {"dataset": "adult", "status": "candidate"}),
        (["ledger", "show", "adult@1", "--groups"], "ledger-show",
         {"release_id": "adult@1", "groups": True}),
    ],
)  # fmt: skip
def test_reading_the_ledger_cli_equals_the_layer(
    ws: Workspace, argv: list[str], name: str, values: dict[str, Any]
) -> None:
    a, _, _ = _two_ledgers(ws)  # reading changes nothing: both front ends read one ledger
    code, printed = _cli(a, argv)
    env = _layer(a, name, values)
    assert code == 0 and env.step == "ledger" and env.outcome == "computed" and env.safe is None
    assert normal(printed) == normal(env.details) != {}
    if name == "ledger-list":
        assert [r["version"] for r in printed["releases"]] == ["1"]


@pytest.mark.parametrize(("action", "outcome", "code"), [("approve", "recorded", 0),
                                                          ("reject", "rejected", 1)])  # fmt: skip
def test_policy_decisions_cli_equal_the_layer(
    ws: Workspace, action: str, outcome: str, code: int
) -> None:
    a, b, _ = _two_ledgers(ws)
    for url in (a, b):  # a loosening change: proposed, waits for a second person
        assert main(["policy", "set", "--dataset", "adult", "--criterion", "k-anonymity:k=2",
                     "--by", "alice", "--reason", "looser", "--ledger", url, "--quiet"],
                    io.StringIO()) == 1  # fmt: skip
    got, printed = _cli(a, ["policy", action, "--dataset", "adult", "--version", "2",
                            "--by", "bob", "--reason", "board"])  # fmt: skip
    env = _layer(b, f"policy-{action}", {"dataset": "adult", "version": 2, "by": "bob",
                                         "reason": "board"})  # fmt: skip
    assert got == code and env.outcome == outcome
    assert normal(printed) == normal(env.to_dict())
    got, shown = _cli(a, ["policy", "show", "--dataset", "adult"])
    env = _layer(b, "policy-show", {"dataset": "adult"})
    assert got == 0 and env.outcome == "computed"
    assert normal(shown) == normal(env.to_dict())
    assert [v["status"] for v in shown["details"]["history"]][-1] == (
        "active" if action == "approve" else "rejected"
    )
