"""A gated release written with the TaskFlow decorators (tests/airflow/test_mapped_dag.py):
``@task.anonymize`` bucketizes the input its function returns, ``@task.privacy_check``
checks the release its function returns and records it under the run's attempt
(``criteria`` from the run's conf: ``k`` of k-anonymity)."""

from __future__ import annotations

from typing import Any

import pendulum
from airflow.sdk import DAG, task

from airflow_privacy.providers.airflow.operators.attempt import OpenAttemptOperator
from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator
from tests.airflow.dag_parts import run_folder, write_adult

RELEASE = "{{ ti.xcom_pull(task_ids='prepare')['release'] }}"

with DAG(
    dag_id="privacy_decorated", schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False,
) as dag:  # fmt: skip

    @task
    def prepare() -> dict[str, str]:
        folder, run = run_folder()
        write_adult(folder / "input.parquet", 0, 400)
        return {
            "input": str(folder / "input.parquet"),
            "release": str(folder / "release.parquet"),
            "published": str(folder.parent / "published" / run),
        }

    @task.privacy_check(
        attempt_task_id="open_attempt", on_unsafe="continue", sensitive="occupation",
        group_columns=["bucket"], criteria=["k-anonymity:k={{ dag_run.conf['k'] }}"],
    )  # fmt: skip
    def check_release(paths: Any) -> str:
        """The release the anonymizer wrote (any logic that finds it)."""
        return str(paths["release"])

    @task.anonymize(
        release=RELEASE, qis=["age", "sex"], sensitive="occupation",
        criteria=["k-anonymity:k=3"],
    )  # fmt: skip
    def anonymize(paths: Any) -> str:
        """The input to anonymize (any logic that finds it)."""
        return str(paths["input"])

    prepared = prepare()
    anonymized = anonymize(prepared)
    attempt = OpenAttemptOperator(
        task_id="open_attempt", release=RELEASE, dataset="{{ dag_run.conf['dataset'] }}",
        required_checks=["check_release"], first_release=True,
    )  # fmt: skip
    check = check_release(prepared)
    publish = PublishReleaseOperator(
        task_id="publish", attempt_task_id="open_attempt", release=RELEASE,
        publish_to="{{ ti.xcom_pull(task_ids='prepare')['published'] }}",
    )  # fmt: skip
    report = ReleaseReportOperator(task_id="report", attempt_task_id="open_attempt",
                                   release=RELEASE)  # fmt: skip
    anonymized >> attempt >> check >> publish
    publish >> report.as_teardown()
