"""k-map against a population table and delta-presence in a gated release DAG, end to end
through ``dag.test`` (slow): the gate fails closed. A release anonymized to weaker criteria
fails the check against the population and is blocked (red); anonymized to the check's
criteria, with the population generalized by the lattice, it passes and is published
(green)."""

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

POPULATION_DAGS = Path(__file__).resolve().parent / "population_dags"
TARGET = ["k-map:k=10", "delta-presence:delta_max=0.2"]


def test_the_gate_fails_closed_against_the_population(
    airflow_home: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    record_policy(url, "weak", "target")  # the officer's part
    runs, _ = drive(
        airflow_home, POPULATION_DAGS, "privacy_population", out, url,
        [
            {"dataset": "weak", "anonymize_criteria": ["k-anonymity:k=1"]},
            {"dataset": "target", "anonymize_criteria": TARGET},
        ],
    )  # fmt: skip
    weak, target = runs
    # anonymized to 1-anonymity (nothing generalized): fails against the population, blocked
    assert not green(weak)
    assert weak["tasks"]["check"] == "success" and weak["tasks"]["publish"] == "failed"
    check = envelope(weak, "check")
    assert check["safe"] is False and check["details"]["population"]["records"] == 3000
    reasons = envelope(weak, "publish")["reasons"]
    assert any(r.startswith("check") for r in reasons), reasons
    assert envelope(weak, "report")["details"]["status"] == "blocked"
    # anonymized to the check's criteria against the same population: published
    assert green(target), target["tasks"]
    anon = envelope(target, "anonymize")
    assert anon["details"]["population"]["records"] == 3000
    check = envelope(target, "check")
    assert check["safe"] is True
    assert [r["value"] for r in check["results"]] == [r["value"] for r in anon["results"]]
    assert envelope(target, "publish")["outcome"] == "published"
    assert ledger_state(url) == [("1", "blocked", ["blocked"]), ("1", "published", ["published"])]
    # the envelopes record the population's reference and size, never its rows
    assert "population.parquet" in json.dumps(check["details"]["population"])
