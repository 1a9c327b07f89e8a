"""The builder of the small gated release DAGs for the end-to-end tests in a running Airflow
(``tests/airflow/test_gate_live.py``): prepare an Adult slice -> bucketize -> open_attempt ->
hold (waits for the test's go-ahead file when ``hold``) -> check -> publish -> report (a
teardown whose outcome is the run's). ``privacy_live_steward`` has the steward's override
step (human in the loop) between the gate and the report. ``privacy_live_audit`` also
audits the release against the ledger (``audit_datasets``: the audit's scope) and has a
side task the gate depends on, which fails until the test writes ``<output>/<run>.ok`` (a
side task that recovers).

Params steer the careless-user scenarios: ``attempt`` (a UUID pasted into the gate),
``group_columns`` (what the check groups by), ``hold`` (time for the test to edit an XCom
or mark the gate "success" by hand). ``privacy_live_ids`` also records the people's
identifier hashes (population + id_column).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import DAG, Param, get_current_context, task

from airflow_privacy.providers.airflow.operators.anonymize import BucketizeOperator
from airflow_privacy.providers.airflow.operators.attempt import OpenAttemptOperator
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
from airflow_privacy.providers.airflow.operators.composition import CompositionAuditOperator
from airflow_privacy.providers.airflow.operators.override import StewardOverrideOperator
from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator
from tests.airflow.dag_parts import run_folder, write_adult

QIS = ["age", "marital-status", "race", "sex"]
RELEASE = "{{ ti.xcom_pull(task_ids='prepare')['release'] }}"
INPUT = "{{ ti.xcom_pull(task_ids='prepare')['input'] }}"


def build(dag_id: str, identifiers: bool, steward: bool = False, audit: bool = False) -> DAG:
    with DAG(
        dag_id=dag_id,
        schedule=None,
        start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
        catchup=False,
        render_template_as_native_obj=True,
        params={
            "first_record": Param(0, type="integer", minimum=0),
            "records": Param(300, type="integer", minimum=1),
            "first_release": Param(False, type="boolean"),
            "attempt": Param("", type="string"),
            "group_columns": Param(["bucket"], type="array"),
            "hold": Param(False, type="boolean"),
            "check_k": Param(3, type="integer", minimum=1),
            "dataset": Param("live", type="string"),
            "audit_datasets": Param(["live"], type="array"),
        },
    ) as dag:

        @task
        def prepare(params: dict[str, Any] | None = None) -> dict[str, str]:
            p = params or get_current_context()["params"]
            folder, run = run_folder()
            first, n = int(p["first_record"]), int(p["records"])
            write_adult(folder / "input.parquet", first, n, ids=True)
            return {
                "input": str(folder / "input.parquet"),
                "release": str(folder / "release.parquet"),
                "published": str(folder.parent / "published" / run),
            }

        @task
        def hold(params: dict[str, Any] | None = None) -> None:
            """With ``hold``: wait (at most 10 minutes) for ``<output>/<run>.go``."""
            p = params or get_current_context()["params"]
            if not p["hold"]:
                return
            run = str(get_current_context()["run_id"]).replace(":", "_").replace("+", "_")
            go = Path(os.environ["AIRFLOW_PRIVACY_OUTPUT_DIR"]) / f"{run}.go"
            deadline = time.monotonic() + 600
            while not go.exists() and time.monotonic() < deadline:
                time.sleep(0.5)

        anonymize = BucketizeOperator(
            task_id="anonymize",
            source=INPUT,
            release=RELEASE,
            qis=QIS,
            sensitive="occupation",
            criteria=["k-anonymity:k=3"],
        )
        who = {"population": INPUT, "id_column": "id"} if identifiers else {}
        attempt = OpenAttemptOperator(
            task_id="open_attempt",
            release=RELEASE,
            dataset="{{ params.dataset }}",
            required_checks=["check", "audit"] if audit else ["check"],
            first_release="{{ params.first_release }}",
            **who,
        )
        check = CheckSafetyOperator(
            task_id="check",
            attempt_task_id="open_attempt",
            on_unsafe="continue",
            release=RELEASE,
            sensitive="occupation",
            group_columns="{{ params.group_columns }}",
            criteria=["k-anonymity:k={{ params.check_k }}"],
        )
        publish = PublishReleaseOperator(
            task_id="publish",
            attempt="{{ params.attempt or ti.xcom_pull(task_ids='open_attempt')['attempt']"
            "['uuid'] }}",
            release=RELEASE,
            publish_to="{{ ti.xcom_pull(task_ids='prepare')['published'] }}",
        )
        report = ReleaseReportOperator(
            task_id="report", attempt_task_id="open_attempt", release=RELEASE, k_max=3
        )
        prepare() >> anonymize >> attempt >> hold() >> check >> publish
        if audit:

            @task
            def side() -> None:
                """A side task the release depends on: fails until ``<output>/<run>.ok``."""
                run = str(get_current_context()["run_id"]).replace(":", "_").replace("+", "_")
                if not (Path(os.environ["AIRFLOW_PRIVACY_OUTPUT_DIR"]) / f"{run}.ok").exists():
                    raise RuntimeError("the side task's input is not there yet")

            scoped = CompositionAuditOperator(
                task_id="audit",
                attempt_task_id="open_attempt",
                on_unsafe="continue",
                candidate=RELEASE,
                population=INPUT,
                datasets="{{ params.audit_datasets }}",
                first_release="{{ params.first_release }}",
            )
            attempt >> [scoped, side()] >> publish
        if steward:
            ask = StewardOverrideOperator(
                task_id="steward",
                attempt_task_id="open_attempt",
                release=RELEASE,
                publish_to="{{ ti.xcom_pull(task_ids='prepare')['published'] }}",
            )
            publish >> ask >> report.as_teardown()
        else:
            publish >> report.as_teardown()
    return dag
