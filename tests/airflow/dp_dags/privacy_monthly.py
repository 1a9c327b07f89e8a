"""A monthly survey whose returning people block the k-anonymous release, released with
differential privacy instead (tests/airflow/test_dp_dag.py).

* ``privacy_monthly``: prepare (month M: Adult records 300 (M - 1) .. 300 (M - 1) + 599, so
  consecutive months share 300 people) -> bucketize -> open_attempt (requires the
  composition audit) -> composition_audit -> publish -> report (teardown);
* ``privacy_monthly_dp``: prepare -> dp_release (noisy marginals over the bundled
  hierarchies' values, spending ``rho`` of the dataset's budget) -> publish -> report
  (teardown).

Both gates update the asset ``file:///srv/published/survey`` when they publish.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import DAG, Param, get_current_context, task

from airflow_privacy.core.datasets import adult_hierarchy_path
from airflow_privacy.providers.airflow.notifier import ReleaseVerdictNotifier
from airflow_privacy.providers.airflow.operators.anonymize import BucketizeOperator
from airflow_privacy.providers.airflow.operators.attempt import OpenAttemptOperator
from airflow_privacy.providers.airflow.operators.composition import CompositionAuditOperator
from airflow_privacy.providers.airflow.operators.dp_release import DPReleaseOperator
from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator
from tests.airflow.dag_parts import run_folder, write_adult

QIS = ["age", "marital-status", "race", "sex"]
SURVEY = "file:///srv/published/survey"  # the asset every published release updates


def _note(subject: str, body: str) -> None:
    """The verdicts, as the officer's channel would receive them: one file."""
    notes = Path(os.environ["AIRFLOW_PRIVACY_OUTPUT_DIR"]) / "verdicts.txt"
    with notes.open("a", encoding="utf-8") as fh:
        fh.write(f"{subject}\n{body}\n---\n")


NOTIFY = ReleaseVerdictNotifier(send=_note)
PREPARED = "{{ ti.xcom_pull(task_ids='prepare') }}"


def _params() -> dict[str, Param]:
    return {
        "month": Param(1, type="integer", minimum=1),
        "first_release": Param(False, type="boolean"),
        "rho": Param(0.5, type="number"),
    }


@task
def prepare(params: dict[str, Any] | None = None) -> dict[str, str]:
    p = params or get_current_context()["params"]
    folder, run = run_folder()
    month = int(p["month"])
    write_adult(folder / "input.parquet", 300 * (month - 1), 600)
    return {
        "input": str(folder / "input.parquet"),
        "release": str(folder / "release.parquet"),
        "marginals": str(folder / "marginals.csv"),
        "published": str(folder.parent / "published" / run),
    }


def _dag(dag_id: str) -> DAG:
    return DAG(
        dag_id=dag_id, schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
        catchup=False, params=_params(),
    )  # fmt: skip


with _dag("privacy_monthly") as monthly:
    prepared = prepare()
    anonymize = BucketizeOperator(
        task_id="anonymize", source="{{ ti.xcom_pull(task_ids='prepare')['input'] }}",
        release="{{ ti.xcom_pull(task_ids='prepare')['release'] }}", qis=QIS,
        sensitive="occupation", criteria=["k-anonymity:k=3"],
    )  # fmt: skip
    attempt = OpenAttemptOperator(
        task_id="open_attempt", release="{{ ti.xcom_pull(task_ids='prepare')['release'] }}",
        dataset="survey", required_checks=["composition_audit"],
        first_release="{{ params.first_release }}",
    )  # fmt: skip
    audit = CompositionAuditOperator(
        task_id="composition_audit", attempt_task_id="open_attempt", on_unsafe="continue",
        candidate="{{ ti.xcom_pull(task_ids='prepare')['release'] }}", datasets=["survey"],
    )  # fmt: skip
    publish = PublishReleaseOperator(
        task_id="publish", attempt_task_id="open_attempt",
        release="{{ ti.xcom_pull(task_ids='prepare')['release'] }}",
        publish_to="{{ ti.xcom_pull(task_ids='prepare')['published'] }}", asset=SURVEY,
    )  # fmt: skip
    report = ReleaseReportOperator(
        task_id="report", attempt_task_id="open_attempt",
        release="{{ ti.xcom_pull(task_ids='prepare')['release'] }}",
    )  # fmt: skip
    prepared >> anonymize >> attempt >> audit >> publish
    publish >> report.as_teardown()

with _dag("privacy_monthly_dp") as monthly_dp:
    prepared = prepare()
    dp = DPReleaseOperator(
        task_id="dp_release", source="{{ ti.xcom_pull(task_ids='prepare')['input'] }}",
        dataset="survey", marginals=["age,sex", "race,sex", "marital-status"],
        key_files={c: str(adult_hierarchy_path(c)) for c in ("age", "sex", "race",
                                                              "marital-status")},
        output_file="{{ ti.xcom_pull(task_ids='prepare')['marginals'] }}", rho="{{ params.rho }}",
    )  # fmt: skip
    publish = PublishReleaseOperator(
        task_id="publish", attempt_task_id="dp_release",
        release="{{ ti.xcom_pull(task_ids='prepare')['marginals'] }}",
        publish_to="{{ ti.xcom_pull(task_ids='prepare')['published'] }}", asset=SURVEY,
        on_success_callback=NOTIFY, on_failure_callback=NOTIFY,
    )  # fmt: skip
    report = ReleaseReportOperator(
        task_id="report", attempt_task_id="dp_release",
        release="{{ ti.xcom_pull(task_ids='prepare')['marginals'] }}",
    )  # fmt: skip
    prepared >> dp >> publish
    publish >> report.as_teardown()
