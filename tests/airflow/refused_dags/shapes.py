"""The DAG shapes (one per file of this folder) the provider's cluster policy refuses when
they are parsed (each could end a run green although the ledger says nothing was
published): a cleanup task after the gate that is not a teardown, a report that is not a
teardown, no report at all, and a report teardown whose failure does not fail the run.
``privacy_refused_ok`` is the accepted shape (a cleanup teardown beside the report). One
DAG per file: Airflow keeps one import error per file."""

from __future__ import annotations

import pendulum
from airflow.sdk import DAG, task

from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator


def build(shape: str) -> DAG:
    with DAG(
        dag_id=f"privacy_refused_{shape}",
        schedule=None,
        start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
        catchup=False,
    ) as dag:

        @task
        def open_attempt() -> dict[str, str]:
            return {"attempt": "unused"}

        @task(trigger_rule="all_done")
        def cleanup() -> None:
            """Remove the working files (whatever happened)."""

        publish = PublishReleaseOperator(
            task_id="publish", attempt_task_id="open_attempt", release="r.parquet",
            publish_to="published",
        )  # fmt: skip
        report = ReleaseReportOperator(
            task_id="report", attempt_task_id="open_attempt", release="r.parquet"
        )
        open_attempt() >> publish
        if shape == "cleanup":
            publish >> [cleanup(), report.as_teardown()]
        elif shape == "report_leaf":
            publish >> report
        elif shape == "report_no_fail":
            publish >> report.as_teardown(on_failure_fail_dagrun=False)
        elif shape == "ok":
            publish >> [cleanup().as_teardown(), report.as_teardown()]
    return dag
