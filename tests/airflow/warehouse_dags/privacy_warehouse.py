"""A gated release that never leaves PostgreSQL (tests/airflow/test_warehouse_dag.py).

prepare (an Adult slice loaded into a table of the ``warehouse`` connection) -> anonymize
(the lattice, in the database: the distinct tuples counted there, the release created there
as a table and re-checked on the database's counts) -> open_attempt (the table's groups and
content digest, counted in the database) -> check (a GROUP BY in the database) -> publish
(the gate: a snapshot of the table verified against the attempt and copied to the published
table) -> report (teardown: the table counted in the database). The anonymizer's and the
check's criteria are params: a release anonymized to
weaker criteria than the check's is blocked and nothing is published.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import DAG, Param, get_current_context, task

from airflow_privacy.providers.airflow.operators.anonymize import AnonymizeLatticeOperator
from airflow_privacy.providers.airflow.operators.attempt import OpenAttemptOperator
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator

QIS = ["age", "marital-status", "race", "sex"]
PREPARED = "ti.xcom_pull(task_ids='prepare')"
RELEASE_TABLE = "{{ " + PREPARED + "['release_table'] }}"
MANIFEST = "{{ " + PREPARED + "['manifest'] }}"

with DAG(
    dag_id="privacy_warehouse",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    render_template_as_native_obj=True,
    params={
        "dataset": Param("adult", type="string"),
        "records": Param(2000, type="integer", minimum=10),
        "anonymize_criteria": Param(["k-anonymity:k=10"], type="array"),
        "check_criteria": Param(["k-anonymity:k=10"], type="array"),
    },
) as dag:

    @task
    def prepare(params: dict[str, Any] | None = None) -> dict[str, str]:
        from airflow.sdk import BaseHook

        from airflow_privacy.core.datasets import load_adult

        p = params or get_current_context()["params"]
        run = "".join(ch if ch.isalnum() else "_" for ch in str(get_current_context()["run_id"]))
        folder = Path(os.environ["AIRFLOW_PRIVACY_OUTPUT_DIR"]) / run
        folder.mkdir(parents=True, exist_ok=True)
        hook = BaseHook.get_connection("warehouse").get_hook()  # type: ignore[no-untyped-call]
        engine = hook.get_sqlalchemy_engine()
        table = load_adult().slice(0, int(p["records"])).select([*QIS, "occupation"])
        table.to_pandas().to_sql(f"input_{run}", engine, index=False, if_exists="replace")
        return {
            "input_table": f"input_{run}",
            "release_table": f"release_{run}",
            "published_table": f"published_{run}",
            "manifest": str(folder / "release.manifest.json"),
            "report": str(folder / "release.report.html"),
        }

    anonymize = AnonymizeLatticeOperator(
        task_id="anonymize",
        source_table="{{ " + PREPARED + "['input_table'] }}",
        source_conn_id="warehouse",
        release_table=RELEASE_TABLE,
        manifest=MANIFEST,
        qis=QIS,
        sensitive="occupation",
        intervals={"age": [5, 10, 20, 40]},
        criteria="{{ params.anonymize_criteria }}",
    )
    attempt = OpenAttemptOperator(
        task_id="open_attempt",
        sql_table=RELEASE_TABLE,
        manifest=MANIFEST,
        conn_id="warehouse",
        dataset="{{ params.dataset }}",
        required_checks=["check"],
        first_release=True,
    )
    check = CheckSafetyOperator(
        task_id="check",
        attempt_task_id="open_attempt",
        on_unsafe="continue",
        sql_table=RELEASE_TABLE,
        conn_id="warehouse",
        sensitive="occupation",
        group_columns=QIS,
        criteria="{{ params.check_criteria }}",
    )
    publish = PublishReleaseOperator(
        task_id="publish",
        attempt_task_id="open_attempt",
        sql_table=RELEASE_TABLE,
        conn_id="warehouse",
        publish_to="{{ " + PREPARED + "['published_table'] }}",
    )
    report = ReleaseReportOperator(
        task_id="report",
        attempt_task_id="open_attempt",
        sql_table=RELEASE_TABLE,
        conn_id="warehouse",
        manifest=MANIFEST,
        report_path="{{ " + PREPARED + "['report'] }}",
    )
    prepare() >> anonymize >> attempt >> check >> publish
    publish >> report.as_teardown()
