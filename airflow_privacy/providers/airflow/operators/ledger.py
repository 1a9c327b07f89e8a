"""The last step of a release DAG: publish and record, or record as blocked.

``PublishReleaseOperator`` copies the release (and its manifest) to where it is published
and marks it published in the ledger. ``RecordBlockedReleaseOperator`` runs when an
upstream check failed (``trigger_rule="one_failed"``): it gathers every failed check's
reasons from XCom (key ``privacy_report``) and records the release as blocked, so the ledger
says why nothing was published.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from airflow.sdk import BaseOperator

from airflow_privacy.errors import InputError
from airflow_privacy.providers.airflow.hooks.ledger import DEFAULT_CONN_ID, PrivacyLedgerHook
from airflow_privacy.providers.airflow.verdict import REPORT_KEY, coerce, fail_on_input_error


def _manifest(release: str) -> Path:
    return Path(f"{release}.manifest.json")


def _copy_atomically(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    shutil.copyfile(src, tmp)
    tmp.replace(dst)


class PublishReleaseOperator(BaseOperator):
    """Publish a release that passed every check, and record it as published.

    :param release: the release file (its manifest beside it is published too)
    :param publish_to: the folder it is published to
    :param dataset: the dataset name in the ledger
    :param release_id: the ledger id of the candidate (e.g. from the composition audit's
        report); without it the release is recorded now, as published
    :param version: version label when recording
    """

    template_fields: Sequence[str] = ("release", "publish_to", "dataset", "release_id", "version")

    def __init__(
        self,
        *,
        release: str,
        publish_to: str,
        dataset: str,
        release_id: int | str | None = None,
        version: str | None = None,
        privacy_ledger_conn_id: str = DEFAULT_CONN_ID,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.release = release
        self.publish_to = publish_to
        self.dataset = dataset
        self.release_id = release_id
        self.version = version
        self.privacy_ledger_conn_id = privacy_ledger_conn_id

    def execute(self, context: Any) -> dict[str, Any]:
        try:
            return self._run()
        except InputError as exc:
            raise fail_on_input_error(exc) from exc

    def _run(self) -> dict[str, Any]:
        from airflow_privacy.core.composition.files import read_release_file

        src = Path(self.release)
        if not src.is_file():
            raise InputError(f"release {self.release!r} does not exist")
        release_id = coerce(self.release_id) if self.release_id not in (None, "", "None") else None
        with PrivacyLedgerHook(self.privacy_ledger_conn_id).get_conn() as ledger:
            if release_id is None:
                cand = read_release_file(src)
                info = ledger.record(
                    self.dataset,
                    cand.release,
                    version=self.version or None,
                    status="published",
                    spec=cand.spec(),
                    manifest=cand.manifest,
                    criteria=(cand.manifest or {}).get("criteria_results"),
                )
            else:
                info = ledger.mark_published(int(release_id))
            # the ledger says published only once the files are in place
            dst_dir = Path(self.publish_to)
            _copy_atomically(src, dst_dir / src.name)
            if _manifest(str(src)).is_file():
                _copy_atomically(_manifest(str(src)), dst_dir / _manifest(src.name).name)
        self.log.info("published %s to %s as release #%d of %s", src.name, dst_dir,
                      info.id, self.dataset)  # fmt: skip
        return {"published": str(dst_dir / src.name), "release_id": info.id, "status": info.status}


class RecordBlockedReleaseOperator(BaseOperator):
    """Record the release as blocked with the reasons of every failed upstream check.

    Use with ``trigger_rule="one_failed"`` downstream of the checks. The reasons come from
    the ``privacy_report`` XCom the checks push before failing (``check_task_ids``); a task
    that failed without a report (a data error) is named with its state.

    :param release: the release file, if it was produced
    :param dataset: the dataset name in the ledger
    :param check_task_ids: the checks whose reports to collect
    :param audit_task_id: the composition audit, whose report may hold the candidate's
        ledger id (then that record is marked blocked instead of recording a new one)
    """

    template_fields: Sequence[str] = ("release", "dataset", "version")

    def __init__(
        self,
        *,
        release: str,
        dataset: str,
        check_task_ids: Sequence[str],
        audit_task_id: str | None = None,
        version: str | None = None,
        privacy_ledger_conn_id: str = DEFAULT_CONN_ID,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("trigger_rule", "one_failed")
        super().__init__(**kwargs)
        self.release = release
        self.dataset = dataset
        self.check_task_ids = list(check_task_ids)
        self.audit_task_id = audit_task_id
        self.version = version
        self.privacy_ledger_conn_id = privacy_ledger_conn_id

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.core.composition.files import read_release_file

        ti = context["ti"]
        reasons: list[str] = []
        release_id: int | None = None
        for task_id in self.check_task_ids:
            report = ti.xcom_pull(task_ids=task_id, key=REPORT_KEY)
            if isinstance(report, dict):
                if not report.get("safe", True):
                    reasons.extend(str(r) for r in report.get("reasons") or [f"{task_id} failed"])
                if task_id == self.audit_task_id and report.get("release_id") is not None:
                    release_id = int(report["release_id"])
        if not reasons:
            reasons = [
                "an upstream task failed before reporting a verdict (a data error or a crash; "
                "see the task logs)"
            ]
        for reason in reasons:
            self.log.warning("blocked: %s", reason)
        src = Path(self.release)
        with PrivacyLedgerHook(self.privacy_ledger_conn_id).get_conn() as ledger:
            if release_id is not None:
                current = ledger.info(release_id)
                new = [r for r in reasons if not any(r.endswith(a) for a in current.reasons)]
                if new or current.status != "blocked":
                    info = ledger.mark_blocked(release_id, new or reasons)
                else:  # the audit already recorded exactly these reasons
                    info = current
            elif src.is_file():
                cand = read_release_file(src)
                info = ledger.record(
                    self.dataset,
                    cand.release,
                    version=self.version or None,
                    status="blocked",
                    spec=cand.spec(),
                    manifest=cand.manifest,
                    criteria=(cand.manifest or {}).get("criteria_results"),
                    reasons=reasons,
                )
            else:
                self.log.warning("no release was produced, so none is recorded")
                return {"status": "blocked", "release_id": None, "reasons": reasons}
        self.log.warning("release #%d of %s recorded as BLOCKED; nothing was published",
                         info.id, self.dataset)  # fmt: skip
        return {"status": info.status, "release_id": info.id, "reasons": reasons}
