"""Sample release DAG: publish a table only when it is provably safe.

prepare the input -> anonymize (``@task.anonymize``: Anatomy bucketization, QIs exact + a
bucket id, buckets diverse enough for (c,k)-safety and the skyline point) -> open an attempt
in the ledger -> four checks in parallel, each recorded under the attempt: (c,k)-safety +
privacy skyline, MaxEnt risk, the composition audit against every earlier release, Great
Expectations -> ``publish``, the gate: it publishes only when the ledger says every check of
*this* attempt passed and every task before it succeeded; otherwise it blocks the attempt
with every reason and fails (the one red task of a blocked run) -> ``release_report`` (a
teardown: it always runs and never changes the run's outcome) writes the HTML report beside
the release, stores it in the ledger for the Airflow UI page (``/privacy``), and links the
task to that page.

The run is green exactly when the release was published (or was already published: re-running
published content publishes nothing again and says so). A published release updates the asset
``privacy://adult/releases`` (a DAG scheduled on it runs after it, never after a block), and
the gate's verdict is written to its log by ``ReleaseVerdictNotifier``. The first release of
the dataset must be declared (``first_release``): a typo in the dataset or ledger never
starts a new history.

Identity disclosure, a choice this sample makes on purpose: Anatomy publishes the QIs
exactly, so people can stand out on them (the attempt measures it, and the report's identity
section shows the highest prosecutor risk, the records at risk and the sample uniques). This
sample protects attribute disclosure (occupation) and accepts identity disclosure, as
Anatomy does when the QIs are public anyway (here: census attributes). An organization whose
QIs are not public limits it in the dataset's policy (``airflow-privacy policy set --dataset
adult --max-prosecutor-risk 0.2 ...``): the gate then blocks this shape, naming the numbers.

The data: a slice of the bundled UCI Adult sample (``first_record``, ``records``). With a
fresh ledger, trigger it with ``first_release`` true: it publishes; a second run with
``first_record=10000`` overlaps the first release by 5,000 people, and the composition audit
blocks it.

Where the files go (``output_dir``, else ``$AIRFLOW_PRIVACY_OUTPUT_DIR``, else
``$AIRFLOW_HOME/privacy_releases``): each run works in ``<root>/adult/<run id>/`` (the input,
the release, its manifest and report) and a published release is copied to
``<root>/adult/published/<run id>/`` (the release, its manifest, its report): a destination
of its own per run, so a later release never overwrites the files of an earlier one. The
ledger records where each attempt published (its ``destination``, shown in the UI).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import DAG, Asset, Param, get_current_context, task

from airflow_privacy.core.datasets import adult_hierarchy_path
from airflow_privacy.providers.airflow.notifier import ReleaseVerdictNotifier
from airflow_privacy.providers.airflow.operators.attempt import OpenAttemptOperator
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
from airflow_privacy.providers.airflow.operators.composition import CompositionAuditOperator
from airflow_privacy.providers.airflow.operators.maxent import MaxEntRiskOperator
from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator

DATASET = "adult"
SENSITIVE = "occupation"
# the QIs of Martin et al.'s Adult case study (section 4): age, marital status, race, sex
QIS = ["age", "marital-status", "race", "sex"]
BUCKET = "bucket"
HIERARCHIES = {c: str(adult_hierarchy_path(c)) for c in QIS}
CHECKS = ["check_safety", "maxent_risk", "composition_audit", "validate_release"]
ADULT_RECORDS = 30_162
# (c,k)-safety saturates at k = (distinct occupations) - 1: more knowledge adds nothing
K_MAX = 13
RELEASE = "{{ ti.xcom_pull(task_ids='anonymize')['outputs']['release'] }}"


#: the asset the published releases of this DAG update (its events carry the release)
ADULT_RELEASES = Asset("privacy://adult/releases")
#: the gate's verdict, to the task's log (send=... sends it anywhere: docs/airflow.md)
VERDICT = ReleaseVerdictNotifier()


def run_folder(run_id: str) -> str:
    """A run's folder name: its run id, with the characters a path should not carry
    (``:``, ``+``, ``/``, ``\\``, and a name of dots only) replaced by ``_``."""
    name = "".join("_" if ch in ":+/\\" else ch for ch in str(run_id))
    return name if name.strip(".") else "_" * len(name) or "_"


def output_root() -> Path:
    """$AIRFLOW_PRIVACY_OUTPUT_DIR, else [privacy] output_dir, else $AIRFLOW_HOME's
    privacy_releases folder."""
    from airflow_privacy.providers.airflow.config import setting

    root = setting("output_dir")
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
    doc_md=__doc__,
    params={
        "first_record": Param(
            0,
            type="integer",
            minimum=0,
            maximum=ADULT_RECORDS - 100,
            description="first Adult record of the slice",
        ),
        "records": Param(
            15000,
            type="integer",
            minimum=100,
            maximum=ADULT_RECORDS,
            description="records released",
        ),
        "first_release": Param(
            False,
            type="boolean",
            description="declare this the dataset's first release (a fresh ledger); leave off "
            "afterwards: a dataset without published releases is then an error",
        ),
        "version": Param(
            None, type=["null", "string"], description="version label (empty: the next number)"
        ),
        "sensitive": Param(SENSITIVE, type="string", description="the sensitive column"),
        "k_anonymity": Param(
            5, type="integer", minimum=1, maximum=1000, description="k of k-anonymity"
        ),
        "c": Param(
            0.7,
            type="number",
            exclusiveMinimum=0,
            maximum=1,
            description="(c,k)-safety: the confidence no adversary may reach",
        ),
        "k": Param(
            3,
            type="integer",
            minimum=0,
            maximum=K_MAX,
            description="(c,k)-safety: pieces of background knowledge "
            f"(at most {K_MAX}: beyond, more knowledge adds nothing)",
        ),
        "skyline_point": Param(
            "1,2,2,0.9",
            type="string",
            pattern=r"^\s*\d+\s*,\s*\d+\s*,\s*\d+\s*,\s*[0-9.]+\s*$",
            description="privacy skyline point l,k,m,c",
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
            maximum=1000,
            description="MaxEnt: strongest positive rules assumed known",
        ),
        "top_negative": Param(
            10,
            type="integer",
            minimum=0,
            maximum=1000,
            description="MaxEnt: strongest negative rules assumed known",
        ),
        "check_c": Param(
            None,
            type=["null", "number"],
            exclusiveMinimum=0,
            maximum=1,
            description="check_safety's c (empty: the anonymizer's c)",
        ),
        "check_k": Param(
            None,
            type=["null", "integer"],
            minimum=0,
            maximum=K_MAX,
            description="check_safety's k (empty: the anonymizer's k)",
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
            description="composition: tolerated % of breached people",
        ),
        "output_dir": Param(
            None,
            type=["null", "string"],
            description="where releases go (empty: $AIRFLOW_PRIVACY_OUTPUT_DIR "
            "or $AIRFLOW_HOME/privacy_releases)",
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
        run = run_folder(context["run_id"])
        run_dir = root / DATASET / run
        run_dir.mkdir(parents=True, exist_ok=True)
        table = load_adult().slice(int(p["first_record"]), int(p["records"]))
        path = run_dir / "input.parquet"
        pq.write_table(table, path)
        return {
            "input": str(path),
            "release": str(run_dir / "release.parquet"),
            # the run's own destination: a release never overwrites another's published files
            "published": str(root / DATASET / "published" / run),
        }

    # @task.anonymize (the provider's TaskFlow decorator): the function returns the input,
    # and BucketizeOperator's arguments below anonymize it into the release
    @task.anonymize(
        release="{{ ti.xcom_pull(task_ids='prepare_input')['release'] }}",
        # the run's own folder: a cleared run writes its release again (nothing else is there)
        replace=True,
        qis=QIS,
        sensitive="{{ params.sensitive }}",
        criteria=[
            {"name": "k-anonymity", "k": "{{ params.k_anonymity }}"},
            {"name": "ck-safety", "c": "{{ params.c }}", "k": "{{ params.k }}"},
            {"name": "skyline", "points": ["{{ params.skyline_point }}"]},
        ],
    )
    def anonymize(paths: Any) -> str:
        """Anatomy bucketization of the input ``prepare_input`` wrote (its release: the QIs
        exact, a bucket id, buckets diverse enough for (c,k)-safety and the skyline point)."""
        return str(paths["input"])

    anonymized = anonymize(prepare_input())

    open_attempt = OpenAttemptOperator(
        task_id="open_attempt",
        release=RELEASE,
        dataset=DATASET,
        required_checks=CHECKS,
        version="{{ params.version }}",
        first_release="{{ params.first_release }}",
    )

    check = CheckSafetyOperator(
        task_id="check_safety",
        attempt_task_id="open_attempt",
        on_unsafe="continue",  # the gate fails, naming this check
        release=RELEASE,
        sensitive="{{ params.sensitive }}",
        group_columns=[BUCKET],
        criteria=[
            {
                "name": "ck-safety",
                "c": "{{ params.check_c if params.check_c is not none else params.c }}",
                "k": "{{ params.check_k if params.check_k is not none else params.k }}",
            },
            {"name": "skyline", "points": ["{{ params.skyline_point }}"]},
        ],
    )

    maxent = MaxEntRiskOperator(
        task_id="maxent_risk",
        attempt_task_id="open_attempt",
        on_unsafe="continue",
        release=RELEASE,
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
        attempt_task_id="open_attempt",
        on_unsafe="continue",
        candidate=RELEASE,
        population="{{ ti.xcom_pull(task_ids='prepare_input')['input'] }}",
        datasets=[DATASET],
        hierarchies=HIERARCHIES,
        confidence="{{ params.confidence }}",
        max_pvp="{{ params.max_pvp }}",
    )

    @task
    def validate_release(release: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Great Expectations on the release itself (GX called directly, ephemeral context,
        no progress bars): schema, no direct identifiers, and the (c,k)-safety expectation.
        The verdict is recorded under the run's attempt like any other check."""
        import great_expectations as gx
        import pyarrow.parquet as pq
        from great_expectations.data_context.types.base import ProgressBarsConfig
        from great_expectations.expectations.core.expect_table_columns_to_match_set import (
            ExpectTableColumnsToMatchSet,
        )

        from airflow_privacy.expectations import (
            ExpectColumnValuesToNotBeDirectIdentifiers,
            ExpectReleaseToBeCKSafe,
        )
        from airflow_privacy.providers.airflow import record_check

        context = get_current_context()
        p = params or context["params"]
        df = pq.read_table(release).to_pandas()
        gx_context = gx.get_context(mode="ephemeral")
        gx_context.variables.progress_bars = ProgressBarsConfig(globally=False)
        batch = (
            gx_context.data_sources.add_pandas("release")
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
        failed = [type(e).__name__ for e in suite if not batch.validate(e).success]
        return record_check(
            context,
            "validate_release",
            safe=not failed,
            summary=f"{len(suite)} expectations, {len(failed)} failed"
            + (f": {', '.join(failed)}" if failed else ""),
            reasons=[f"expectation {name} failed" for name in failed],
            details={"expectations": len(suite), "failed": failed},
        )

    validate = validate_release(RELEASE)

    publish = PublishReleaseOperator(
        task_id="publish",
        attempt_task_id="open_attempt",
        release=RELEASE,
        publish_to="{{ ti.xcom_pull(task_ids='prepare_input')['published'] }}",
        # a DAG scheduled on ADULT_RELEASES runs after each published release, never after a
        # blocked one; the verdict goes to the task's log (give the notifier send=... to mail
        # the privacy office: docs/airflow.md)
        asset=ADULT_RELEASES,
        on_success_callback=VERDICT,
        on_failure_callback=VERDICT,
    )

    report = ReleaseReportOperator(
        task_id="release_report",
        attempt_task_id="open_attempt",
        release=RELEASE,
        sensitive="{{ params.sensitive }}",
        group_columns=[BUCKET],
        c="{{ params.c }}",
        k_max="{{ params.k }}",
        skyline_c="{{ params.skyline_point.split(',')[-1] }}",
    )

    checks = [check, maxent, audit, validate]
    anonymized >> open_attempt >> checks
    checks >> publish >> report.as_teardown()


if __name__ == "__main__":
    dag.test()
