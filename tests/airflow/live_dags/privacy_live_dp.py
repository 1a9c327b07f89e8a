"""A DP release in a running Airflow (tests/airflow/test_gate_live.py): prepare (an Adult
slice) -> dp_release (noisy marginals, ``rho`` of the dataset ``dpsurvey``'s budget) ->
publish -> report (teardown); the gate updates the asset ``file:///live/published/dpsurvey``
and ``privacy_live_dp_consumer`` is scheduled on it."""

from __future__ import annotations

from typing import Any

import pendulum
from airflow.sdk import DAG, Asset, Param, task

from airflow_privacy.core.datasets import adult_hierarchy_path
from airflow_privacy.providers.airflow.operators.dp_release import DPReleaseOperator
from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator
from tests.airflow.dag_parts import run_folder, write_adult

MARGINALS = "{{ ti.xcom_pull(task_ids='prepare')['marginals'] }}"
SURVEY = Asset("file:///live/published/dpsurvey")  # what every published release updates

with DAG(
    dag_id="privacy_live_dp", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False, params={"rho": Param(0.5, type="number", description="the spend")},
) as dag:  # fmt: skip

    @task
    def prepare(params: dict[str, Any] | None = None) -> dict[str, str]:
        folder, run = run_folder()
        write_adult(folder / "input.parquet", 0, 2000)
        return {
            "input": str(folder / "input.parquet"),
            "marginals": str(folder / "marginals.csv"),
            "published": str(folder.parent / "published" / run),
        }

    dp = DPReleaseOperator(
        task_id="dp_release", source="{{ ti.xcom_pull(task_ids='prepare')['input'] }}",
        dataset="dpsurvey", marginals=["age,sex", "race"],
        key_files={c: str(adult_hierarchy_path(c)) for c in ("age", "sex", "race")},
        output_file=MARGINALS, rho="{{ params.rho }}",
    )  # fmt: skip
    publish = PublishReleaseOperator(
        task_id="publish", attempt_task_id="dp_release", release=MARGINALS,
        publish_to="{{ ti.xcom_pull(task_ids='prepare')['published'] }}", asset=SURVEY,
    )  # fmt: skip
    report = ReleaseReportOperator(task_id="report", attempt_task_id="dp_release",
                                   release=MARGINALS)  # fmt: skip
    prepare() >> dp >> publish
    publish >> report.as_teardown()


with DAG(
    dag_id="privacy_live_dp_consumer", schedule=[SURVEY],
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False,
) as consumer:  # fmt: skip

    @task(inlets=[SURVEY])
    def load(*, inlet_events: Any = None) -> dict[str, Any]:
        """What a consumer reads: the event's extra (the release that was published)."""
        event = inlet_events[SURVEY][-1]
        return {"release_uuid": event.extra["release_uuid"], "version": event.extra["version"]}

    load()
