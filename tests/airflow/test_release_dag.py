"""The sample release DAG and a scenario DAG end to end, through ``dag.test`` (as
``airflow dags test`` runs them), with the ledger on SQLite and on a real PostgreSQL.

In every scenario the run is green exactly when the release was published (or was already
published), and the report and the ledger agree: a first release without its declaration,
the declared first release, a re-run of published content, a release blocked by two checks
and then published by a fresh attempt once the decision changed (into a folder of its own:
no release overwrites another's published files), bad input, a typo in the audit's
datasets, a failed unrelated task (one instance of a mapped task), ``overlap="known"`` across
two months, and a report wired as a plain downstream task instead of a teardown (it must
fail the blocked run it would otherwise turn green). The blocked
run's XComs, logs and API responses are searched for the sensitive values of the people in
the witness, and the scenario runs' for raw identifiers: none is found."""

from __future__ import annotations

import importlib.util
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.cli import main
from airflow_privacy.ledger import ReleaseLedger
from tests.airflow.release_runs import (  # noqa: F401  (fixtures)
    KEY,
    ROOT,
    SAMPLE_DAGS,
    SCENARIO_DAGS,
    SMALL,
    airflow_home,
    drive,
    envelope,
    green,
    ledger_state,
    ledger_url,
    officer,
)
from tests.conftest_pg import pg_server, pg_url  # noqa: F401  (fixtures)
from tests.policy_setup import record_policy

pytestmark = pytest.mark.long_module


def test_dag_imports_with_the_expected_tasks_and_params() -> None:
    spec = importlib.util.spec_from_file_location(
        "privacy_release_dag", SAMPLE_DAGS / "privacy_release.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    dag = module.dag
    assert dag.dag_id == "privacy_release"
    assert dag.fileloc == str(SAMPLE_DAGS / "privacy_release.py")
    assert set(dag.task_ids) == {
        "prepare_input",
        "anonymize",
        "open_attempt",
        "check_safety",
        "maxent_risk",
        "composition_audit",
        "validate_release",
        "publish",
        "release_report",
    }
    checks = {"check_safety", "maxent_risk", "composition_audit", "validate_release"}
    for task in checks:  # the checks fan out in parallel after the attempt
        assert dag.get_task(task).upstream_task_ids == {"open_attempt"}
    publish = dag.get_task("publish")
    assert publish.trigger_rule == "all_done" and publish.upstream_task_ids == checks
    report = dag.get_task("release_report")
    assert report.is_teardown and report.upstream_task_ids == {"publish"}
    assert [link.name for link in report.operator_extra_links] == ["Privacy report"]
    # the trigger form works with its defaults: every param without a value is nullable
    for name in dag.params:
        param = dag.params.get_param(name)
        if param.value is None:
            assert "null" in param.schema["type"], name
    assert dag.params.get_param("k").schema["maximum"] == 13
    from airflow_privacy.example_dags import privacy_release as shipped

    assert shipped.dag.dag_id == "privacy_release"  # also in the wheel


def test_sample_dag_green_iff_published(
    airflow_home: Path,  # noqa: F811  (the fixture)
    tmp_path: Path,
    ledger_url: str,  # noqa: F811  (the fixture)
) -> None:
    out = tmp_path / "out"
    published = out / "adult" / "published"
    sqlite_file = (
        Path(ledger_url.removeprefix("sqlite:///")) if ledger_url.startswith("sqlite") else None
    )
    # 1: a first release that is not declared: red, the attempt refused as bad input, the
    # gate names it, and nothing is created (no ledger file, no published file)
    (first,), log = drive(airflow_home, SAMPLE_DAGS, "privacy_release", out, ledger_url, [SMALL])
    assert not green(first)
    assert first["tasks"]["open_attempt"] == "failed" and first["tasks"]["publish"] == "failed"
    assert first["tasks"]["check_safety"] == "upstream_failed"
    assert "declared with first_release" in log and "policy set --dataset adult" in log
    assert "no attempt was opened" in log
    assert not published.exists()
    if sqlite_file is not None:
        assert not sqlite_file.exists()
    assert ledger_state(ledger_url) == []
    # the privacy officer records the sample dataset's policy (the demo's), as the demo does
    assert officer(ledger_url, []) == 0
    runs, log = drive(
        airflow_home,
        SAMPLE_DAGS,
        "privacy_release",
        out,
        ledger_url,
        [
            {**SMALL, "first_release": True},  # 2: declared: published
            SMALL,  # 3: the same content again
            {**SMALL, "first_record": 1000, "check_k": 12},  # 4: overlaps 2, k too high
        ],
    )
    declared, rerun, blocked = runs
    # 2: green, published, the report says so, the files are in place, in the run's own
    # destination under published/
    assert green(declared)
    pub = envelope(declared, "publish")
    assert pub["outcome"] == "published" and pub["safe"] is True
    first_dest = Path(pub["outputs"]["published"]).parent
    assert first_dest.parent == published
    assert first_dest.name == declared["run_id"].replace(":", "_").replace("+", "_")
    assert published_files(published) == {
        first_dest.name: ["release.parquet", "release.parquet.manifest.json",
                          "release.parquet.report.html"]
    }  # fmt: skip
    rep = envelope(declared, "release_report")
    assert rep["details"]["status"] == "published"
    assert declared["xcoms"]["release_report"]["privacy_report_url"].endswith(
        f"/privacy/attempts/{pub['attempt']['uuid']}"
    )
    # 3: green, and says it was already published; nothing checked or copied again
    assert green(rerun)
    again = envelope(rerun, "publish")
    assert again["outcome"] == "already-published"
    assert "already published as release #1 (adult v1)" in again["summary"]
    assert envelope(rerun, "check_safety")["outcome"] == "already-published"
    # 4: red: the gate fails naming both failed checks, and the report teardown (whose
    # outcome is the run's: the ledger says not published) fails after writing its report
    assert not green(blocked)
    assert blocked["tasks"]["publish"] == "failed"
    assert blocked["tasks"]["release_report"] == "failed"
    failed = sorted(t for t, s in blocked["tasks"].items() if s != "success")
    assert failed == ["publish", "release_report"], blocked["tasks"]
    gate = envelope(blocked, "publish")
    assert gate["outcome"] == "blocked"
    assert any(r.startswith("check_safety: ck-safety") for r in gate["reasons"])
    assert any(r.startswith("composition_audit: composition") for r in gate["reasons"])
    assert envelope(blocked, "release_report")["details"]["status"] == "blocked"
    assert list(published_files(published)) == [first_dest.name]  # nothing else published
    # the release asset: an event for the published release, none for the blocked run; the
    # verdict notifier wrote each verdict to the gate's log
    (event,) = declared["asset_events"]
    assert event["uri"] == "privacy://adult/releases" and event["extra"]["version"] == "1"
    assert blocked["asset_events"] == []
    assert "PUBLISHED: adult v1" in log and "BLOCKED: adult v2 was not published" in log
    assert ledger_state(ledger_url) == [
        ("1", "published", ["published", "already-published"]),
        ("2", "blocked", ["blocked"]),
    ]
    # task logs are not flooded: no GX progress bars, no Alembic INFO, no RFC 3986 warning
    for noise in ("Calculating Metrics", "Context impl", "Will assume", "RFC3986"):
        assert noise not in log, noise
    with ReleaseLedger(ledger_url, create=False) as db:
        stored = db.report(2)
        assert stored is not None and stored["verdict"]["status"] == "blocked"
    assert_no_individual_values(blocked, log, ledger_url, tmp_path)

    # a weaker trigger parameter than the policy (the composition limit raised in the run's
    # form): the audit passes at 100%, but the gate blocks, naming the policy line missed
    (weaker,), log = drive(
        airflow_home, SAMPLE_DAGS, "privacy_release", out, ledger_url,
        [{**SMALL, "first_record": 1000, "max_pvp": 100}],
    )  # fmt: skip
    assert not green(weaker) and weaker["tasks"]["publish"] == "failed"
    assert envelope(weaker, "composition_audit")["safe"] is True
    assert any(
        "policy v1 of 'adult' requires composition: ganta, confidence <= 0.5, max_pvp <= 0%" in r
        and "max_pvp 100" in r
        for r in envelope(weaker, "publish")["reasons"]
    ), envelope(weaker, "publish")["reasons"]
    assert list(published_files(published)) == [first_dest.name]
    # the decision changes where it belongs: the officer loosens the policy's composition
    # line, which waits for a second person (four eyes), who approves it; then the same
    # content, a new attempt, is judged afresh and published; bad input records nothing
    assert officer(ledger_url, ["--max-pvp", "100"], by="officer") == 1  # proposed
    assert main(["policy", "approve", "--dataset", "adult", "--version", "2", "--by", "dpo",
                 "--reason", "the board accepted the overlap", "--ledger", ledger_url,
                 "--quiet"], out=io.StringIO()) == 0  # fmt: skip
    runs, _ = drive(
        airflow_home,
        SAMPLE_DAGS,
        "privacy_release",
        out,
        ledger_url,
        [
            {**SMALL, "first_record": 1000, "max_pvp": 100},
            {**SMALL, "first_record": 4000, "sensitive": "diagnosis"},
        ],
    )
    fixed, bad = runs
    assert green(fixed) and envelope(fixed, "publish")["outcome"] == "published"
    # v2 is published beside v1, into its own folder: v1's files are untouched
    second_dest = Path(envelope(fixed, "publish")["outputs"]["published"]).parent
    assert second_dest != first_dest and second_dest.parent == published
    files = published_files(published)
    assert sorted(files) == sorted([first_dest.name, second_dest.name])
    assert all(len(names) == 3 for names in files.values()), files
    assert not green(bad) and bad["tasks"]["anonymize"] == "failed"
    assert ledger_state(ledger_url) == [
        ("1", "published", ["published", "already-published"]),
        ("2", "published", ["blocked", "blocked", "published"]),
    ]


def published_files(folder: Path) -> dict[str, list[str]]:
    """``{destination folder: its files}`` under the published folder."""
    return {d.name: sorted(p.name for p in d.iterdir()) for d in sorted(folder.iterdir())}


def api_texts(url: str) -> list[str]:
    """Every JSON response of the ledger's API about every release (authentication off)."""
    from fastapi.testclient import TestClient

    from airflow_privacy.ledger.location import LedgerLocation
    from airflow_privacy.providers.airflow.plugin import create_app

    client = TestClient(create_app(auth=False, location=lambda: LedgerLocation(url, "test")))
    texts = [client.get("/api/releases").text]
    for rel in json.loads(texts[0]):
        key = rel.get("uuid") or rel["id"]
        texts.append(client.get(f"/api/releases/{key}").text)
        texts.append(client.get(f"/api/releases/{key}/report").text)
        texts.append(client.get(f"/releases/{key}").text)
    return texts


def chunks(value: Any) -> Iterator[str]:
    """The pieces a reader sees together: every string, and every object naming a row."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        if "row" in value:
            yield json.dumps(value)
        for v in value.values():
            yield from chunks(v)
    elif isinstance(value, list):
        for v in value:
            yield from chunks(v)


def assert_no_individual_values(run: dict[str, Any], log: str, url: str, tmp: Path) -> None:
    """The values left for each person of the composition witness appear nowhere beside the
    person: not in XCom, the logs, or the ledger's JSON API and pages."""
    import re

    import pyarrow.csv as pacsv

    from airflow_privacy.cli import main

    worst = envelope(run, "composition_audit")["details"]["worst"]
    assert worst, "the blocked run has breached people to look for"
    # what is confidential: the per-person table, from the same inputs, via the command line
    paths = run["xcoms"]["prepare_input"]["return_value"]
    table = tmp / "individuals.csv"
    with open(os.devnull, "w") as sink:
        code = main(
            [
                "audit",
                paths["release"],
                "--population",
                paths["input"],
                "--ledger",
                url,
                "--dataset",
                "adult",
                "--confidence",
                "0.5",
                "--individuals",
                str(table),
                "--quiet",
            ],
            sink,
        )
    assert code == 1
    rows = pacsv.read_csv(table).to_pylist()
    pieces = [*log.splitlines(), *chunks(run["xcoms"])]
    for text in api_texts(url):
        try:
            pieces.extend(chunks(json.loads(text)))
        except ValueError:  # an HTML page
            pieces.extend(text.splitlines())
    assert not [p for p in pieces if re.search(r"row \d+: \{", p)]  # the old leak's shape
    # a message joins several reasons with "; ": a reason is the unit a reader relates
    pieces = [part for p in pieces for part in p.split("; ")]
    for w in worst:
        person = rows[int(w["row"])]
        values = [v.strip() for v in str(person["intersection"]).split(";") if v.strip()]
        assert values
        mark = re.compile(rf"\brow {int(w['row'])}\b|\"row\": {int(w['row'])}\b")
        for piece in pieces:
            if mark.search(piece):
                assert not any(v in piece for v in values), piece[:3000]
    # nor does any reason, witness or page say which sensitive value a *group* holds: the
    # blocked (c,k)-safety check's target group appears, its value (quoted) never beside it
    from airflow_privacy.core.criteria.worst_case import max_disclosure
    from airflow_privacy.core.io import read_bucketization
    from airflow_privacy.core.model import ReleaseSpec

    check = envelope(run, "check_safety")
    (ck,) = [r for r in check["results"] if r["criterion"] == "ck-safety"]
    spec = ReleaseSpec(check["release"]["sensitive"], tuple(check["release"]["group_columns"]))
    b = read_bucketization(paths["release"], spec)
    target = max_disclosure(b, int(ck["parameters"]["k"])).witness.target
    label = b.group_label(target.group)
    assert ck["witness"]["target"]["group_label"] == label
    beside = [p for p in pieces if label in p]
    assert beside, "the witness group is named"
    assert not [p for p in beside if f"'{target.value}'" in p], target.value


def test_scenarios_green_iff_published(
    airflow_home: Path,  # noqa: F811  (the fixture)
    tmp_path: Path,
    ledger_url: str,  # noqa: F811  (the fixture)
) -> None:
    out = tmp_path / "out"
    record_policy(ledger_url, "adult")
    runs, log = drive(
        airflow_home,
        SCENARIO_DAGS,
        "privacy_scenarios",
        out,
        ledger_url,
        [
            {"first_release": True},  # month 1: published
            {"first_record": 500, "audit_datasets": ["adlut"]},  # a typo in datasets
            {"first_record": 600, "fail_side_task": True},  # a failed side task
            {"first_record": 500, "overlap": "known", "max_pvp": 100.0},  # month 2, known overlap
            {"first_record": 700, "stale_release": True},  # a file where the release goes
        ],
    )
    month1, typo, side, month2, stale = runs
    assert green(month1) and envelope(month1, "publish")["outcome"] == "published"
    assert envelope(month1, "open_attempt")["details"]["members"] == 1000  # hashes recorded
    # a typo in the audit's datasets: the audit is bad input, the gate blocks, naming it
    assert not green(typo)
    assert typo["tasks"]["audit"] == "failed"
    assert "dataset 'adlut' is not in ledger" in log and "a typo?" in log
    reasons = envelope(typo, "publish")["reasons"]
    assert "task audit ended failed: the release depends on it" in reasons
    assert "audit: no result was recorded (its task failed or did not run)" in reasons
    # every instance of the mapped side task succeeded in the other runs: month 1 and 2 are
    # green (a mapped upstream is read per map index)
    assert month1["tasks"]["notify[0]"] == month1["tasks"]["notify[1]"] == "success"
    # an unrelated task that failed is a reason too: one instance of the mapped task
    assert not green(side)
    assert side["tasks"]["notify[0]"] == "success" and side["tasks"]["notify[1]"] == "failed"
    assert (
        "task notify ended failed (map index 1 of 2): the release depends on it"
        in envelope(side, "publish")["reasons"]
    )
    assert envelope(side, "report")["details"]["status"] == "blocked"
    # month 2, the same content as the typo run: a new attempt, the overlap known exactly
    assert green(month2)
    audit = envelope(month2, "audit")
    assert audit["details"]["overlap"] == "known" and audit["details"]["overlap_size"] == 500
    assert envelope(month2, "publish")["outcome"] == "published"
    assert ledger_state(ledger_url) == [
        ("1", "published", ["published"]),
        ("2", "published", ["blocked", "published"]),
        ("3", "blocked", ["blocked"]),
    ]
    # anonymize never writes over a file it was not asked to replace (issue 27): the task
    # fails naming it, the file is as it was, the run is red and nothing was attempted
    assert not green(stale) and stale["tasks"]["anonymize"] == "failed"
    assert "exists already: give replace to write over it" in log
    left = Path(stale["xcoms"]["prepare"]["return_value"]["release"])
    assert left.read_bytes() == b"left here by another job"
    # raw identifiers never leave the data: only keyed hashes reach the ledger
    assert "person-" not in log and "person-" not in json.dumps([r["xcoms"] for r in runs])
    assert "person-" not in "".join(api_texts(ledger_url))


def test_a_risk_limit_blocks_until_the_release_is_anonymized_to_it(
    airflow_home: Path,  # noqa: F811  (the fixture)
    tmp_path: Path,
) -> None:
    """The gate on a risk criterion: buckets of 3 records give a prosecutor risk of 1/3,
    so ``prosecutor-risk:highest=0.1`` blocks the release (red run, nothing published);
    anonymized to that limit (buckets of 10 or more), the same check passes and the run
    publishes (green)."""
    out = tmp_path / "out"
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    record_policy(url, "adult")
    limit = ["prosecutor-risk:highest=0.1"]
    runs, _ = drive(
        airflow_home,
        SCENARIO_DAGS,
        "privacy_scenarios",
        out,
        url,
        [
            {"first_release": True, "check_criteria": limit},
            {"first_release": True, "check_criteria": limit, "anonymize_criteria": limit},
        ],
    )
    blocked, published = runs
    assert not green(blocked) and blocked["tasks"]["publish"] == "failed"
    check = envelope(blocked, "check")
    assert check["safe"] is False and check["results"][0]["criterion"] == "prosecutor-risk"
    assert check["results"][0]["value"] > 0.1
    assert any("prosecutor" in r for r in envelope(blocked, "publish")["reasons"])
    assert green(published) and envelope(published, "publish")["outcome"] == "published"
    result = envelope(published, "check")["results"][0]
    assert result["safe"] is True and result["value"] <= 0.1
    assert envelope(published, "anonymize")["results"][0]["criterion"] == "prosecutor-risk"
    # re-anonymized content is a new release; the blocked one stays blocked
    assert ledger_state(url) == [("1", "blocked", ["blocked"]), ("2", "published", ["published"])]
