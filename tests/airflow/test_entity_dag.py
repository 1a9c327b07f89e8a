"""Entity-level counting in a gated release DAG, end to end through ``dag.test`` (slow): a
release whose rows pass 2-anonymity but whose people do not (one group is one person's
rows) is blocked by the check with ``entity_column`` and the run is red; the same DAG with
two people in every group publishes and is green. No person identifier reaches an XCom."""

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

ENTITY_DAGS = Path(__file__).resolve().parent / "entity_dags"


def test_entity_counting_fails_closed(airflow_home: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "out"
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    record_policy(url, "leaky", "ok")  # the officer's part
    runs, log = drive(
        airflow_home, ENTITY_DAGS, "privacy_entity", out, url,
        [{"dataset": "leaky", "leaky": True}, {"dataset": "ok", "leaky": False}],
    )  # fmt: skip
    leaky, ok = runs
    # rows counting passes, entity counting fails: the gate blocks, the run is red
    rows = envelope(leaky, "check_rows")
    people = envelope(leaky, "check_people")
    assert rows["safe"] is True and rows["release"]["records"] == 8
    assert people["safe"] is False and people["release"]["records"] == 3
    assert people["details"]["entity_column"] == "pid"
    assert people["details"]["rows"] == 8 and people["details"]["entities"] == 3
    assert not green(leaky) and leaky["tasks"]["publish"] == "failed"
    reasons = envelope(leaky, "publish")["reasons"]
    assert any("check_people" in r for r in reasons), reasons
    # two people in every group: published, green
    assert envelope(ok, "check_people")["safe"] is True
    assert green(ok) and envelope(ok, "publish")["outcome"] == "published"
    assert ledger_state(url) == [("1", "blocked", ["blocked"]), ("1", "published", ["published"])]
    assert "person-" not in json.dumps([r["xcoms"] for r in runs])
    assert "person-0001" not in log
