"""A gated release whose check is a mapped task (tests/airflow/test_mapped_dag.py): prepare
-> bucketize -> open_attempt (requires ``check``) -> check, mapped over its criteria (one
instance per list given in ``checks``) -> publish -> report (teardown)."""

from __future__ import annotations

from typing import Any

import pendulum
from airflow.sdk import DAG, Param, get_current_context, task

from airflow_privacy.providers.airflow.operators.anonymize import BucketizeOperator
from airflow_privacy.providers.airflow.operators.attempt import OpenAttemptOperator
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator
from tests.airflow.dag_parts import run_folder, write_adult

RELEASE = "{{ ti.xcom_pull(task_ids='prepare')['release'] }}"

with DAG(
    dag_id="privacy_mapped", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False, params={"first_release": Param(True, type="boolean")},
) as dag:  # fmt: skip

    @task
    def prepare(params: dict[str, Any] | None = None) -> dict[str, str]:
        folder, run = run_folder()
        write_adult(folder / "input.parquet", 0, 400)
        return {
            "input": str(folder / "input.parquet"),
            "release": str(folder / "release.parquet"),
            "published": str(folder.parent / "published" / run),
        }

    @task
    def criteria_lists() -> list[list[str]]:
        """What each instance of the check checks (the run's conf ``checks``)."""
        conf = get_current_context()["dag_run"].conf or {}
        return [list(c) for c in conf["checks"]]

    anonymize = BucketizeOperator(
        task_id="anonymize", source="{{ ti.xcom_pull(task_ids='prepare')['input'] }}",
        release=RELEASE, qis=["age", "sex"], sensitive="occupation",
        criteria=["k-anonymity:k=3"],
    )  # fmt: skip
    attempt = OpenAttemptOperator(
        task_id="open_attempt", release=RELEASE, dataset="{{ dag_run.conf['dataset'] }}",
        required_checks=["check"], first_release="{{ params.first_release }}",
    )  # fmt: skip
    check = CheckSafetyOperator.partial(
        task_id="check", attempt_task_id="open_attempt", on_unsafe="continue", release=RELEASE,
        sensitive="occupation", group_columns=["bucket"],
    ).expand(criteria=criteria_lists())  # fmt: skip
    publish = PublishReleaseOperator(
        task_id="publish", attempt_task_id="open_attempt", release=RELEASE,
        publish_to="{{ ti.xcom_pull(task_ids='prepare')['published'] }}",
    )  # fmt: skip
    report = ReleaseReportOperator(task_id="report", attempt_task_id="open_attempt",
                                   release=RELEASE)  # fmt: skip
    prepare() >> anonymize >> attempt >> check >> publish
    publish >> report.as_teardown()
