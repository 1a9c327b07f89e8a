"""The provider's cluster policy (``airflow.policy`` entry point): a DAG whose gate could end
a run green without a publication is refused when it is parsed, naming the task and the fix;
the accepted shapes (the sample DAG, a cleanup teardown beside the report) parse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFUSED = Path(__file__).resolve().parent / "refused_dags"
PARSE = """
import json, sys
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=sys.argv[1])
print("RESULT " + json.dumps({"dags": sorted(bag.dag_ids),
                              "errors": {str(k): str(v) for k, v in bag.import_errors.items()}}))
"""


def _parse(folder: Path, home: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env |= {"AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "PYTHONPATH": str(ROOT)}  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", PARSE, str(folder)], env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    out: dict[str, object] = json.loads(line[len("RESULT ") :])
    return out


def test_gates_that_could_end_a_run_green_without_publishing_are_refused(tmp_path: Path) -> None:
    out = _parse(REFUSED, tmp_path)
    assert out["dags"] == ["privacy_refused_ok"]
    errors = out["errors"]
    assert isinstance(errors, dict) and len(errors) == 4
    message = " | ".join(errors.values())
    # every refused DAG is named, with the task and the fix
    for dag_id in ("cleanup", "report_leaf", "report_no_fail", "no_report"):
        assert f"DAG 'privacy_refused_{dag_id}' is refused by airflow-privacy" in message
    assert "task 'cleanup' runs after the gate 'publish' and is not a teardown" in message
    assert "cleanup.as_teardown()" in message
    assert "task 'report' runs after the gate 'publish' and is not a teardown" in message
    assert "has no ReleaseReportOperator teardown after it" in message


def test_the_shipped_dags_are_accepted(tmp_path: Path) -> None:
    """The sample release DAG (a gate) and the steward's decisions DAG (no gate: the policy
    leaves it alone)."""
    out = _parse(ROOT / "dags", tmp_path)
    assert out["dags"] == ["privacy_release", "privacy_steward_decisions"]
    assert out["errors"] == {}
