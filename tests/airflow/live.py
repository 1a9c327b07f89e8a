"""A real Airflow 3 for the tests that need one (a helper module, never a test module):
``airflow api-server`` + ``scheduler`` + ``dag-processor`` on a free localhost port, a
temporary ``AIRFLOW_HOME`` with a SQLite metadata database and the LocalExecutor, the
provider loaded the way a pip user gets it (its entry points: plugin, provider, cluster
policy), the simple auth manager's admin with the password it generated. The processes'
logs go to ``airflow-logs-<name>/`` under the artifacts folder."""

from __future__ import annotations

import base64
import contextlib
import importlib
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.airflow.metadata_db import AIRFLOW, migrated_home

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 20
START_TIMEOUT_S = 180  # the API server up and the DAG parsed
DAG_ID = "privacy_release"
USER = "admin"


def artifacts_dir() -> Path:
    path = Path(os.environ.get("AIRFLOW_PRIVACY_ARTIFACTS") or ROOT / "build" / "test-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------------ a real Airflow
@dataclass
class Airflow:
    """A running Airflow: its base URL, home, the admin's password, and its processes."""

    base: str
    home: Path
    logs: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    password: str = ""
    passwords: dict[str, str] = field(default_factory=dict)  # every user's (simple auth)
    tokens: dict[str, str] = field(default_factory=dict)  # every user's REST API token

    def log_tail(self, chars: int = 3000) -> str:
        out = []
        for name in self.procs:
            p = self.logs / f"{name}.log"
            text = p.read_text(errors="replace") if p.exists() else ""
            out.append(f"--- {name} (exit {self.procs[name].poll()}):\n{text[-chars:]}")
        return "\n".join(out)

    def request(self, path: str, data: Any = None, token: str | None = None) -> Any:
        """JSON from the REST API (``data``: POST it as JSON)."""
        headers = {"Accept": "application/json"}
        body = None
        if data is not None:
            body = json.dumps(data).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        req = urllib.request.Request(self.base + path, data=body, headers=headers)
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
            return json.loads(resp.read().decode() or "null")

    def call(self, method: str, path: str, body: Any = None, user: str = USER) -> Any:
        """One REST call as ``user``. A GET or a PATCH (idempotent: set an XCom, set a state)
        is tried again when the API server answers 500: it does when its SQLite metadata
        database stays locked by the scheduler for its 5 s busy timeout (seen under load in
        CI: "INSERT INTO log" failed after 5.06 s), a few times, a few seconds apart."""
        for attempt in range(5):
            req = urllib.request.Request(
                self.base + path,
                data=json.dumps(body).encode() if body is not None else None,
                method=method,
                headers={"Accept": "application/json", "Content-Type": "application/json",
                         "Authorization": f"Bearer {self.token(user)}"},
            )  # fmt: skip
            try:
                with urllib.request.urlopen(req, timeout=30) as resp:
                    return json.loads(resp.read().decode() or "null")
            except urllib.error.HTTPError as exc:
                if method not in ("PATCH", "GET") or exc.code != 500 or attempt == 4:
                    raise
                time.sleep(3)
        raise AssertionError("unreachable")  # pragma: no cover

    def parked(self, dag: str, run: str, task: str) -> bool:
        """Whether the scheduler saw the worker of ``task`` exit (a human-in-the-loop task
        parked in ``awaiting_input``): Airflow 3.3 marks a task answered before that as
        failed ("state changed externally"); a steward never answers within milliseconds, a
        test would."""
        mark = (
            f"Received executor event with state success for task instance TaskInstanceKey("
            f"dag_id='{dag}', task_id='{task}', run_id='{run}'"
        )
        return mark in (self.logs / "scheduler.log").read_text(errors="replace")

    def token(self, user: str = USER) -> str:
        """A REST API token of ``user`` (``POST /auth/token``, the simple auth manager),
        asked once and kept (valid for a day): the tests poll the API every half second."""
        if user not in self.tokens:
            password = self.password if user == USER else self.passwords[user]
            out = self.request("/auth/token", {"username": user, "password": password})
            self.tokens[user] = str(out["access_token"])
        return self.tokens[user]

    def runs(self, dag_id: str = DAG_ID) -> list[dict[str, Any]]:
        out = self.request(f"/api/v2/dags/{dag_id}/dagRuns", token=self.token())
        runs: list[dict[str, Any]] = out["dag_runs"]
        return runs


def wait_for(what: str, check: Callable[[], bool], af: Airflow, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        dead = [n for n, p in af.procs.items() if p.poll() is not None]
        assert not dead, f"{', '.join(dead)} exited while waiting for {what}\n{af.log_tail()}"
        try:
            if check():
                return
        except (OSError, urllib.error.URLError, ValueError, KeyError) as exc:
            last = f"{type(exc).__name__}: {exc}"
        time.sleep(0.5)
    pytest.fail(f"timed out after {timeout:.0f}s waiting for {what} ({last})\n{af.log_tail()}")


def stop(procs: dict[str, subprocess.Popen[bytes]]) -> None:
    """Stop the processes this module started and everything they started (task runners
    make process groups of their own, so a group signal would miss them), by process id."""
    psutil: Any = importlib.import_module("psutil")  # an Airflow dependency (untyped)
    started = []
    for p in procs.values():
        try:
            root = psutil.Process(p.pid)
            started += [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
    for p in started:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.terminate()
    # the API server and the scheduler wait long for their workers: a short grace, then kill
    _, alive = psutil.wait_procs(started, timeout=5)
    for p in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    psutil.wait_procs(alive, timeout=5)
    for p in procs.values():
        p.wait(timeout=5)


@contextlib.contextmanager
def running_airflow(
    tmp: Path,
    name: str,
    dags_folder: Path,
    wait_for_dag: str,
    *,
    api_env: dict[str, str] | None = None,
    env_extra: dict[str, str] | None = None,
    users: tuple[str, ...] = (),
) -> Iterator[Airflow]:
    """API server + scheduler + DAG processor (module doc) until the block ends; the DAG
    ``wait_for_dag`` is parsed when it starts. ``api_env``: extra environment of the API
    server only (e.g. the ledger its pages read)."""
    home = tmp / "home"
    home.mkdir()
    logs = artifacts_dir() / f"airflow-logs-{name}"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags_folder),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": "4",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": ",".join(
                f"{u}:admin" for u in (USER, *users)
            ),
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{base}/execution/",
            "AIRFLOW__API__BASE_URL": base,
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API__PORT": str(port),
            "AIRFLOW__API__WORKERS": "1",
            "AIRFLOW__API_AUTH__JWT_SECRET": base64.b64encode(os.urandom(24)).decode(),
            "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "1",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
            # a new file is parsed when the folder is listed (every 5 s); the files do not
            # change, so they are not parsed again every 30 s (Airflow's default)
            "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "3600",
            "AIRFLOW_PRIVACY_OUTPUT_DIR": str(tmp / "releases"),
            "PYTHONPATH": str(ROOT),
            **(env_extra or {}),
        }
    )
    migrated_home(home)
    af = Airflow(base=base, home=home, logs=logs)
    commands = {
        "api-server": (["api-server", "--host", "127.0.0.1", "--port", str(port)], api_env or {}),
        "dag-processor": (["dag-processor"], {}),
        "scheduler": (["scheduler"], {}),
    }
    try:
        for proc, (args, extra) in commands.items():
            with open(logs / f"{proc}.log", "wb") as out:
                af.procs[proc] = subprocess.Popen(
                    [AIRFLOW, *args],
                    env=env | extra,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    cwd=tmp,
                    start_new_session=True,
                )
        passwords = home / "simple_auth_manager_passwords.json.generated"

        def up() -> bool:
            with urllib.request.urlopen(f"{base}/api/v2/monitor/health", timeout=5) as r:
                ok = r.status == 200 and passwords.exists()
            if ok:
                af.passwords = dict(json.loads(passwords.read_text()))
                af.password = af.passwords[USER]
            return ok

        wait_for("the API server", up, af, START_TIMEOUT_S)

        def parsed() -> bool:
            try:
                dag = af.request(f"/api/v2/dags/{wait_for_dag}", token=af.token())
            except urllib.error.HTTPError as exc:
                if exc.code == 404:
                    return False
                raise
            return bool(dag["dag_id"] == wait_for_dag)

        wait_for(f"the DAG processor to parse {wait_for_dag}", parsed, af, START_TIMEOUT_S)
        yield af
    finally:
        stop(af.procs)
