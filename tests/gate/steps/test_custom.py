"""The custom check (a verdict computed elsewhere) is a step like the others: ``record-check``
on the command line gives the envelope the layer gives with the same values (and
``record_check`` in Python, which Airflow's ``record_check`` calls), records it under the
attempt through the attempt protocol, and its exit code is the verdict."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.cli import main
from airflow_privacy.errors import IllegalTransition, InputError
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.custom import record_check
from airflow_privacy.gate.steps import STEPS
from airflow_privacy.ledger import ReleaseLedger
from tests.gate.conftest import KEY, Workspace
from tests.gate.lifecycle_support import attempt, make_release, uuid_of
from tests.gate.parity_support import normal


def _opened(ws: Workspace) -> str:
    ws.root.mkdir()
    rel = make_release(ws, GateContext(), "v1", 0)
    return uuid_of(attempt(ws, GateContext(), rel, first_release=True, required=["gx"]))


@pytest.mark.parametrize("verdict", ["passed", "failed"])
def test_the_command_line_equals_the_layer_and_records_the_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verdict: str
) -> None:
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_KEY", KEY)
    one, two, three = (Workspace(tmp_path / s, f"sqlite:///{tmp_path / s / 'l.db'}")
                       for s in "abc")  # fmt: skip
    u1, u2, u3 = _opened(one), _opened(two), _opened(three)
    out = io.StringIO()
    code = main(["record-check", "--attempt", u1, "--name", "gx", "--verdict", verdict,
                 "--summary", "14 expectations", "--reason", "age above 120", "--ledger",
                 one.ledger, "--format", "json", "--quiet"], out)  # fmt: skip
    by_cli: dict[str, Any] = json.loads(out.getvalue())
    step = STEPS["validate"]
    by_layer = step.run(step.request({
        "attempt": u2, "name": "gx", "verdict": verdict, "summary": "14 expectations",
        "reasons": ["age above 120"], "ledger": two.ledger,
    }), GateContext()).to_dict()  # fmt: skip
    by_python = record_check(u3, "gx", verdict == "passed", "14 expectations", GateContext(),
                             reasons=["age above 120"], ledger=three.ledger).to_dict()  # fmt: skip
    assert code == (0 if verdict == "passed" else 1)
    assert normal(by_cli) == normal(by_layer) == normal(by_python)
    assert by_cli["step"] == "validate" and by_cli["outcome"] == verdict
    assert by_cli["reasons"] == ([] if verdict == "passed" else ["gx: age above 120"])
    with ReleaseLedger(one.ledger) as db:
        (c,) = db.attempt(u1).checks
        assert (c.name, c.step, c.safe) == ("gx", "validate", verdict == "passed")


def test_a_verdict_that_is_not_a_boolean_and_a_decided_attempt_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_KEY", KEY)
    ws = Workspace(tmp_path / "a", f"sqlite:///{tmp_path / 'a' / 'l.db'}")
    u = _opened(ws)
    with pytest.raises(InputError, match="check 'gx': the verdict must be true or false"):
        record_check(u, "gx", "yes", "s", GateContext(), ledger=ws.ledger)  # type: ignore[arg-type]
    code = main(["record-check", "--attempt", u, "--verdict", "maybe", "--summary", "s",
                 "--ledger", ws.ledger], io.StringIO())  # fmt: skip
    assert code == 2 and "argument --verdict: invalid choice" in capsys.readouterr().err
    main(["ledger", "mark-blocked", "1", "--reason", "r", "--ledger", ws.ledger, "--quiet"],
         io.StringIO())  # fmt: skip
    with pytest.raises(IllegalTransition):
        record_check(u, "gx", True, "s", GateContext(), ledger=ws.ledger)
