"""A risk analysis in a gated release DAG, end to end through ``dag.test`` (slow: minutes):
the gate stays closed. Beside the checks (no attempt) a risk task that succeeds leaves the
decision to the checks (green iff published); one that fails on bad input blocks the
release (the gate names the failed task). Recorded under the attempt, its result without a
verdict never counts as a pass: the attempt is blocked, naming it, and the report (a
teardown) shows the risk section."""

from __future__ import annotations

import json
from pathlib import Path

from tests.airflow.release_runs import (  # noqa: F401  (the module's fixture)
    airflow_home,
    drive,
    envelope,
    green,
    ledger_state,
)
from tests.policy_setup import record_policy

RISK_DAGS = Path(__file__).resolve().parent / "risk_dags"


def test_a_risk_task_never_opens_the_gate(airflow_home: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "out"
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    record_policy(url, "ok", "bad", "recorded")
    runs, log = drive(
        airflow_home, RISK_DAGS, "privacy_risk", out, url,
        [
            {"first_release": True, "dataset": "ok"},  # the checks pass: published
            {"first_release": True, "dataset": "bad", "risk_threshold": 1.5},  # bad input
        ],
    )  # fmt: skip
    ok, bad = runs
    # the analysis ran, gave no verdict, and the checks decided: green, published
    assert green(ok) and ok["tasks"]["risk"] == "success"
    risk = envelope(ok, "risk")
    assert risk["step"] == "risk" and risk["safe"] is None and risk["outcome"] == "estimated"
    assert risk["attempt"] is None  # not recorded
    assert any(m["measure"] == "journalist_highest_risk" for m in risk["details"]["measures"])
    assert Path(risk["outputs"]["records"]).is_file()
    assert envelope(ok, "publish")["outcome"] == "published"
    # a risk task that fails on bad input blocks the release: red, the gate names it
    assert not green(bad)
    assert bad["tasks"]["risk"] == "failed" and bad["tasks"]["publish"] == "failed"
    assert "threshold must be in (0, 1]" in log
    assert (
        "task risk ended failed: the release depends on it" in envelope(bad, "publish")["reasons"]
    )
    assert envelope(bad, "report")["details"]["status"] == "blocked"
    runs, log = drive(
        airflow_home, RISK_DAGS, "privacy_risk_recorded", out, url,
        [{"first_release": True, "dataset": "recorded"}],
    )  # fmt: skip
    (recorded,) = runs
    # recorded under the attempt, a result without a verdict is not a pass: blocked
    assert not green(recorded)
    assert recorded["tasks"]["risk"] == "success" and recorded["tasks"]["publish"] == "failed"
    reasons = envelope(recorded, "publish")["reasons"]
    assert any(r.startswith("risk: gave no verdict") for r in reasons), reasons
    report = envelope(recorded, "report")
    assert report["details"]["status"] == "blocked"
    html = Path(report["outputs"]["report"]).read_text(encoding="utf-8")
    assert 'id="risk"' in html and "Re-identification risk" in html
    assert ledger_state(url) == [
        ("1", "published", ["published"]),
        ("1", "blocked", ["blocked"]),
        ("1", "blocked", ["blocked"]),
    ]
    assert "person-" not in json.dumps([r["xcoms"] for r in runs])
