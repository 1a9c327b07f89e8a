"""Differential privacy in a scheduled release, end to end through ``dag.test`` (slow:
minutes): month 1's k-anonymous release is published; month 2's is blocked by the
composition audit, whose way forward names the DP release and the budget left; month 2's
marginals are released with DP within the budget and published; once the budget is spent
the next DP release is refused, nothing is published and the run is red."""

from __future__ import annotations

import re
from pathlib import Path

from tests.airflow.release_runs import (  # noqa: F401  (the module's fixture)
    airflow_home,
    drive,
    envelope,
    green,
)
from tests.policy_setup import record_policy

DP_DAGS = Path(__file__).resolve().parent / "dp_dags"


def test_the_dp_path_after_a_blocked_audit(airflow_home: Path, tmp_path: Path) -> None:  # noqa: F811
    from airflow_privacy.gate.policy import Policy
    from airflow_privacy.ledger import ReleaseLedger

    out = tmp_path / "out"
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    record_policy(url, "survey", policy=Policy(required_steps=["audit"],
                                               dp={"unit": "rho", "cap": 1.0}))  # fmt: skip
    runs, _ = drive(airflow_home, DP_DAGS, "privacy_monthly", out, url,
                    [{"month": 1, "first_release": True}, {"month": 2}])  # fmt: skip
    first, second = runs
    assert green(first) and envelope(first, "publish")["outcome"] == "published"
    assert not green(second) and second["tasks"]["publish"] == "failed"
    # the asset: an event for the published release, none for the blocked one
    (event,) = first["asset_events"]
    assert event["uri"] == "file:///srv/published/survey" and event["task"] == "publish"
    extra = event["extra"]
    assert extra["verdict"] == "published" and extra["dataset"] == "survey"
    assert extra["version"] == "1" and extra["policy_version"] == 1
    assert extra["release_id"] == envelope(first, "publish")["attempt"]["release_id"]
    assert second["asset_events"] == []
    audit = envelope(second, "composition_audit")
    assert audit["safe"] is False
    (dp_way,) = [a for a in audit["advice"] if a["kind"] == "dp-release"]
    assert "rho 1 of 1 is left for 'survey'" in dp_way["text"]
    runs, log = drive(airflow_home, DP_DAGS, "privacy_monthly_dp", out, url,
                      [{"month": 2, "rho": 0.5}, {"month": 3, "rho": 0.5},
                       {"month": 4, "rho": 0.5}])  # fmt: skip
    m2, m3, m4 = runs
    # the report's UI link ends its log line: nothing a log viewer could take for part of it
    links = re.findall(r"release report in the Airflow UI: (\S+)", log)
    assert links and all(re.fullmatch(r"\S*/privacy/attempts/[0-9a-f-]{36}", x) for x in links)
    for run, spent in ((m2, 0.5), (m3, 1.0)):
        assert green(run), run["tasks"]
        (event,) = run["asset_events"]  # a DP release's event carries its budget
        assert event["extra"]["dp"]["unit"] == "rho"
        assert abs(event["extra"]["dp"]["spent"] - spent) < 1e-9
        env = envelope(run, "dp_release")
        assert env["step"] == "dp-release" and env["safe"] is True
        assert abs(env["details"]["budget"]["spent"] - spent) < 1e-9
        published = envelope(run, "publish")
        assert published["outcome"] == "published"
        assert Path(published["outputs"]["published"]).is_file()
        # the report of a DP release: the budget, its meaning and the cells
        html = Path(envelope(run, "report")["outputs"]["report"]).read_text(encoding="utf-8")
        assert "Differential privacy" in html and "Privacy budget spent" in html
        assert "95% interval" in html and "never reset" in html
    # the budget is spent: refused, nothing drawn or recorded, the gate finds no attempt
    assert not green(m4) and m4["asset_events"] == []
    assert m4["tasks"]["dp_release"] == "failed" and m4["tasks"]["publish"] == "failed"
    refusal = envelope(m4, "dp_release")
    assert refusal["safe"] is False and "would exceed the budget" in refusal["reasons"][0]
    run4 = str(m4["run_id"]).replace(":", "_").replace("+", "_")
    assert not (out / "published" / run4 / "marginals.csv").exists()
    assert (out / run4 / "marginals.csv").exists() is False  # not even drawn and written
    # the gate's verdicts, through the notifier (its callbacks): two publications, one block
    notes = (out / "verdicts.txt").read_text(encoding="utf-8").split("---\n")[:-1]
    subjects = [n.splitlines()[0] for n in notes]
    assert subjects == ["PUBLISHED: survey v3", "PUBLISHED: survey v4",
                        "BLOCKED: the release was not published"], subjects  # fmt: skip
    assert "Report: " in notes[0] and "no attempt was opened" in notes[2]
    with ReleaseLedger(url) as db:
        statuses = [(r.kind, r.status) for r in db.list("survey")]
        spends = db.dp_spends("survey")
    assert statuses.count(("dp-marginals", "published")) == 2 and len(spends) == 2
    assert sum(s.rho for s in spends) <= 1.0 + 1e-12
