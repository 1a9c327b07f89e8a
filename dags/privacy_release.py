"""Sample release DAG: publish a table only when it is provably safe.

load the bundled data -> anonymize (Anatomy bucketization: QIs exact + a bucket id, buckets
diverse enough for (c,k)-safety and the skyline point) -> check
(c,k)-safety + privacy skyline -> MaxEnt risk -> composition audit against earlier releases in
the ledger -> Great Expectations validation -> publish + record as published.

When any check fails, ``record_blocked`` records the release in the ledger as blocked with
every reason (the witnesses included) and nothing is published. Either way ``release_report``
runs last: it writes the HTML release report next to the release (``<release>.report.html``),
stores it in the ledger for the Airflow UI page (``/privacy``), and links the task to that
page ("Privacy report"). Thresholds are DAG params, so a privacy officer can change them in
the trigger form.

The data: a slice of the bundled UCI Adult sample (``first_record``, ``records``): the
default slice publishes; a second run with ``first_record=10000`` overlaps the first release
by 5,000 people, and the composition audit blocks it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import DAG, Param, get_current_context, task
from airflow.sdk.exceptions import AirflowFailException

from airflow_privacy.core.datasets import adult_hierarchy_path
from airflow_privacy.providers.airflow.operators.anonymize import BucketizeOperator
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
from airflow_privacy.providers.airflow.operators.composition import CompositionAuditOperator
from airflow_privacy.providers.airflow.operators.ledger import (
    PublishReleaseOperator,
    RecordBlockedReleaseOperator,
)
from airflow_privacy.providers.airflow.operators.maxent import MaxEntRiskOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator
from airflow_privacy.providers.airflow.verdict import REPORT_KEY

DATASET = "adult"
SENSITIVE = "occupation"
# the QIs of Martin et al.'s Adult case study (section 4): age, marital status, race, sex
QIS = ["age", "marital-status", "race", "sex"]
BUCKET = "bucket"
HIERARCHIES = {c: str(adult_hierarchy_path(c)) for c in QIS}


def output_root() -> Path:
    root = os.environ.get("AIRFLOW_PRIVACY_OUTPUT_DIR")
    if root:
        return Path(root)
    home = os.environ.get("AIRFLOW_HOME") or str(Path.home() / "airflow")
    return Path(home) / "privacy_releases"


with DAG(
    dag_id="privacy_release",
    description="Anonymize, prove safe, audit against earlier releases, then publish",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    tags=["privacy", "release"],
    params={
        "first_record": Param(0, type="integer", minimum=0, description="first Adult record"),
        "records": Param(15000, type="integer", minimum=100, description="records released"),
        "version": Param("", type="string", description="version label (default: next)"),
        "sensitive": Param(SENSITIVE, type="string", description="the sensitive column"),
        "k_anonymity": Param(5, type="integer", minimum=1, description="k of k-anonymity"),
        "c": Param(
            0.7,
            type="number",
            exclusiveMinimum=0,
            maximum=1,
            description="(c,k)-safety: the confidence no adversary may reach",
        ),
        "k": Param(
            3, type="integer", minimum=0, description="(c,k)-safety: pieces of background knowledge"
        ),
        "skyline_point": Param(
            "1,2,2,0.9", type="string", description="privacy skyline point l,k,m,c"
        ),
        "maxent_threshold": Param(
            0.95,
            type="number",
            exclusiveMinimum=0,
            maximum=1,
            description="largest tolerated MaxEnt posterior",
        ),
        "top_positive": Param(
            0,
            type="integer",
            minimum=0,
            description="MaxEnt: strongest positive rules assumed known",
        ),
        "top_negative": Param(
            10,
            type="integer",
            minimum=0,
            description="MaxEnt: strongest negative rules assumed known",
        ),
        "check_c": Param(
            None,
            type=["null", "number"],
            description="check_safety's c (default: the anonymizer's c)",
        ),
        "check_k": Param(
            None,
            type=["null", "integer"],
            description="check_safety's k (default: the anonymizer's k)",
        ),
        "confidence": Param(
            0.5,
            type="number",
            exclusiveMinimum=0,
            maximum=1,
            description="composition: a person is breached when pinned with this confidence",
        ),
        "max_pvp": Param(
            0.0,
            type="number",
            minimum=0,
            maximum=100,
            description="composition: tolerated % of perfect breaches",
        ),
        "output_dir": Param(
            "",
            type="string",
            description="where releases go (default: "
            "$AIRFLOW_PRIVACY_OUTPUT_DIR or $AIRFLOW_HOME/privacy_releases)",
        ),
    },
) as dag:

    @task
    def prepare_input(params: dict[str, Any] | None = None) -> dict[str, str]:
        """The raw table to release: a slice of the bundled Adult data (never published)."""
        import pyarrow.parquet as pq

        from airflow_privacy.core.datasets import load_adult

        p = params or get_current_context()["params"]
        context = get_current_context()
        root = Path(p["output_dir"]) if p.get("output_dir") else output_root()
        run_dir = root / DATASET / str(context["run_id"]).replace(":", "_").replace("+", "_")
        run_dir.mkdir(parents=True, exist_ok=True)
        table = load_adult().slice(int(p["first_record"]), int(p["records"]))
        path = run_dir / "input.parquet"
        pq.write_table(table, path)
        return {
            "input": str(path),
            "release": str(run_dir / "release.parquet"),
            "published": str(root / DATASET / "published"),
        }

    paths = prepare_input()

    anonymize = BucketizeOperator(
        task_id="anonymize",
        source="{{ ti.xcom_pull(task_ids='prepare_input')['input'] }}",
        release="{{ ti.xcom_pull(task_ids='prepare_input')['release'] }}",
        qis=QIS,
        sensitive="{{ params.sensitive }}",
        criteria=[
            {"name": "k-anonymity", "k": "{{ params.k_anonymity }}"},
            {"name": "ck-safety", "c": "{{ params.c }}", "k": "{{ params.k }}"},
            {"name": "skyline", "points": ["{{ params.skyline_point }}"]},
        ],
    )

    check = CheckSafetyOperator(
        task_id="check_safety",
        release="{{ ti.xcom_pull(task_ids='anonymize')['release'] }}",
        sensitive="{{ params.sensitive }}",
        group_columns=[BUCKET],
        criteria=[
            {
                "name": "ck-safety",
                "c": "{{ params.check_c or params.c }}",
                "k": "{{ params.check_k if params.check_k is not none else params.k }}",
            },
            {"name": "skyline", "points": ["{{ params.skyline_point }}"]},
        ],
    )

    maxent = MaxEntRiskOperator(
        task_id="maxent_risk",
        release="{{ ti.xcom_pull(task_ids='anonymize')['release'] }}",
        original="{{ ti.xcom_pull(task_ids='prepare_input')['input'] }}",
        qis=QIS,
        sensitive="{{ params.sensitive }}",
        bucket_column=BUCKET,
        top_positive="{{ params.top_positive }}",
        top_negative="{{ params.top_negative }}",
        threshold="{{ params.maxent_threshold }}",
    )

    audit = CompositionAuditOperator(
        task_id="composition_audit",
        candidate="{{ ti.xcom_pull(task_ids='anonymize')['release'] }}",
        population="{{ ti.xcom_pull(task_ids='prepare_input')['input'] }}",
        datasets=[DATASET],
        hierarchies=HIERARCHIES,
        confidence="{{ params.confidence }}",
        max_pvp="{{ params.max_pvp }}",
        record_as=DATASET,
        version="{{ params.version }}",
    )

    @task
    def validate_release(release: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Great Expectations on the release itself: schema, no direct identifiers, and the
        (c,k)-safety expectation (GX called directly, ephemeral context)."""
        import great_expectations as gx
        import pyarrow.parquet as pq
        from great_expectations.expectations.core.expect_table_columns_to_match_set import (
            ExpectTableColumnsToMatchSet,
        )

        from airflow_privacy.expectations import (
            ExpectColumnValuesToNotBeDirectIdentifiers,
            ExpectReleaseToBeCKSafe,
        )

        p = params or get_current_context()["params"]
        df = pq.read_table(release).to_pandas()
        context = gx.get_context(mode="ephemeral")
        batch = (
            context.data_sources.add_pandas("release")
            .add_dataframe_asset("release")
            .add_batch_definition_whole_dataframe("all")
            .get_batch(batch_parameters={"dataframe": df})
        )
        suite = [
            ExpectTableColumnsToMatchSet(column_set=[*QIS, BUCKET, p["sensitive"]]),
            *(ExpectColumnValuesToNotBeDirectIdentifiers(column=c) for c in df.columns),
            ExpectReleaseToBeCKSafe(
                sensitive=p["sensitive"], group_columns=[BUCKET], c=float(p["c"]), k=int(p["k"])
            ),
        ]
        failed = []
        for expectation in suite:
            result = batch.validate(expectation)
            if not result.success:
                failed.append(f"{type(expectation).__name__}: {result.result}")
        report = {
            "check": "great_expectations",
            "safe": not failed,
            "reasons": [f"validate_release: {f}" for f in failed],
            "expectations": len(suite),
        }
        get_current_context()["ti"].xcom_push(key=REPORT_KEY, value=report)
        if failed:
            raise AirflowFailException("release blocked by validation: " + "; ".join(failed))
        return report

    validate = validate_release("{{ ti.xcom_pull(task_ids='anonymize')['release'] }}")

    publish = PublishReleaseOperator(
        task_id="publish",
        release="{{ ti.xcom_pull(task_ids='anonymize')['release'] }}",
        publish_to="{{ ti.xcom_pull(task_ids='prepare_input')['published'] }}",
        dataset=DATASET,
        release_id="{{ ti.xcom_pull(task_ids='composition_audit')['release_id'] }}",
    )

    checks = ["anonymize", "check_safety", "maxent_risk", "composition_audit", "validate_release"]
    record_blocked = RecordBlockedReleaseOperator(
        task_id="record_blocked",
        release="{{ ti.xcom_pull(task_ids='prepare_input')['release'] }}",
        dataset=DATASET,
        check_task_ids=checks,
        audit_task_id="composition_audit",
        version="{{ params.version }}",
    )

    report = ReleaseReportOperator(
        task_id="release_report",
        release="{{ ti.xcom_pull(task_ids='prepare_input')['release'] }}",
        dataset=DATASET,
        check_task_ids=checks,
        publish_task_id="publish",
        blocked_task_id="record_blocked",
        sensitive="{{ params.sensitive }}",
        group_columns=[BUCKET],
        c="{{ params.c }}",
        k_max="{{ params.k }}",
        skyline_c="{{ params.skyline_point.split(',')[-1] }}",
    )

    paths >> anonymize >> check >> maxent >> audit >> validate >> publish
    [anonymize, check, maxent, audit, validate] >> record_blocked
    [publish, record_blocked] >> report  # all_done: on the publish and the blocked path


if __name__ == "__main__":
    dag.test()
