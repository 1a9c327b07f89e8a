"""A gated release whose (c,k)-safety hinges on a frequent benign value ("none").

prepare (a small release: in every ward most people have ``none``, a few a rare
diagnosis) -> open_attempt -> check ((c,k)-safety, ``benign_values`` from the run's params)
-> publish (the gate) -> report (teardown). Without ``benign_values`` the frequent ``none``
breaks (c,k)-safety and the gate blocks; with ``benign_values=["none"]`` the rare values are
what is protected, the check passes and the release is published. Each run writes and
publishes into its own folder.

``privacy_benign_anonymize`` (below) makes the release with the anonymizer instead, which
takes ``benign_values=["none"]``; the check of the run's params decides the gate.
"""

from __future__ import annotations

import json

import pendulum
from airflow.sdk import DAG, Param, task

from airflow_privacy.providers.airflow.operators.anonymize import AnonymizeLatticeOperator
from airflow_privacy.providers.airflow.operators.attempt import OpenAttemptOperator
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator
from tests.airflow.dag_parts import run_folder

RELEASE = "{{ ti.xcom_pull(task_ids='prepare')['release'] }}"

with DAG(
    dag_id="privacy_benign",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    render_template_as_native_obj=True,
    params={
        "dataset": Param("ward", type="string"),
        "benign": Param([], type="array"),
    },
) as dag:

    @task
    def prepare() -> dict[str, str]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        folder, run = run_folder()
        rare = ["flu", "hiv", "asthma", "cold"]
        wards, values = [], []
        for ward in ("north", "south", "east"):
            for s in ["none"] * 8 + rare:
                wards.append(ward)
                values.append(s)
        pq.write_table(pa.table({"ward": wards, "diagnosis": values}), folder / "release.parquet")
        # the manifest names the QIs (what an anonymizer writes beside its release)
        manifest = {"qis": ["ward"], "sensitive": "diagnosis", "group_columns": ["ward"]}
        (folder / "release.parquet.manifest.json").write_text(json.dumps(manifest))
        return {
            "release": str(folder / "release.parquet"),
            "published": str(folder.parent / "published" / run),
        }

    attempt = OpenAttemptOperator(
        task_id="open_attempt",
        release=RELEASE,
        dataset="{{ params.dataset }}",
        required_checks=["check"],
        first_release=True,
        new_dataset="{{ params.dataset }}",  # ward-a, ward-b: close names, both new
    )
    check = CheckSafetyOperator(
        task_id="check",
        attempt_task_id="open_attempt",
        on_unsafe="continue",
        release=RELEASE,
        sensitive="diagnosis",
        group_columns=["ward"],
        criteria=["ck-safety:c=0.7,k=1"],
        benign_values="{{ params.benign }}",
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

    prepare() >> attempt >> check >> publish
    publish >> report.as_teardown()


# --------------------------------------------------------------------------------------
# The anonymizer with benign values: raw -> anonymize (Mondrian, ``benign_values=["none"]``)
# -> open_attempt -> check (the same criterion, ``benign_values`` from the run's params) ->
# publish -> report. With the check's ``benign_values=["none"]`` the anonymizer's release
# passes and is published; without them the same release fails the check and the gate blocks.
ANON_RELEASE = "{{ ti.xcom_pull(task_ids='raw')['release'] }}"
CRITERION = "ck-safety:c=0.7,k=1"

with DAG(
    dag_id="privacy_benign_anonymize",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    render_template_as_native_obj=True,
    params={
        "dataset": Param("clinic", type="string"),
        "benign": Param([], type="array"),
    },
) as anonymize_dag:

    @task
    def raw() -> dict[str, str]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        folder, run = run_folder()
        rare = ["flu", "hiv", "asthma", "cold"]
        wards, ages, values = [], [], []
        for w, ward in enumerate(("north", "south", "east", "west")):
            for i, s in enumerate(["none"] * 8 + rare):
                wards.append(ward)
                ages.append(str(20 + (3 * i + w) % 40))
                values.append(s)
        table = pa.table({"ward": wards, "age": ages, "diagnosis": values})
        pq.write_table(table, folder / "input.parquet")
        return {
            "input": str(folder / "input.parquet"),
            "release": str(folder / "release.parquet"),
            "published": str(folder.parent / "published" / run),
        }

    anonymize = AnonymizeLatticeOperator(
        task_id="anonymize",
        method="mondrian",
        source="{{ ti.xcom_pull(task_ids='raw')['input'] }}",
        release=ANON_RELEASE,
        qis=["ward", "age"],
        sensitive="diagnosis",
        criteria=[CRITERION],
        benign_values=["none"],
    )
    anonymized_attempt = OpenAttemptOperator(
        task_id="open_attempt",
        release=ANON_RELEASE,
        dataset="{{ params.dataset }}",
        required_checks=["check"],
        first_release=True,
        new_dataset="{{ params.dataset }}",  # ward-a, ward-b: close names, both new
    )
    anonymized_check = CheckSafetyOperator(
        task_id="check",
        attempt_task_id="open_attempt",
        on_unsafe="continue",
        release=ANON_RELEASE,
        sensitive="diagnosis",
        group_columns=["ward", "age"],
        criteria=[CRITERION],
        benign_values="{{ params.benign }}",
    )
    anonymized_publish = PublishReleaseOperator(
        task_id="publish",
        attempt_task_id="open_attempt",
        release=ANON_RELEASE,
        publish_to="{{ ti.xcom_pull(task_ids='raw')['published'] }}",
    )
    anonymized_report = ReleaseReportOperator(
        task_id="report", attempt_task_id="open_attempt", release=ANON_RELEASE
    )

    raw() >> anonymize >> anonymized_attempt >> anonymized_check >> anonymized_publish
    anonymized_publish >> anonymized_report.as_teardown()
