"""The sample release DAG end to end, through ``airflow dags test`` (as a user runs it).

One migrated Airflow metadata DB (SQLite) is shared by the module; each scenario gets a fresh
ledger. Paths: publish; overlapping release blocked by the composition audit; (c,k)-unsafe
release blocked by the check (publish never runs, the ledger says why, witness included);
bad input (a missing column) fails without recording anything. The publish/composition
scenario also runs with the ledger on a real PostgreSQL server.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.ledger import ReleaseLedger
from tests.conftest_pg import pg_server, pg_url  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parents[2]
DAG_FILE = ROOT / "dags" / "privacy_release.py"
AIRFLOW = str(Path(sys.executable).with_name("airflow"))


@pytest.fixture(scope="module")
def airflow_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("airflow-home")
    proc = subprocess.run([AIRFLOW, "db", "migrate"], env=_env(home, {}), capture_output=True,
                          text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    yield home


def _env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(DAG_FILE.parent),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        }
    )
    env.update(extra)
    return env


def _trigger(home: Path, out: Path, ledger_url: str, conf: dict[str, Any]) -> tuple[int, str]:
    conn = {"conn_type": "privacy_ledger", "extra": {"url": ledger_url}}
    env = _env(home, {"AIRFLOW_PRIVACY_OUTPUT_DIR": str(out),
                      "AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT": json.dumps(conn)})  # fmt: skip
    cmd = [AIRFLOW, "dags", "test", "privacy_release", "-c", json.dumps(conf)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def _ledger(url: str) -> list[Any]:
    with ReleaseLedger(url) as ledger:
        return ledger.list()


def test_dag_imports_with_the_expected_tasks_and_params() -> None:
    spec = importlib.util.spec_from_file_location("privacy_release_dag", DAG_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    dag = module.dag
    assert dag.dag_id == "privacy_release"
    assert set(dag.task_ids) == {
        "prepare_input", "anonymize", "check_safety", "maxent_risk", "composition_audit",
        "validate_release", "publish", "record_blocked", "release_report",
    }  # fmt: skip
    for name in ("c", "k", "max_pvp", "maxent_threshold", "k_anonymity"):
        assert name in dag.params
    assert dag.get_task("record_blocked").trigger_rule == "one_failed"
    assert dag.get_task("publish").upstream_task_ids == {"validate_release"}
    report = dag.get_task("release_report")
    assert report.trigger_rule == "all_done"
    assert report.upstream_task_ids == {"publish", "record_blocked"}
    assert not report.downstream_task_ids  # the last task, on both paths
    assert [link.name for link in report.operator_extra_links] == ["Privacy report"]


def _reports(out: Path) -> list[Path]:
    """The runs' HTML reports beside their releases, oldest first."""
    found = [p for p in out.glob("adult/*/release.parquet.report.html")
             if p.parent.name != "published"]  # fmt: skip
    return sorted(found, key=lambda p: p.stat().st_mtime)


def _stored_report(url: str, release_id: int) -> dict[str, Any]:
    with ReleaseLedger(url) as ledger:
        stored = ledger.report(release_id)
    assert stored is not None, f"release #{release_id} has no report in the ledger"
    return stored


def _before_plots(html: str, text: str) -> bool:
    import html as html_mod

    body = html.split("<body", 1)[1]
    where = body.find(html_mod.escape(text, quote=True))
    return 0 < where < body.find("<svg")


def _publish_then_block(home: Path, out: Path, url: str) -> None:
    code, log = _trigger(home, out, url, {})
    assert code == 0, log[-3000:]
    first = _ledger(url)
    assert [(r.dataset, r.status) for r in first] == [("adult", "published")]
    assert (out / "adult" / "published" / "release.parquet").exists()
    (report1,) = _reports(out)  # next to the release
    assert "<svg" in report1.read_text()
    assert (out / "adult" / "published" / "release.parquet.report.html").read_text() == (
        report1.read_text()
    )
    assert "published" in json.dumps(_stored_report(url, first[0].id))

    code, log = _trigger(home, out, url, {"first_record": 10000})
    assert code != 0
    assert f"Report: {out}" in log  # the report task says where the report is
    releases = _ledger(url)
    assert [r.status for r in releases] == ["published", "blocked"]
    reasons = " ".join(releases[1].reasons)
    assert "pinned to their sensitive value" in reasons and "Worst:" in reasons
    published = sorted(p.name for p in (out / "adult" / "published").iterdir())
    assert published == [
        "release.parquet", "release.parquet.manifest.json", "release.parquet.report.html"
    ]  # nothing new  # fmt: skip
    # both releases have a report: in the ledger and as a file beside each run's release
    assert len(_reports(out)) == 2
    stored = _stored_report(url, releases[1].id)
    lead = releases[1].reasons[0].split("Worst:")[0][:60]  # the report redacts who is worst
    assert lead in json.dumps(stored, ensure_ascii=False)
    blocked_html = _reports(out)[1].read_text()
    assert _before_plots(blocked_html, lead)  # leads with the reason
    assert _stored_report(url, releases[0].id) != stored


def test_publish_then_overlapping_release_is_blocked_sqlite(
    airflow_home: Path, tmp_path: Path
) -> None:
    _publish_then_block(airflow_home, tmp_path / "out", f"sqlite:///{tmp_path / 'ledger.db'}")


def test_publish_then_overlapping_release_is_blocked_postgres(
    airflow_home: Path,
    tmp_path: Path,
    pg_url: str,  # noqa: F811
) -> None:
    _publish_then_block(airflow_home, tmp_path / "out", pg_url)


def test_ck_unsafe_release_is_blocked_with_the_witness(airflow_home: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    code, log = _trigger(airflow_home, tmp_path / "out", url, {"check_k": 12})
    assert code != 0
    assert "release blocked by CheckSafetyOperator" in log
    releases = _ledger(url)
    assert [r.status for r in releases] == ["blocked"]
    reasons = " ".join(releases[0].reasons)
    assert reasons.startswith("ck-safety:") and "an adversary who knows that" in reasons
    assert not (tmp_path / "out" / "adult" / "published").exists()  # publish never ran
    (report,) = _reports(tmp_path / "out")
    assert _before_plots(report.read_text(), releases[0].reasons[0][:60])
    assert _stored_report(url, releases[0].id)


def test_bad_input_fails_and_records_nothing(airflow_home: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    code, log = _trigger(airflow_home, tmp_path / "out", url, {"sensitive": "diagnosis"})
    assert code != 0
    assert "bad input: " in log and "'diagnosis'" in log
    assert _ledger(url) == []
    assert "no release report: the release" in log  # the report task says why there is none
