"""A gated release DAG whose check counts people, not rows (tests/airflow/test_entity_dag.py).

prepare (a release of several rows per person, with its manifest) -> open_attempt (requires
``check_rows`` and ``check_people``) -> [check_rows, check_people] -> publish (the gate).

``check_rows`` is 2-anonymity on the rows; ``check_people`` the same with
``entity_column="pid"``. With ``leaky`` one group's rows all belong to one person: the rows
pass, the people do not, and the gate blocks.
"""

from __future__ import annotations

import json
from typing import Any

import pendulum
from airflow.sdk import DAG, Param, get_current_context, task

from airflow_privacy.providers.airflow.operators.attempt import OpenAttemptOperator
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator
from tests.airflow.dag_parts import run_folder

RELEASE = "{{ ti.xcom_pull(task_ids='prepare')['release'] }}"

with DAG(
    dag_id="privacy_entity",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    render_template_as_native_obj=True,
    params={
        "dataset": Param("visits", type="string"),
        "leaky": Param(False, type="boolean"),
    },
) as dag:

    @task
    def prepare(params: dict[str, Any] | None = None) -> dict[str, str]:
        p = params or get_current_context()["params"]
        folder, run = run_folder()
        # two rows per visit-holder; group A holds people 1 and 4 (or person 1 four times)
        people_a = ["person-0001"] * 4 if p["leaky"] else ["person-0001"] * 2 + ["person-0004"] * 2
        rows = [(pid, "20-39", "47*") for pid in people_a] + [
            (pid, "40-59", "48*") for pid in ["person-0002"] * 2 + ["person-0003"] * 2
        ]
        diseases = ["flu", "cold"]
        lines = ["pid,age,zip,disease"] + [
            f"{pid},{age},{z},{diseases[int(pid[-1]) % 2]}" for pid, age, z in rows
        ]
        release = folder / "release.csv"
        release.write_text("\n".join(lines) + "\n", encoding="utf-8")
        manifest = {"qis": ["age", "zip"], "sensitive": "disease", "method": "generalize"}
        (folder / "release.csv.manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        return {"release": str(release), "published": str(folder.parent / "published" / run)}

    attempt = OpenAttemptOperator(
        task_id="open_attempt",
        release=RELEASE,
        dataset="{{ params.dataset }}",
        required_checks=["check_rows", "check_people"],
        first_release=True,
    )
    check_rows = CheckSafetyOperator(
        task_id="check_rows",
        attempt_task_id="open_attempt",
        on_unsafe="continue",
        release=RELEASE,
        sensitive="disease",
        group_columns=["age", "zip"],
        criteria=["k-anonymity:k=2"],
    )
    check_people = CheckSafetyOperator(
        task_id="check_people",
        attempt_task_id="open_attempt",
        on_unsafe="continue",
        release=RELEASE,
        sensitive="disease",
        group_columns=["age", "zip"],
        criteria=["k-anonymity:k=2"],
        entity_column="pid",
    )
    publish = PublishReleaseOperator(
        task_id="publish",
        attempt_task_id="open_attempt",
        release=RELEASE,
        publish_to="{{ ti.xcom_pull(task_ids='prepare')['published'] }}",
    )
    report = ReleaseReportOperator(
        task_id="report",
        attempt_task_id="open_attempt",
        release=RELEASE,
        sensitive="disease",
        group_columns=["age", "zip"],
        k_max=2,
    )
    prepare() >> attempt >> [check_rows, check_people] >> publish
    publish >> report.as_teardown()
