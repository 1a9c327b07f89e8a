"""The three explorations (disclosure, skyline, audit-algorithm) are steps like the others:
they return the report envelope, the same from the command line as from the layer's Python
API with the same values, and every declared step is covered by a parity test (the
operators' steps by tests/gate/test_parity.py, these here)."""

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
from tests.gate.parity_support import normal

# Zhang et al.'s six patients (CCS 2007, Table 1): name, age, sex, condition
PATIENTS = [
    ("Alice", "young", "F", "Flu"),
    ("Bob", "young", "M", "Cancer"),
    ("Clark", "old", "M", "Cancer"),
    ("Diana", "old", "F", "Cancer"),
    ("Ellen", "young", "F", "Flu"),
    ("Fen", "old", "M", "Flu"),
]
#: the steps whose parity CLI vs operators tests/gate/test_parity.py checks
# dp-release: tests/gate/test_dp_release.py::test_cli_and_operator_agree
WITH_OPERATOR_PARITY = {"anonymize", "attempt", "check", "maxent", "audit", "risk", "publish",
                        "report", "policy", "dp-release"}  # fmt: skip
EXPLORATIONS = {"disclosure", "skyline", "audit-algorithm"}
#: a steward's decisions: tests/gate/steps/test_decisions.py
DECISIONS = {"mark-published", "block", "supersede", "override", "approve", "reject"}
#: the custom check (record-check): tests/gate/steps/test_custom.py
CUSTOM = {"validate"}
#: the ledger's commands and the policy's readings and decisions:
#: tests/gate/steps/test_ledger_steps.py
LEDGER = {"ledger-list", "ledger-show", "ledger-import", "policy-show", "policy-approve",
          "policy-reject"}  # fmt: skip


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "patients.csv"
    path.write_text(
        "name,age,sex,condition\n" + "".join(",".join(r) + "\n" for r in PATIENTS),
        encoding="utf-8",
    )
    return path


def cli(argv: list[str]) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = main([*argv, "--format", "json", "--quiet"], out)
    return code, json.loads(out.getvalue())


def layer(name: str, values: dict[str, Any]) -> dict[str, Any]:
    step = STEPS[name]
    env: dict[str, Any] = step.run(step.request(values), GateContext()).to_dict()
    return env


def test_every_declared_step_has_a_parity_test() -> None:
    covered = WITH_OPERATOR_PARITY | EXPLORATIONS | DECISIONS | CUSTOM | LEDGER
    assert set(STEPS) <= covered, set(STEPS) - covered


def test_disclosure_cli_equals_the_layer(table: Path) -> None:
    argv = ["disclosure", str(table), "--sensitive", "condition", "--group", "age",
            "--group", "sex", "--k-max", "3", "--benign", "Flu"]  # fmt: skip
    code, env = cli(argv)
    assert code == 0 and env["step"] == "disclosure" and env["safe"] is None
    direct = layer("disclosure", {
        "release": ReleaseRef(path=str(table)), "sensitive": "condition",
        "group": ["age", "sex"], "k_max": 3, "benign": ["Flu"],
    })  # fmt: skip
    assert normal(env) == normal(direct)
    assert [p["k"] for p in env["details"]["curve"]] == [0, 1, 2, 3]


def test_skyline_cli_equals_the_layer(table: Path) -> None:
    argv = ["skyline", str(table), "--sensitive", "condition", "--group", "age", "--c", "0.9",
            "--max-l", "2", "--max-k", "2", "--max-m", "2"]  # fmt: skip
    code, env = cli(argv)
    assert code == 0 and env["step"] == "skyline" and env["safe"] is None
    direct = layer("skyline", {
        "release": ReleaseRef(path=str(table)), "sensitive": "condition", "group": ["age"],
        "c": 0.9, "max_l": 2, "max_k": 2, "max_m": 2,
    })  # fmt: skip
    assert normal(env) == normal(direct)


def test_audit_algorithm_cli_equals_the_layer(table: Path) -> None:
    order = ["age,sex", "age", "sex", "*"]
    argv = ["audit-algorithm", str(table), "--qi", "age", "--qi", "sex", "--sensitive",
            "condition", "--id", "name", "--criterion", "entropy-l-diversity:l=2",
            *[x for c in order for x in ("--candidate", c)]]  # fmt: skip
    code, env = cli(argv)
    direct = layer("audit-algorithm", {
        "input": ReleaseRef(path=str(table)), "qi": ["age", "sex"], "sensitive": "condition",
        "id": "name", "criterion": [("entropy-l-diversity", {"l": 2})], "candidates": order,
    })  # fmt: skip
    assert code == (0 if direct["safe"] else 1)
    assert env["step"] == "audit-algorithm" and env["safe"] is direct["safe"]
    drop = {"elapsed_seconds"}
    assert normal({k: v for k, v in env["details"].items() if k not in drop}) == normal(
        {k: v for k, v in direct["details"].items() if k not in drop}
    )
    # people by row number only: no name, no condition anywhere in the envelope
    text = json.dumps(env)
    assert not any(name in text for name, *_ in PATIENTS)
    assert "Cancer" not in json.dumps(env["details"]["people"])


def test_an_exploration_never_passes_a_gate(table: Path) -> None:
    """No verdict: outcome computed, safe null (the gate reads null as not passed)."""
    code, env = cli(["disclosure", str(table), "--sensitive", "condition", "--group", "age",
                     "--k-max", "1"])  # fmt: skip
    assert code == 0 and env["outcome"] == "computed" and env["safe"] is None
