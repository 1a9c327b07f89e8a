"""``ReleaseReportOperator``: the release report a privacy officer reads, at the end of a DAG.

It runs whatever happened upstream (``trigger_rule="all_done"``): it gathers the
``privacy_report`` XComs of the checks (:mod:`.verdict`), the final status from the ledger
(published, or blocked with every reason), builds the report with
:func:`airflow_privacy.report.build_release_report`, writes ``<release>.report.html`` next to
the release (and next to its published copy) atomically, and stores the report in the ledger
beside the release record, where the plugin's UI page (``/privacy/releases/<id>``) shows it.
The task carries an operator extra link, "Privacy report", to that page.

A blocked release fails this task too (after the report is written), so the DAG run still
says that nothing was published.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator, BaseOperatorLink

from airflow_privacy.errors import InputError
from airflow_privacy.providers.airflow.hooks.ledger import DEFAULT_CONN_ID, PrivacyLedgerHook
from airflow_privacy.providers.airflow.verdict import REPORT_KEY, coerce, fail_on_input_error

if TYPE_CHECKING:
    from airflow.sdk.types import TaskInstanceKey

URL_KEY = "privacy_report_url"
UI_PREFIX = "/privacy"


def report_path(release: str | Path) -> Path:
    """Where the HTML report of ``release`` goes: ``<release>.report.html`` beside it."""
    return Path(f"{release}.report.html")


def release_page(release_id: int, base_url: str | None = None) -> str:
    """The plugin's page of a release: ``{[api] base_url}/privacy/releases/<id>`` (a path
    from the server root when ``base_url`` is not configured)."""
    if base_url is None:
        from airflow.sdk.configuration import conf

        base_url = conf.get("api", "base_url", fallback="") or ""
    return f"{base_url.rstrip('/')}{UI_PREFIX}/releases/{int(release_id)}"


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename:
    a reader sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class ReleaseReportLink(BaseOperatorLink):
    """The "Privacy report" button of a :class:`ReleaseReportOperator` task: the plugin's page
    of the release. The operator pushes the URL to XCom (key ``privacy_report_url``); Airflow
    3 stores what this returns when the task finishes and the UI reads it from there."""

    name = "Privacy report"

    def get_link(self, operator: BaseOperator, *, ti_key: TaskInstanceKey) -> str:
        from airflow.sdk.execution_time.xcom import XCom

        url = XCom.get_value(ti_key=ti_key, key=URL_KEY)
        return str(url) if url else ""


class ReleaseReportOperator(BaseOperator):
    """Build, write and store the release report; link the task to the release's UI page.

    :param release: the release file (CSV/Parquet) the DAG produced
    :param dataset: the dataset name in the ledger
    :param check_task_ids: the tasks whose ``privacy_report`` XComs go into the report
    :param publish_task_id: the publishing task (its return value names the ledger record)
    :param blocked_task_id: the task that records a blocked release (ditto)
    :param sensitive: / :param group_columns: the release's sensitive column and the
        columns defining its groups (default: from its manifest)
    :param c: the confidence of the disclosure curve; :param k_max: its largest k;
        :param skyline_c: the confidence of the skyline staircase (defaults: the report's)
    :param fail_on_blocked: fail this task, after writing the report, when the release was
        blocked (default True: the DAG run then says nothing was published)

    Returns (XCom) ``{"release_id", "status", "report": path, "url": UI page}``.
    """

    template_fields: Sequence[str] = (
        "release",
        "dataset",
        "sensitive",
        "group_columns",
        "c",
        "k_max",
        "skyline_c",
    )
    operator_extra_links = (ReleaseReportLink(),)
    ui_color = "#f3efe2"

    def __init__(
        self,
        *,
        release: str,
        dataset: str,
        check_task_ids: Sequence[str] = (),
        publish_task_id: str | None = None,
        blocked_task_id: str | None = None,
        sensitive: str | None = None,
        group_columns: Sequence[str] | None = None,
        c: float | str | None = None,
        k_max: int | str | None = None,
        skyline_c: float | str | None = None,
        fail_on_blocked: bool = True,
        privacy_ledger_conn_id: str = DEFAULT_CONN_ID,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("trigger_rule", "all_done")
        super().__init__(**kwargs)
        self.release = release
        self.dataset = dataset
        self.check_task_ids = list(check_task_ids)
        self.publish_task_id = publish_task_id
        self.blocked_task_id = blocked_task_id
        self.sensitive = sensitive
        self.group_columns = list(group_columns) if group_columns else None
        self.c = c
        self.k_max = k_max
        self.skyline_c = skyline_c
        self.fail_on_blocked = fail_on_blocked
        self.privacy_ledger_conn_id = privacy_ledger_conn_id

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow.sdk.exceptions import AirflowFailException

        ti = context["ti"]
        checks = self._checks(ti)
        outcomes = [
            ti.xcom_pull(task_ids=t) for t in (self.publish_task_id, self.blocked_task_id) if t
        ]
        src = Path(self.release)
        if not src.is_file():
            raise AirflowFailException(
                f"no release report: the release {self.release!r} was not produced "
                "(an upstream task failed before writing it; see its log)"
            )
        try:
            result = self._report(src, checks, [o for o in outcomes if isinstance(o, dict)])
        except InputError as exc:
            raise fail_on_input_error(exc) from exc
        ti.xcom_push(key=URL_KEY, value=result["url"])
        self.log.info("release report: %s (UI: %s)", result["report"], result["url"])
        if result["status"] == "blocked" and self.fail_on_blocked:
            reasons = "; ".join(result["reasons"]) or "no reason recorded"
            raise AirflowFailException(
                f"release {result['name']} was BLOCKED ({reasons}); nothing was published. "
                f"Report: {result['report']}"
            )
        return {k: result[k] for k in ("release_id", "status", "report", "url")}

    def _checks(self, ti: Any) -> dict[str, dict[str, Any]]:
        checks: dict[str, dict[str, Any]] = {}
        for task_id in self.check_task_ids:
            report = ti.xcom_pull(task_ids=task_id, key=REPORT_KEY)
            if isinstance(report, dict):
                checks[task_id] = report
        return checks

    def _report(
        self, src: Path, checks: Mapping[str, dict[str, Any]], outcomes: list[dict[str, Any]]
    ) -> dict[str, Any]:
        from airflow_privacy.report import build_release_report, render_html

        release_id = _release_id(outcomes, checks)
        published = [Path(o["published"]) for o in outcomes if o.get("published")]
        with PrivacyLedgerHook(self.privacy_ledger_conn_id).get_conn() as ledger:
            if release_id is not None:
                info = ledger.info(release_id)
                status, reasons, version = info.status, list(info.reasons), info.version
            else:  # nothing was recorded: say so, with what the checks said
                version = None
                unsafe = [c for c in checks.values() if not c.get("safe", True)]
                status = "blocked" if unsafe else "checked"
                reasons = [str(r) for c in unsafe for r in c.get("reasons") or []]
            report = build_release_report(
                str(src),
                sensitive=self.sensitive or None,
                group_columns=self.group_columns or None,
                dataset=self.dataset,
                version=version,
                release_id=release_id,
                status=status,
                reasons=reasons,
                checks=dict(checks),
                c=_number(self.c),
                k_max=_int(self.k_max),
                skyline_c=_number(self.skyline_c),
                progress=lambda msg: self.log.info("%s", msg),
            )
            html = render_html(report)
            out = report_path(src)
            write_atomically(out, html)
            for copy in published:
                write_atomically(report_path(copy), html)
            if release_id is not None:
                ledger.attach_report(release_id, report.to_dict())
        name = f"{self.dataset} v{version}" if version else self.dataset
        url = release_page(release_id) if release_id is not None else out.as_uri()
        return {"release_id": release_id, "status": status, "reasons": reasons,
                "report": str(out), "url": url, "name": name}  # fmt: skip


def _release_id(outcomes: list[dict[str, Any]], checks: Mapping[str, dict[str, Any]]) -> int | None:
    """The ledger record: from the publish / record-blocked result, else the audit's."""
    for source in (*outcomes, *checks.values()):
        rid = source.get("release_id")
        if rid not in (None, "", "None"):
            return int(rid)
    return None


def _number(value: Any) -> float | None:
    if value in (None, "", "None"):
        return None
    return float(coerce(value))


def _int(value: Any) -> int | None:
    if value in (None, "", "None"):
        return None
    return int(coerce(value))
