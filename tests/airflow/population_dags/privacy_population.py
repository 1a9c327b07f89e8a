"""A gated release DAG whose check is k-map against a population table and delta-presence
(tests/airflow/test_population_dag.py).

prepare (a population: an Adult slice; the input: every tenth of its records) -> anonymize
(the lattice, generalizing the population with the same hierarchies) -> open_attempt
(requires ``check``) -> check (against the population) -> publish (the gate) -> report
(teardown). The anonymizer's and the check's criteria are params: a release anonymized to
weaker criteria than the check's is blocked, one anonymized to the check's is published.
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
from tests.airflow.dag_parts import run_folder

QIS = ["age", "marital-status", "race", "sex"]
RELEASE = "{{ ti.xcom_pull(task_ids='anonymize')['outputs']['release'] }}"
POPULATION = "{{ ti.xcom_pull(task_ids='prepare')['population'] }}"

with DAG(
    dag_id="privacy_population",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    render_template_as_native_obj=True,
    params={
        "dataset": Param("adult", type="string"),
        "population": Param(3000, type="integer", minimum=10),
        "anonymize_criteria": Param(["k-anonymity:k=1"], type="array"),
        "check_criteria": Param(["k-map:k=10", "delta-presence:delta_max=0.2"], type="array"),
    },
) as dag:

    @task
    def prepare(params: dict[str, Any] | None = None) -> dict[str, str]:
        import pyarrow.parquet as pq

        from airflow_privacy.core.datasets import load_adult

        p = params or get_current_context()["params"]
        folder, run = run_folder()
        population = load_adult().slice(0, int(p["population"]))
        pq.write_table(population, folder / "population.parquet")
        sample = population.take(list(range(0, population.num_rows, 10)))
        pq.write_table(sample, folder / "input.parquet")
        return {
            "input": str(folder / "input.parquet"),
            "population": str(folder / "population.parquet"),
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
        population=POPULATION,
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
        population=POPULATION,
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
