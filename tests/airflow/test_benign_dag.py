"""End to end through ``dag.test`` (as ``airflow dags test`` runs it): a release that fails
(c,k)-safety only because of a frequent benign value ("none") is blocked without
``benign_values`` and published with it; each run is green iff its release was published,
and the envelopes record the declared values. Slow (starts Airflow)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.airflow.release_runs import (  # noqa: F401  (fixture)
    SCENARIO_DAGS,
    airflow_home,
    drive,
    envelope,
    green,
    ledger_state,
)
from tests.policy_setup import record_policy


def test_benign_values_decide_the_gate(airflow_home: Path, tmp_path: Path) -> None:  # noqa: F811
    ledger = f"sqlite:///{tmp_path / 'ledger.db'}"
    record_policy(ledger, "ward-a", "ward-b")  # the officer's part
    runs, log = drive(
        airflow_home,
        SCENARIO_DAGS,
        "privacy_benign",
        tmp_path / "out",
        ledger,
        [{"dataset": "ward-a"}, {"dataset": "ward-b", "benign": ["none"]}],
    )
    blocked, published = runs
    for run in runs:  # green iff published
        assert green(run) == (envelope(run, "publish")["outcome"] == "published")
    assert not green(blocked)
    check = envelope(blocked, "check")
    assert check["safe"] is False and "benign" not in check["details"]
    assert envelope(blocked, "publish")["outcome"] != "published"
    assert green(published)
    check = envelope(published, "check")
    assert check["safe"] is True and check["details"]["benign"] == ["none"]
    assert check["results"][0]["parameters"]["benign"] == ["none"]
    assert envelope(published, "publish")["outcome"] == "published"
    # one release per dataset: ward-a blocked, ward-b published
    assert ledger_state(ledger) == [
        ("1", "blocked", ["blocked"]),
        ("1", "published", ["published"]),
    ]
    # the rare values never reach the logs or XComs (witnesses say `value A`)
    texts = log + json.dumps([r["xcoms"] for r in runs])
    assert "hiv" not in texts and "asthma" not in texts


def test_the_anonymizer_with_benign_values_makes_a_release_the_gate_publishes(
    airflow_home: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """``AnonymizeLatticeOperator(benign_values=["none"])`` writes a release that the check
    with the same ``benign_values`` passes and the gate publishes (green); checked without
    them the same release fails and the gate blocks (red)."""
    ledger = f"sqlite:///{tmp_path / 'ledger.db'}"
    record_policy(ledger, "clinic-a", "clinic-b")
    runs, log = drive(
        airflow_home,
        SCENARIO_DAGS,
        "privacy_benign_anonymize",
        tmp_path / "out",
        ledger,
        [{"dataset": "clinic-a"}, {"dataset": "clinic-b", "benign": ["none"]}],
    )
    blocked, published = runs
    for run in runs:
        made = envelope(run, "anonymize")
        assert made["outcome"] == "written" and made["details"]["benign"] == ["none"]
        assert made["results"][0]["parameters"]["benign"] == ["none"]
        assert green(run) == (envelope(run, "publish")["outcome"] == "published")
    assert not green(blocked)
    check = envelope(blocked, "check")
    assert check["safe"] is False and "benign" not in check["details"]
    assert green(published)
    check = envelope(published, "check")
    assert check["safe"] is True and check["details"]["benign"] == ["none"]
    assert envelope(published, "publish")["outcome"] == "published"
    assert ledger_state(ledger) == [
        ("1", "blocked", ["blocked"]),
        ("1", "published", ["published"]),
    ]
    manifest = json.loads(
        Path(envelope(published, "anonymize")["outputs"]["manifest"]).read_text(encoding="utf-8")
    )
    assert manifest["benign"] == ["none"]
    texts = log + json.dumps([r["xcoms"] for r in runs])
    assert "hiv" not in texts and "asthma" not in texts
