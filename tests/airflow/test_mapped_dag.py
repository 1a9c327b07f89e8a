"""A mapped check, end to end through ``dag.test``: each instance records its own verdict
(``check[0]``, ``check[1]``) under the run's attempt; one failing instance blocks the gate,
and the report shows both verdicts; every instance passing publishes."""

from __future__ import annotations

from pathlib import Path

from tests.airflow.release_runs import (  # noqa: F401  (the module's fixture)
    airflow_home,
    drive,
    envelope,
    green,
)
from tests.policy_setup import record_policy

MAPPED_DAGS = Path(__file__).resolve().parent / "mapped_dags"


def test_every_instance_of_a_mapped_check_counts(airflow_home: Path, tmp_path: Path) -> None:  # noqa: F811
    from airflow_privacy.ledger import ReleaseLedger

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    record_policy(url, "mixed", "fine")
    runs, _ = drive(
        airflow_home, MAPPED_DAGS, "privacy_mapped", tmp_path / "out", url,
        [
            {"dataset": "mixed", "checks": [["k-anonymity:k=3"], ["k-anonymity:k=100000"]]},
            {"dataset": "fine", "checks": [["k-anonymity:k=3"], ["k-anonymity:k=2"]]},
        ],
    )  # fmt: skip
    mixed, fine = runs
    assert not green(mixed) and mixed["tasks"]["publish"] == "failed"
    assert mixed["tasks"]["check[0]"] == "success" and mixed["tasks"]["check[1]"] == "success"
    gate = envelope(mixed, "publish")
    assert any(r.startswith("check[1]:") for r in gate["reasons"]), gate["reasons"]
    assert not any(r.startswith("check[0]:") for r in gate["reasons"])
    assert not any("no result was recorded" in r for r in gate["reasons"])
    with ReleaseLedger(url) as db:
        (release,) = db.list("mixed")
        (attempt,) = db.attempts(release.id)
        verdicts = {c.name: c.safe for c in attempt.checks}
    assert verdicts == {"check[0]": True, "check[1]": False}  # both kept, none overwritten
    assert green(fine) and envelope(fine, "publish")["outcome"] == "published"


def test_a_taskflow_check_records_under_the_attempt(airflow_home: Path, tmp_path: Path) -> None:  # noqa: F811
    """``@task.anonymize`` and ``@task.privacy_check`` (from the provider metadata): each
    function returns what its operator works on; the check records under the run's attempt
    and decides like any check (k=3 passes: published; k=100000 fails: blocked)."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    record_policy(url, "ok", "strict")
    runs, _ = drive(
        airflow_home, MAPPED_DAGS, "privacy_decorated", tmp_path / "out", url,
        [{"dataset": "ok", "k": 3}, {"dataset": "strict", "k": 100000}],
    )  # fmt: skip
    ok, strict = runs
    assert green(ok) and envelope(ok, "publish")["outcome"] == "published", ok["tasks"]
    written = envelope(ok, "anonymize")  # @task.anonymize: bucketized what its function returned
    assert written["step"] == "anonymize" and written["outputs"]["release"].endswith(
        "release.parquet"
    )
    check = envelope(ok, "check_release")
    assert check["step"] == "check" and check["safe"] is True and check["attempt"] is not None
    assert check["release"]["ref"].endswith("release.parquet")
    assert not green(strict)
    assert any(r.startswith("check_release:") for r in envelope(strict, "publish")["reasons"])
