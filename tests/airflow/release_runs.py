"""Running DAGs of the provider through ``dag.test`` for the tests (a migrated Airflow home,
the ledger on SQLite or PostgreSQL, the runs driven by :mod:`tests.airflow.dag_driver`), and
reading what they did: shared by the DAG tests (``tests/airflow/test_*_dag.py``)."""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from airflow_privacy.cli import main
from airflow_privacy.ledger import ReleaseLedger
from tests.airflow.metadata_db import migrated_home

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DAGS = ROOT / "dags"
SCENARIO_DAGS = Path(__file__).resolve().parent / "dags"
KEY = "tests-only-key-0123456789abcdefghijklmnopqrstuv"


@pytest.fixture(scope="module")
def airflow_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = migrated_home(tmp_path_factory.mktemp("airflow-home"))
    yield home
    _Driver.stop_home(home)  # the module's DAG driver processes


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        url: str = request.getfixturevalue("pg_url")
        return url
    return f"sqlite:///{tmp_path / 'ledger.db'}"


def _env(home: Path, dags: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW_PRIVACY_LEDGER_KEY": KEY,
            "PYTHONPATH": str(ROOT),
        }
    )
    return env


def drive(
    home: Path,
    dags: Path,
    dag_id: str,
    out: Path,
    ledger: str,
    confs: list[dict[str, Any]],
    extra_env: dict[str, str] | None = None,
) -> tuple[list[dict[str, Any]], str]:
    """Run ``confs`` one after the other in the DAG driver of ``home`` and ``dags`` (one
    process, kept for the module's later runs: :mod:`tests.airflow.dag_driver`); each run's
    result and all output."""
    conn = json.dumps({"conn_type": "privacyledger", "extra": {"url": ledger}})
    item_env = {"AIRFLOW_PRIVACY_OUTPUT_DIR": str(out), "AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT": conn,
                **(extra_env or {})}  # fmt: skip
    items = [{"conf": c, "env": item_env} for c in confs]
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        results_file, output_file = Path(tmp) / "results.jsonl", Path(tmp) / "output.txt"
        ok = _Driver.of(home, dags).run(dag_id, items, results_file, output_file)
        written = results_file.read_text().splitlines() if results_file.exists() else []
        output = output_file.read_text(errors="replace") if output_file.exists() else ""
    lines = output.splitlines()
    results = [json.loads(line[7:]) for line in written if line.startswith("RESULT ")]
    logged = [line for r in results for line in r.pop("log")]
    text = "\n".join([*(x for x in lines if not x.startswith("RESULT ")), *logged])
    assert ok and len(results) == len(confs), text[-4000:]
    return results, text


class _Driver:
    """A ``dag_driver --serve`` process for one Airflow home and DAGs folder, started on
    first use and ended with the home's module (:func:`airflow_home`), when the test process
    exits, or when a request fails (so that the next one starts clean)."""

    _running: ClassVar[dict[tuple[str, str], _Driver]] = {}
    _ends_at_exit: ClassVar[list[bool]] = []

    def __init__(self, home: Path, dags: Path) -> None:
        self.key = (str(home), str(dags))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.airflow.dag_driver", "--serve"],
            env=_env(home, dags),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )

    @classmethod
    def of(cls, home: Path, dags: Path) -> _Driver:
        driver = cls._running.get((str(home), str(dags)))
        if driver is None or driver.proc.poll() is not None:
            if not cls._ends_at_exit:
                atexit.register(cls.stop_home, None)
                cls._ends_at_exit.append(True)
            driver = cls(home, dags)
            cls._running[driver.key] = driver
        return driver

    def run(self, dag_id: str, items: list[dict[str, Any]], results: Path, output: Path) -> bool:
        """Whether the driver ran every item (a failed run is still a run); False when it
        raised, died or took longer than 15 minutes (then it is stopped)."""
        import select

        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = {"dag_id": dag_id, "items": items, "results": str(results),
                   "output": str(output)}  # fmt: skip
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], 900)
            answer = self.proc.stdout.readline() if ready else ""
        except (BrokenPipeError, ValueError):
            answer = ""
        ok = bool(answer) and bool(json.loads(answer)["ok"])
        if not ok:
            self.stop(wait=0)
        return ok

    def stop(self, wait: float = 30) -> None:
        """End the process: asked to (end of its requests) for ``wait`` seconds, then killed."""
        self._running.pop(self.key, None)
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    @classmethod
    def stop_home(cls, home: Path | None) -> None:
        """End the drivers of ``home`` (None: every one)."""
        for driver in list(cls._running.values()):
            if home is None or driver.key[0] == str(home):
                driver.stop()


def ledger_state(url: str) -> list[tuple[str, str, list[str]]]:
    """(version, shown status, attempt statuses) of every release."""
    if url.startswith("sqlite") and not Path(url.removeprefix("sqlite:///")).exists():
        return []
    from airflow_privacy.errors import InputError

    try:
        db = ReleaseLedger(url, create=False)
    except InputError as exc:
        assert "holds no ledger yet" in str(exc)  # PostgreSQL: reading created nothing
        return []
    with db:
        return [(r.version, r.status, [a.status for a in db.attempts(r.id)]) for r in db.list()]


def green(run: dict[str, Any]) -> bool:
    return bool(run["state"] == "success")


def envelope(run: dict[str, Any], task: str) -> dict[str, Any]:
    xcoms = run["xcoms"].get(task, {})
    value = xcoms.get("return_value") or xcoms.get("privacy_report")
    assert isinstance(value, dict), (task, xcoms)
    return value


SMALL = {"records": 2000}


def officer(url: str, changed: list[str], by: str = "privacy officer") -> int:
    """The sample dataset's policy (the demo's, :data:`release_demo.POLICY`), recorded as
    its officer would on the command line, with ``changed`` options replacing its own."""
    from airflow_privacy.providers.airflow.release_demo import POLICY

    argv = list(POLICY)
    for i in range(0, len(changed), 2):
        argv[argv.index(changed[i]) + 1] = changed[i + 1]
    argv[argv.index("--by") + 1] = by
    return main([*argv, "--ledger", url, "--quiet"], out=io.StringIO())
