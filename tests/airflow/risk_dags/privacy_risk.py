"""Gated release DAGs with a risk analysis beside the check (tests/airflow/test_risk_dag.py).

prepare (an Adult slice) -> anonymize -> open_attempt (requires ``check``) -> [check, risk]
-> publish (the gate) -> report (teardown).

* ``privacy_risk``: the analysis runs without an attempt (as docs/operators/
  risk_analysis_operator.md advises): it never passes or blocks by its result, but a risk
  task that fails (bad input) is a failed task the gate depends on;
* ``privacy_risk_recorded``: the analysis is recorded under the attempt: a result without a
  verdict, so the gate blocks the attempt.
"""

from __future__ import annotations

from typing import Any

import pendulum
from airflow.sdk import DAG, Param, get_current_context, task

from airflow_privacy.providers.airflow.operators.anonymize import BucketizeOperator
from airflow_privacy.providers.airflow.operators.attempt import OpenAttemptOperator
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator
from airflow_privacy.providers.airflow.operators.risk import RiskAnalysisOperator
from tests.airflow.dag_parts import run_folder, write_adult

QIS = ["age", "marital-status", "race", "sex"]
RELEASE = "{{ ti.xcom_pull(task_ids='anonymize')['outputs']['release'] }}"


def build(dag_id: str, record_risk: bool) -> DAG:
    with DAG(
        dag_id=dag_id,
        schedule=None,
        start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
        catchup=False,
        render_template_as_native_obj=True,
        params={
            "dataset": Param("adult", type="string"),
            "first_release": Param(False, type="boolean"),
            "records": Param(600, type="integer", minimum=10),
            "risk_threshold": Param(0.2, type="number"),
        },
    ) as dag:

        @task
        def prepare(params: dict[str, Any] | None = None) -> dict[str, str]:
            p = params or get_current_context()["params"]
            folder, run = run_folder()
            write_adult(folder / "input.parquet", 0, int(p["records"]))
            return {
                "input": str(folder / "input.parquet"),
                "release": str(folder / "release.parquet"),
                "published": str(folder.parent / "published" / run),
                "scores": str(folder / "risk_scores.csv"),
            }

        anonymize = BucketizeOperator(
            task_id="anonymize",
            source="{{ ti.xcom_pull(task_ids='prepare')['input'] }}",
            release="{{ ti.xcom_pull(task_ids='prepare')['release'] }}",
            qis=QIS,
            sensitive="occupation",
            criteria=["k-anonymity:k=3"],
        )
        attempt = OpenAttemptOperator(
            task_id="open_attempt",
            release=RELEASE,
            dataset="{{ params.dataset }}",
            required_checks=["check"],
            first_release="{{ params.first_release }}",
        )
        check = CheckSafetyOperator(
            task_id="check",
            attempt_task_id="open_attempt",
            on_unsafe="continue",
            release=RELEASE,
            sensitive="occupation",
            group_columns=["bucket"],
            criteria=["k-anonymity:k=3"],
        )
        risk = RiskAnalysisOperator(
            task_id="risk",
            release=RELEASE,
            qis=QIS,
            population="{{ ti.xcom_pull(task_ids='prepare')['input'] }}",
            threshold="{{ params.risk_threshold }}",
            suda_max_size=2,
            records="{{ ti.xcom_pull(task_ids='prepare')['scores'] }}",
            attempt_task_id="open_attempt" if record_risk else None,
        )
        publish = PublishReleaseOperator(
            task_id="publish",
            attempt_task_id="open_attempt",
            release=RELEASE,
            publish_to="{{ ti.xcom_pull(task_ids='prepare')['published'] }}",
        )
        report = ReleaseReportOperator(
            task_id="report", attempt_task_id="open_attempt", release=RELEASE
        )
        prepare() >> anonymize >> attempt >> [check, risk] >> publish
        publish >> report.as_teardown()
    return dag


dag = build("privacy_risk", record_risk=False)
recorded_dag = build("privacy_risk_recorded", record_risk=True)
