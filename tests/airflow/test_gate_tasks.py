"""The gate's and the report's tasks, without Airflow's database: the upstream states the gate
reads (mapped tasks included, as Airflow's execution API keys them), the report's arguments,
and a report task that is not a teardown failing a run that did not publish (fail closed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pendulum
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from airflow.sdk import DAG, task
from airflow.sdk.exceptions import AirflowFailException

from airflow_privacy.core.composition.files import read_release_file
from airflow_privacy.errors import InputError
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.providers.airflow.adapter import REPORT_KEY
from airflow_privacy.providers.airflow.operators.publish import (
    PublishReleaseOperator,
    failed_upstream,
)
from airflow_privacy.providers.airflow.operators.report import (
    ReleaseReportOperator,
    release_page,
)
from tests.ledger.support import DIGEST, gate_rules

ROOT = Path(__file__).resolve().parents[2]
FIG3 = [("M", "Flu"), ("M", "Lung Cancer"), ("M", "Mumps"), ("M", "Flu"), ("M", "Lung Cancer"),
        ("F", "Flu"), ("F", "Breast Cancer"), ("F", "Flu"), ("F", "Heart Disease"),
        ("F", "Ovarian Cancer")]  # fmt: skip


class StatesTI:
    """A task instance whose ``get_task_states`` answers as Airflow 3.3's execution API does
    (``routes/task_instances.py``, ``get_task_instance_states``): a mapped task instance is
    keyed ``f"{task_id}_{map_index}"``, an unmapped one by its task id."""

    dag_id, run_id, task_id, try_number = "t", "manual__1", "publish", 1

    def __init__(self, tis: list[tuple[str, int, str | None]] | None = None) -> None:
        self.tis = tis or []
        self.calls: list[list[str]] = []
        self.pushed: dict[str, Any] = {}

    def get_task_states(
        self,
        dag_id: str,
        map_index: int | None = None,
        task_ids: list[str] | None = None,
        task_group_id: str | None = None,
        logical_dates: list[Any] | None = None,
        run_ids: list[str] | None = None,
    ) -> dict[str, Any]:
        assert dag_id == self.dag_id and run_ids == [self.run_id]
        self.calls.append(list(task_ids or []))
        found: dict[str, Any] = {}
        for tid, index, state in self.tis:
            if task_ids and tid not in task_ids:
                continue
            found[tid if index < 0 else f"{tid}_{index}"] = state
        return {self.run_id: found} if found else {}

    def xcom_push(self, key: str, value: Any) -> None:
        self.pushed[key] = value

    def xcom_pull(self, task_ids: str, key: str = "return_value") -> Any:
        return None


def _dag_with_mapped_side_task(extra: str | None = None) -> PublishReleaseOperator:
    with DAG("t", schedule=None, start_date=pendulum.datetime(2026, 1, 1)):

        @task
        def side(x: int) -> int:
            return x

        gate = PublishReleaseOperator(
            task_id="publish", attempt="u", release="r.parquet", publish_to="pub"
        )
        side.expand(x=[1, 2, 3]) >> gate
        if extra:

            @task(task_id=extra)
            def other() -> None:
                return None

            other() >> gate
    return gate


# ------------------------------------------------------------------ the states the gate reads
def test_a_mapped_upstream_whose_instances_all_succeeded_does_not_block() -> None:
    gate = _dag_with_mapped_side_task()
    ti = StatesTI([("side", 0, "success"), ("side", 1, "success"), ("side", 2, "success")])
    assert failed_upstream(gate, {"ti": ti}) == {}


def test_every_map_index_must_succeed() -> None:
    gate = _dag_with_mapped_side_task()
    ti = StatesTI([("side", 0, "success"), ("side", 1, "failed"), ("side", 2, "upstream_failed")])
    assert failed_upstream(gate, {"ti": ti}) == {
        "side": "failed (map index 1 of 3), upstream_failed (map index 2 of 3)"
    }
    ti = StatesTI([("side", 0, "failed"), ("side", 1, "failed"), ("side", 2, "success")])
    assert failed_upstream(gate, {"ti": ti}) == {"side": "failed (map indexes 0, 1 of 3)"}


def test_a_mapped_upstream_over_nothing_blocks() -> None:
    """Expanded over no value, Airflow marks the unmapped instance skipped: nothing was done,
    which is not a success (conservative). Without any instance: not run."""
    gate = _dag_with_mapped_side_task()
    assert failed_upstream(gate, {"ti": StatesTI([("side", -1, "skipped")])}) == {"side": "skipped"}
    assert failed_upstream(gate, {"ti": StatesTI([])}) == {"side": "not run"}
    # not yet expanded (its own upstream failed): the unmapped instance's state
    assert failed_upstream(gate, {"ti": StatesTI([("side", -1, "upstream_failed")])}) == {
        "side": "upstream_failed"
    }


def test_a_task_named_like_a_map_index_is_not_confused_with_one() -> None:
    """``side_1`` (a task) and ``side`` index 1 share a key in the API's answer: such tasks
    are asked about one at a time."""
    gate = _dag_with_mapped_side_task(extra="side_1")
    ti = StatesTI(
        [("side", 0, "success"), ("side", 1, "success"), ("side", 2, "success"),
         ("side_1", -1, "failed")]
    )  # fmt: skip
    assert failed_upstream(gate, {"ti": ti}) == {"side_1": "failed"}
    assert sorted(map(sorted, ti.calls)) == [["side"], ["side_1"]]
    ti = StatesTI(
        [("side", 0, "success"), ("side", 1, "failed"), ("side", 2, "success"),
         ("side_1", -1, "success")]
    )  # fmt: skip
    assert failed_upstream(gate, {"ti": ti}) == {"side": "failed (map index 1 of 3)"}


def test_unmapped_upstreams_are_read_in_one_call() -> None:
    with DAG("t", schedule=None, start_date=pendulum.datetime(2026, 1, 1)):
        a = PublishReleaseOperator(task_id="a", attempt="u", release="r", publish_to="p")
        b = PublishReleaseOperator(task_id="b", attempt="u", release="r", publish_to="p")
        gate = PublishReleaseOperator(task_id="publish", attempt="u", release="r", publish_to="p")
        a >> b >> gate
    ti = StatesTI([("a", -1, "success"), ("b", -1, "skipped")])
    assert failed_upstream(gate, {"ti": ti}) == {"b": "skipped"}
    assert ti.calls == [["a", "b"]]


# ------------------------------------------------------------------------ the report's task
def test_the_report_needs_an_attempt_argument() -> None:
    with pytest.raises(InputError, match="give attempt or attempt_task_id") as info:
        ReleaseReportOperator(task_id="report", release="r.parquet")
    assert "--" not in str(info.value)
    with pytest.raises(InputError, match="not both"):
        ReleaseReportOperator(task_id="report", release="r", attempt="a", attempt_task_id="b")


def _report_op(teardown: bool, **kwargs: Any) -> ReleaseReportOperator:
    with DAG("t", schedule=None, start_date=pendulum.datetime(2026, 1, 1)):
        op = ReleaseReportOperator(task_id="report", **kwargs)
        if teardown:
            op.as_teardown()
    return op


def test_a_report_fails_when_nothing_was_opened(tmp_path: Path) -> None:
    args = {"attempt_task_id": "open_attempt", "release": str(tmp_path / "r.parquet")}
    ti = StatesTI()
    with pytest.raises(AirflowFailException, match="the release was not published") as info:
        _report_op(False, **args).execute({"ti": ti})
    assert "no attempt was opened" in str(info.value)
    assert ti.pushed[REPORT_KEY]["outcome"] == "not-published"  # the envelope is still there
    # as a teardown it fails too, and its failure fails the run (the ledger decides it)
    ti = StatesTI()
    teardown = _report_op(True, **args)
    assert teardown.is_teardown and teardown.on_failure_fail_dagrun
    with pytest.raises(AirflowFailException, match="the release was not published"):
        teardown.execute({"ti": ti})
    assert ti.pushed[REPORT_KEY]["outcome"] == "not-published"


def _blocked_attempt(tmp_path: Path, url: str) -> tuple[str, Path]:
    path = tmp_path / "fig3.parquet"
    pq.write_table(pa.table({"sex": [s for s, _ in FIG3], "disease": [d for _, d in FIG3]}), path)
    release = read_release_file(path, qis=["sex"], sensitive="disease").release
    with ReleaseLedger(url) as db:
        a = db.open_attempt(
            "clinic", release, required=["check"], first_release=True, content_digest=DIGEST,
            origin={"front_end": "airflow", "dag_id": "t", "run_id": "manual__1"},  # StatesTI's
        )  # fmt: skip
        db.record_check(a.uuid, name="check", step="check", safe=False, outcome="failed",
                        envelope={"step": "check", "name": "check", "outcome": "failed",
                                  "safe": False, "summary": "k-anonymity: 1 < 3",
                                  "reasons": ["k-anonymity: smallest group 1 < 3"]},
                        content_digest=DIGEST)  # fmt: skip
        assert db.decide(a.uuid, rules=gate_rules).status == "blocked"
    return a.uuid, path


def test_a_report_fails_a_blocked_release_teardown_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    monkeypatch.setenv(
        "AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT",
        json.dumps({"conn_type": "privacyledger", "extra": {"url": url}}),
    )
    attempt, path = _blocked_attempt(tmp_path, url)
    args = {"attempt": attempt, "release": str(path), "sensitive": "disease",
            "group_columns": ["sex"], "k_max": 2}  # fmt: skip
    ti = StatesTI()
    with pytest.raises(AirflowFailException, match="the release was not published") as info:
        _report_op(False, **args).execute({"ti": ti})
    assert "(blocked)" in str(info.value) and "smallest group 1 < 3" in str(info.value)
    # the report was written, stored and linked before the task failed
    assert (tmp_path / "fig3.parquet.report.html").exists()
    assert ti.pushed[REPORT_KEY]["details"]["status"] == "blocked"
    assert ti.pushed["privacy_report_url"].endswith("/privacy/attempts/" + ti.pushed[REPORT_KEY]
                                                    ["attempt"]["uuid"])  # fmt: skip
    with ReleaseLedger(url, create=False) as db:
        (info_,) = db.list()
        assert db.report(info_.id) is not None
    ti = StatesTI()
    with pytest.raises(AirflowFailException, match=r"not published \(blocked\)"):
        _report_op(True, **args).execute({"ti": ti})  # a teardown reports and fails the run
    assert ti.pushed[REPORT_KEY]["details"]["status"] == "blocked"


# ------------------------------------------------------------------------- the page's path
def test_the_report_links_under_the_plugins_one_prefix_without_importing_fastapi() -> None:
    from airflow_privacy.providers.airflow import plugin
    from airflow_privacy.providers.airflow.operators import report

    assert release_page("abc", base_url="http://x/") == f"http://x{plugin.URL_PREFIX}/releases/abc"
    assert not hasattr(report, "UI_PREFIX")  # one constant, the plugin's
    assert plugin.EXTERNAL_VIEW["href"] == plugin.URL_PREFIX.lstrip("/") + "/"
    code = (
        "import sys\n"
        "import airflow_privacy.providers.airflow.operators.report as r\n"
        "assert r.release_page('u', '') == '/privacy/releases/u'\n"
        "assert r.attempt_page('a', '') == '/privacy/attempts/a'\n"
        "assert r.run_tab('d', 'manual__1+0:00', '') == "
        "'/dags/d/runs/manual__1%2B0%3A00/plugin/privacy-report'\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('fastapi', 'starlette')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"  # DAG parsing does not load the API server's stack
