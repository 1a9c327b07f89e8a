"""The anonymize, MaxEnt, composition and ledger operators without Airflow's DB: templated
fields rendered, execute on fixtures, verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pendulum
import pyarrow.parquet as pq
import pytest
from airflow.sdk import DAG
from airflow.sdk.exceptions import AirflowFailException

from airflow_privacy.core.datasets import load_adult
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.providers.airflow.operators.anonymize import (
    AnonymizeLatticeOperator,
    BucketizeOperator,
)
from airflow_privacy.providers.airflow.operators.composition import CompositionAuditOperator
from airflow_privacy.providers.airflow.operators.ledger import (
    PublishReleaseOperator,
    RecordBlockedReleaseOperator,
)
from airflow_privacy.providers.airflow.operators.maxent import MaxEntRiskOperator
from airflow_privacy.providers.airflow.verdict import REPORT_KEY

QIS = ["age", "sex"]


class FakeTI:
    def __init__(self, pulled: dict[str, Any] | None = None) -> None:
        self.pushed: dict[str, Any] = {}
        self.pulled = pulled or {}

    def xcom_push(self, key: str, value: Any) -> None:
        self.pushed[key] = value

    def xcom_pull(self, task_ids: str, key: str = "return_value") -> Any:
        return self.pulled.get(task_ids)


@pytest.fixture
def ledger_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    conn = {"conn_type": "privacy_ledger", "extra": {"url": url}}
    monkeypatch.setenv("AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT", json.dumps(conn))
    return url


def _slice(tmp_path: Path, start: int, name: str) -> Path:
    path = tmp_path / name
    pq.write_table(load_adult().slice(start, 3000).select([*QIS, "occupation"]), path)
    return path


def test_bucketize_maxent_audit_publish(tmp_path: Path, ledger_env: str) -> None:
    source = _slice(tmp_path, 0, "in.parquet")
    with DAG("ops", schedule=None, start_date=pendulum.datetime(2026, 1, 1)):
        anonymize = BucketizeOperator(
            task_id="anonymize", source=str(source), release="{{ params.out }}", qis=QIS,
            sensitive="occupation", criteria=[{"name": "ck-safety", "c": "{{ params.c }}", "k": 2}],
        )  # fmt: skip
    ctx: dict[str, Any] = {
        "params": {"out": str(tmp_path / "rel.parquet"), "c": 0.8},
        "ti": FakeTI(),
    }
    anonymize.render_template_fields(ctx)  # type: ignore[arg-type]
    report = anonymize.execute(ctx)
    assert report["group_columns"] == ["bucket"] and Path(report["manifest"]).exists()
    release = report["release"]

    maxent = MaxEntRiskOperator(task_id="maxent", release=release, qis=QIS,
                                sensitive="occupation", threshold=1.0)  # fmt: skip
    risk = maxent.execute({"ti": FakeTI()})
    assert 0 < risk["max_posterior"] <= 1 and risk["safe"] is (risk["max_posterior"] < 1.0)
    # the report's heatmap rows: the riskiest QI values first, each row a distribution
    rows = risk["heatmap"]["rows"]
    assert 0 < len(rows) <= 10 and len(risk["heatmap"]["values"]) == len(rows[0]["posterior"])
    assert max(rows[0]["posterior"]) == pytest.approx(risk["max_posterior"], abs=1e-9)
    assert all(sum(r["posterior"]) <= 1 + 1e-9 for r in rows)

    audit = CompositionAuditOperator(task_id="audit", candidate=release, record_as="adult")
    first = audit.execute({"ti": FakeTI()})
    assert first["safe"] is True and "no earlier published release" in first["summary"]
    PublishReleaseOperator(task_id="publish", release=release, publish_to=str(tmp_path / "pub"),
                           dataset="adult", release_id=first["release_id"]).execute({})  # fmt: skip
    assert (tmp_path / "pub" / "rel.parquet").exists()

    # an overlapping second release against the published first
    source2 = _slice(tmp_path, 1500, "in2.parquet")
    second = BucketizeOperator(
        task_id="anonymize2", source=str(source2), release=str(tmp_path / "rel2.parquet"),
        qis=QIS, sensitive="occupation", criteria=[{"name": "ck-safety", "c": 0.8, "k": 2}],
    ).execute({})  # fmt: skip
    ti = FakeTI()
    audit2 = CompositionAuditOperator(task_id="audit2", candidate=second["release"],
                                      record_as="adult", on_unsafe="continue")  # fmt: skip
    verdict = audit2.execute({"ti": ti})
    assert ti.pushed[REPORT_KEY] == verdict
    # worst individuals travel by row number only: no QI values, no values left over
    assert verdict["worst"] and all(
        set(w) == {"row", "confidence", "posterior", "ea_hat", "anon_drop", "releases"}
        for w in verdict["worst"]
    )
    assert verdict["worst"][0]["confidence"] == max(w["confidence"] for w in verdict["worst"])
    with ReleaseLedger(ledger_env) as ledger:
        statuses = [r.status for r in ledger.list()]
    assert statuses[0] == "published"
    assert statuses[1] == ("candidate" if verdict["safe"] else "blocked")


def test_record_blocked_collects_reasons(tmp_path: Path, ledger_env: str) -> None:
    source = _slice(tmp_path, 0, "in.parquet")
    out = BucketizeOperator(task_id="a", source=str(source), release=str(tmp_path / "r.parquet"),
                            qis=QIS, sensitive="occupation",
                            criteria=[{"name": "k-anonymity", "k": 2}]).execute({})  # fmt: skip
    pulled = {"check": {"safe": False, "reasons": ["ck-safety: too revealing"]}}
    op = RecordBlockedReleaseOperator(task_id="blocked", release=out["release"], dataset="adult",
                                      check_task_ids=["check"])  # fmt: skip
    assert op.trigger_rule == "one_failed"
    result = op.execute({"ti": FakeTI(pulled)})
    assert result["status"] == "blocked" and result["reasons"] == ["ck-safety: too revealing"]
    with ReleaseLedger(ledger_env) as ledger:
        (info,) = ledger.list()
    assert info.status == "blocked" and info.reasons == ["ck-safety: too revealing"]


def test_impossible_criterion_fails_as_bad_input(tmp_path: Path) -> None:
    source = _slice(tmp_path, 0, "in.parquet")
    op = BucketizeOperator(task_id="a", source=str(source), release=str(tmp_path / "r.parquet"),
                           qis=QIS, sensitive="occupation",
                           criteria=[{"name": "k-anonymity", "k": 10**6}])  # fmt: skip
    with pytest.raises(AirflowFailException, match="bad input"):
        op.execute({})
    assert not (tmp_path / "r.parquet").exists()


def test_lattice_operator_safe_disclosure_mode(tmp_path: Path) -> None:
    """Zhang et al.'s patients through the operator: method_options reach the anonymizer;
    the safe mode skips table (c), which the naive search publishes."""
    import pyarrow as pa

    source = tmp_path / "patients.parquet"
    pq.write_table(pa.table({
        "age": ["Old", "Old", "Middle", "Middle", "Young", "Young"],
        "sex": ["M", "M", "M", "F", "F", "F"],
        "condition": ["Heart Disease", "Viral Infection", "Cancer", "Cancer", "Flu", "Ulcer"],
    }), source)  # fmt: skip
    levels = {}
    for mode in ("naive", "safe"):
        out = AnonymizeLatticeOperator(
            task_id=f"a_{mode}", source=str(source), release=str(tmp_path / f"{mode}.parquet"),
            qis=["age", "sex"], sensitive="condition",
            criteria=[{"name": "entropy-l-diversity", "l": 2}],
            method_options={"disclosure": mode},
        ).execute({})  # fmt: skip
        manifest = json.loads(Path(out["manifest"]).read_text())
        levels[mode] = manifest["details"]["levels"]
    assert levels == {"naive": {"age": 1, "sex": 0}, "safe": {"age": 1, "sex": 1}}
    bad = AnonymizeLatticeOperator(
        task_id="bad", source=str(source), release=str(tmp_path / "bad.parquet"),
        qis=["age", "sex"], sensitive="condition",
        criteria=[{"name": "entropy-l-diversity", "l": 2}],
        method_options={"disclosure": "paranoid"},
    )  # fmt: skip
    with pytest.raises(AirflowFailException, match="unknown disclosure mode 'paranoid'"):
        bad.execute({})
    assert not (tmp_path / "bad.parquet").exists()
