"""``ReleaseReportOperator`` and its extra link without Airflow's DB: the report file beside
the release (and its published copy), stored in the ledger, the UI link, the blocked path
failing after the report is written, a re-run replacing the report, atomic writes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from airflow.sdk.exceptions import AirflowFailException

from airflow_privacy.core.composition.files import read_release_file
from airflow_privacy.core.datasets import adult_release
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.providers.airflow.operators.check import run_checks
from airflow_privacy.providers.airflow.operators.report import (
    URL_KEY,
    ReleaseReportLink,
    ReleaseReportOperator,
    release_page,
    report_path,
    write_atomically,
)
from airflow_privacy.providers.airflow.sources import ReleaseRef
from airflow_privacy.providers.airflow.verdict import REPORT_KEY

GROUPS = ["age", "sex"]


class KeyedTI:
    """XComs by (task id, key), as a task instance pulls them."""

    def __init__(self, xcoms: dict[tuple[str, str], Any]) -> None:
        self.xcoms = xcoms
        self.pushed: dict[str, Any] = {}

    def xcom_push(self, key: str, value: Any) -> None:
        self.pushed[key] = value

    def xcom_pull(self, task_ids: str, key: str = "return_value") -> Any:
        return self.xcoms.get((task_ids, key))


@pytest.fixture
def ledger_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    conn = {"conn_type": "privacy_ledger", "extra": {"url": url}}
    monkeypatch.setenv("AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT", json.dumps(conn))
    monkeypatch.delenv("AIRFLOW__API__BASE_URL", raising=False)
    return url


def _release(tmp_path: Path, name: str, start: int, groups: list[str] = GROUPS) -> Path:
    """2,000 Adult records: Age in 10-year intervals and Sex (unsafe at (0.5, 3)), or
    ``groups=["age"]``: Age in 20-year intervals only (safe at (0.9, 1))."""
    path = tmp_path / "run" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    levels = {"age": 2, "sex": 0} if groups == GROUPS else {"age": 3}
    table = adult_release(levels).slice(start, 2000)
    pq.write_table(table.select([*groups, "occupation"]), path)
    return path


def _check(path: Path, c: float, k: int, groups: list[str] = GROUPS) -> dict[str, Any]:
    return run_checks(ReleaseRef(str(path)), "occupation", groups,
                      [{"name": "ck-safety", "c": c, "k": k}])  # fmt: skip


def _operator(groups: list[str] = GROUPS) -> ReleaseReportOperator:
    return ReleaseReportOperator(
        task_id="release_report",
        release="unused",
        dataset="adult",
        check_task_ids=["check_safety"],
        publish_task_id="publish",
        blocked_task_id="record_blocked",
        sensitive="occupation",
        group_columns=groups,
        c="0.7",
        k_max="3",
    )


def test_defaults_and_registration() -> None:
    op = _operator()
    assert op.trigger_rule == "all_done"
    assert [type(link) for link in op.operator_extra_links] == [ReleaseReportLink]
    assert ReleaseReportLink().name == "Privacy report"
    assert release_page(7, "") == "/privacy/releases/7"
    assert release_page(7, "https://airflow.example.org/") == (
        "https://airflow.example.org/privacy/releases/7"
    )
    assert report_path("/x/release.parquet") == Path("/x/release.parquet.report.html")


def test_published_release_gets_its_report_beside_both_copies_and_in_the_ledger(
    tmp_path: Path, ledger_url: str
) -> None:
    path = _release(tmp_path, "release.parquet", 0, ["age"])
    check = _check(path, 0.9, 1, ["age"])
    assert check["safe"]
    with ReleaseLedger(ledger_url) as ledger:
        cand = read_release_file(path, qis=["age"], sensitive="occupation")
        info = ledger.record("adult", cand.release, status="published")
    published = tmp_path / "published" / "release.parquet"
    ti = KeyedTI({
        ("check_safety", REPORT_KEY): check,
        ("publish", "return_value"): {"published": str(published), "release_id": info.id,
                                      "status": "published"},
    })  # fmt: skip
    op = _operator(["age"])
    op.release = str(path)
    result = op.execute({"ti": ti})
    url = f"/privacy/releases/{info.id}"
    report = str(report_path(path))
    assert result == {"release_id": info.id, "status": "published", "report": report, "url": url}
    assert ti.pushed[URL_KEY] == f"/privacy/releases/{info.id}"
    html = report_path(path).read_text()
    assert html.lstrip().lower().startswith("<!doctype html") and "<svg" in html
    assert report_path(published).read_text() == html  # beside the published copy too
    with ReleaseLedger(ledger_url) as ledger:
        stored = ledger.report(info.id)
    assert stored is not None
    assert json.dumps(stored).count("published") >= 1
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_blocked_release_report_leads_with_the_reason_and_the_task_fails(
    tmp_path: Path, ledger_url: str
) -> None:
    path = _release(tmp_path, "release.parquet", 2000)
    check = _check(path, 0.5, 3)
    assert not check["safe"]
    reason = check["reasons"][0]
    with ReleaseLedger(ledger_url) as ledger:
        cand = read_release_file(path, qis=GROUPS, sensitive="occupation")
        info = ledger.record("adult", cand.release, status="blocked", reasons=[reason])
    ti = KeyedTI({
        ("check_safety", REPORT_KEY): check,
        ("record_blocked", "return_value"): {"status": "blocked", "release_id": info.id,
                                             "reasons": [reason]},
    })  # fmt: skip
    op = _operator()
    op.release = str(path)
    with pytest.raises(AirflowFailException, match=r"BLOCKED .*nothing was published"):
        op.execute({"ti": ti})
    assert ti.pushed[URL_KEY] == f"/privacy/releases/{info.id}"  # the link works anyway
    html = report_path(path).read_text()
    body = html.split("<body", 1)[1]
    import html as html_mod

    where = body.find(html_mod.escape(reason[:60], quote=True))
    assert 0 < where < body.find("<svg"), "the reason comes before the plots"
    with ReleaseLedger(ledger_url) as ledger:
        first = ledger.report(info.id)
        first_time = ledger.report_times()[info.id]
    assert first is not None

    # a re-run replaces the stored report and the file (one report per release)
    os.utime(report_path(path), (0, 0))
    with pytest.raises(AirflowFailException):
        op.execute({"ti": ti})
    assert report_path(path).stat().st_mtime > 0
    with ReleaseLedger(ledger_url) as ledger:
        assert set(ledger.report_times()) == {info.id}
        assert ledger.report_times()[info.id] >= first_time


def test_blocked_but_not_failing_when_asked(tmp_path: Path, ledger_url: str) -> None:
    path = _release(tmp_path, "release.parquet", 2000)
    check = _check(path, 0.5, 3)
    ti = KeyedTI({("check_safety", REPORT_KEY): check})  # nothing recorded in the ledger
    op = _operator()
    op.release = str(path)
    op.fail_on_blocked = False
    result = op.execute({"ti": ti})
    assert result["status"] == "blocked" and result["release_id"] is None
    assert result["url"].startswith("file://") and report_path(path).is_file()
    with ReleaseLedger(ledger_url) as ledger:
        assert ledger.list() == []  # the report task never records a release itself


def test_no_release_file_fails_with_the_reason(tmp_path: Path, ledger_url: str) -> None:
    op = _operator()
    op.release = str(tmp_path / "never-written.parquet")
    with pytest.raises(AirflowFailException, match="was not produced"):
        op.execute({"ti": KeyedTI({})})


def test_link_reads_the_url_the_task_pushed(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.sdk.execution_time import xcom

    seen: dict[str, Any] = {}

    def get_value(*, ti_key: Any, key: str) -> Any:
        seen["key"] = key
        return "/privacy/releases/3" if ti_key == "ti-with-report" else None

    monkeypatch.setattr(xcom.XCom, "get_value", get_value)
    link = ReleaseReportLink()
    assert link.get_link(_operator(), ti_key="ti-with-report") == "/privacy/releases/3"  # type: ignore[arg-type]
    assert seen["key"] == URL_KEY
    assert link.get_link(_operator(), ti_key="other") == ""  # type: ignore[arg-type]


def test_write_atomically_keeps_the_old_file_when_a_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "r.report.html"
    write_atomically(target, "old")

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_atomically(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.report.html"]  # no temporary left
