"""The anonymize step pushed down to DuckDB in a gated release DAG, end to end through
``dag.test`` (slow): the gate fails closed. With ``backend="duckdb"`` the anonymizer counts
the distinct tuples in DuckDB, DuckDB writes the release, which is re-counted and re-checked
before the task succeeds; the check counts it with DuckDB too. A release anonymized to the
check's criteria is published (green); one anonymized to weaker criteria than the check's is
blocked (red). Spark is exercised at the service level (tests/gate/test_spark_gate.py): a
Spark session inside an Airflow task is too slow for the suite."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from tests.airflow.release_runs import (  # noqa: F401  (the module's fixture)
    airflow_home,
    drive,
    envelope,
    green,
    ledger_state,
)
from tests.policy_setup import record_policy

PUSHDOWN_DAGS = Path(__file__).resolve().parent / "pushdown_dags"
QIS = ["age", "sex", "race"]


def test_the_pushed_down_gate_fails_closed(
    airflow_home: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    record_policy(url, "target", "weak")  # the officer's part
    runs, _ = drive(
        airflow_home, PUSHDOWN_DAGS, "privacy_pushdown", out, url,
        [
            {"dataset": "target", "backend": "duckdb"},
            {"dataset": "weak", "backend": "duckdb",
             "anonymize_criteria": ["k-anonymity:k=2"], "check_criteria": ["k-anonymity:k=50"]},
        ],
    )  # fmt: skip
    target, weak = runs
    # anonymized by DuckDB to the check's criteria: checked by DuckDB and published
    assert green(target), target["tasks"]
    anon = envelope(target, "anonymize")
    assert anon["details"]["backend"] == "duckdb"
    check = envelope(target, "check")
    assert check["safe"] is True and check["details"]["backend"] == "duckdb"
    assert envelope(target, "publish")["outcome"] == "published"
    # the written release, counted here from its rows by definition: every group >= 10
    release = pq.read_table(anon["outputs"]["release"])
    sizes = Counter(zip(*(release.column(c).to_pylist() for c in QIS), strict=True))
    assert min(sizes.values()) >= 10
    assert sum(sizes.values()) == anon["details"]["records_out"] == check["release"]["records"]
    # anonymized to 2-anonymity, checked against 50: the check fails and the gate blocks
    assert not green(weak)
    assert envelope(weak, "anonymize")["details"]["backend"] == "duckdb"
    assert weak["tasks"]["check"] == "success" and weak["tasks"]["publish"] == "failed"
    check = envelope(weak, "check")
    assert check["safe"] is False and check["details"]["backend"] == "duckdb"
    reasons = envelope(weak, "publish")["reasons"]
    assert any(r.startswith("check") for r in reasons), reasons
    assert envelope(weak, "report")["details"]["status"] == "blocked"
    assert ledger_state(url) == [("1", "published", ["published"]), ("1", "blocked", ["blocked"])]
