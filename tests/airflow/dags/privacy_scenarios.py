"""Small gated release DAGs for the end-to-end scenarios the sample DAG cannot express:
a typo in the audit's datasets, a failed side task, a mapped side task, ``overlap="known"``
across two months.

prepare (an Adult slice with an ``id`` column) -> anonymize -> open_attempt (the people's
identifier hashes are recorded) -> [check, audit, notify (mapped over two channels)] ->
publish (the gate) -> report. Params choose the dataset, the audit's datasets and overlap,
whether the first release is declared, and whether one instance of the unrelated ``notify``
task fails. Each run publishes into its own folder (``published/<run>``).

The anonymizer's and the check's criteria are params too (a risk limit the release is
anonymized to, or only checked against).

The shapes the provider's cluster policy refuses (a task after the gate that is not a
teardown, a report that is not one) are in ``tests/airflow/refused_dags/``.
"""

from __future__ import annotations

from typing import Any

import pendulum
from airflow.sdk import DAG, Param, get_current_context, task

from airflow_privacy.providers.airflow.operators.anonymize import BucketizeOperator
from airflow_privacy.providers.airflow.operators.attempt import OpenAttemptOperator
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
from airflow_privacy.providers.airflow.operators.composition import CompositionAuditOperator
from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator
from tests.airflow.dag_parts import run_folder, write_adult

QIS = ["age", "marital-status", "race", "sex"]
RELEASE = "{{ ti.xcom_pull(task_ids='anonymize')['outputs']['release'] }}"
INPUT = "{{ ti.xcom_pull(task_ids='prepare')['input'] }}"


def build(dag_id: str) -> DAG:
    with DAG(
        dag_id=dag_id,
        schedule=None,
        start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
        catchup=False,
        render_template_as_native_obj=True,
        params={
            "dataset": Param("adult", type="string"),
            "audit_datasets": Param(["adult"], type="array"),
            "overlap": Param("worst-case", enum=["worst-case", "known"]),
            "first_release": Param(False, type="boolean"),
            "first_record": Param(0, type="integer", minimum=0),
            "records": Param(1000, type="integer", minimum=10),
            "max_pvp": Param(100.0, type="number", minimum=0, maximum=100),
            "fail_side_task": Param(False, type="boolean"),
            # a file left where the release goes (by another job): anonymize must not
            # write over it (no replace), so the run is red and nothing is published
            "stale_release": Param(False, type="boolean"),
            # the criteria the release is anonymized to and checked against
            "anonymize_criteria": Param(["k-anonymity:k=3"], type="array"),
            "check_criteria": Param(["k-anonymity:k=3"], type="array"),
        },
    ) as dag:

        @task
        def prepare(params: dict[str, Any] | None = None) -> dict[str, str]:
            p = params or get_current_context()["params"]
            folder, run = run_folder()
            first, n = int(p["first_record"]), int(p["records"])
            write_adult(folder / "input.parquet", first, n, ids=True)
            if p["stale_release"]:
                (folder / "release.parquet").write_bytes(b"left here by another job")
            return {
                "input": str(folder / "input.parquet"),
                "release": str(folder / "release.parquet"),
                # each run its own destination: a release never overwrites another's files
                "published": str(folder.parent / "published" / run),
            }

        anonymize = BucketizeOperator(
            task_id="anonymize",
            source=INPUT,
            release="{{ ti.xcom_pull(task_ids='prepare')['release'] }}",
            qis=QIS,
            sensitive="occupation",
            criteria="{{ params.anonymize_criteria }}",
        )
        attempt = OpenAttemptOperator(
            task_id="open_attempt",
            release=RELEASE,
            dataset="{{ params.dataset }}",
            required_checks=["check", "audit"],
            first_release="{{ params.first_release }}",
            population=INPUT,
            id_column="id",
        )
        check = CheckSafetyOperator(
            task_id="check",
            attempt_task_id="open_attempt",
            on_unsafe="continue",
            release=RELEASE,
            sensitive="occupation",
            group_columns=["bucket"],
            criteria="{{ params.check_criteria }}",
        )
        audit = CompositionAuditOperator(
            task_id="audit",
            attempt_task_id="open_attempt",
            on_unsafe="continue",
            candidate=RELEASE,
            population=INPUT,
            id_column="id",
            datasets="{{ params.audit_datasets }}",
            overlap="{{ params.overlap }}",
            max_pvp="{{ params.max_pvp }}",
            confidence=1.0,
        )

        @task
        def notify(channel: str, params: dict[str, Any] | None = None) -> None:
            """An unrelated side task (a message to the steward on each channel), mapped:
            the gate reads every map index. With ``fail_side_task`` the chat fails."""
            p = params or get_current_context()["params"]
            if p["fail_side_task"] and channel == "chat":
                raise RuntimeError("the steward's chat is unreachable")

        publish = PublishReleaseOperator(
            task_id="publish",
            attempt_task_id="open_attempt",
            release=RELEASE,
            publish_to="{{ ti.xcom_pull(task_ids='prepare')['published'] }}",
        )
        report = ReleaseReportOperator(
            task_id="report", attempt_task_id="open_attempt", release=RELEASE
        )

        side = notify.expand(channel=["mail", "chat"])
        prepare() >> anonymize >> attempt >> [check, audit, side] >> publish
        publish >> report.as_teardown()
    return dag


dag = build("privacy_scenarios")
