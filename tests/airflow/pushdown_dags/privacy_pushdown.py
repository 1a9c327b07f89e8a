"""A gated release DAG whose anonymization runs where the data lives
(tests/airflow/test_pushdown_dag.py).

prepare (an Adult slice as Parquet) -> anonymize (the lattice, ``backend`` a param: with
``duckdb`` the distinct tuples are counted and the release written by DuckDB, then re-counted
and re-checked) -> open_attempt (requires ``check``) -> check (counted by the same backend)
-> publish (the gate) -> report (teardown). The anonymizer's and the check's criteria are
params: a release anonymized to weaker criteria than the check's is blocked.
"""

from __future__ import annotations

from typing import Any

import pendulum
from airflow.sdk import DAG, Param, get_current_context, task

from airflow_privacy.providers.airflow.operators.anonymize import AnonymizeLatticeOperator
from airflow_privacy.providers.airflow.operators.attempt import OpenAttemptOperator
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator
from tests.airflow.dag_parts import run_folder, write_adult

QIS = ["age", "sex", "race"]
RELEASE = "{{ ti.xcom_pull(task_ids='anonymize')['outputs']['release'] }}"

with DAG(
    dag_id="privacy_pushdown",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    render_template_as_native_obj=True,
    params={
        "dataset": Param("adult", type="string"),
        "records": Param(2000, type="integer", minimum=10),
        "backend": Param("duckdb", type="string", enum=["auto", "arrow", "duckdb"]),
        "anonymize_criteria": Param(["k-anonymity:k=10"], type="array"),
        "check_criteria": Param(["k-anonymity:k=10"], type="array"),
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
        }

    anonymize = AnonymizeLatticeOperator(
        task_id="anonymize",
        source="{{ ti.xcom_pull(task_ids='prepare')['input'] }}",
        release="{{ ti.xcom_pull(task_ids='prepare')['release'] }}",
        qis=QIS,
        sensitive="occupation",
        criteria="{{ params.anonymize_criteria }}",
        intervals={"age": [5, 10, 20, 40]},
        backend="{{ params.backend }}",
    )
    attempt = OpenAttemptOperator(
        task_id="open_attempt",
        release=RELEASE,
        dataset="{{ params.dataset }}",
        required_checks=["check"],
        first_release=True,
    )
    check = CheckSafetyOperator(
        task_id="check",
        attempt_task_id="open_attempt",
        on_unsafe="continue",
        release=RELEASE,
        sensitive="occupation",
        group_columns=QIS,
        criteria="{{ params.check_criteria }}",
        backend="{{ params.backend }}",
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
    prepare() >> anonymize >> attempt >> check >> publish
    publish >> report.as_teardown()
