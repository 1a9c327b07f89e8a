"""PostgreSQL for the ledger tests: a real server, started when needed.

Import the fixtures into a test module (``from tests.conftest_pg import pg_server, pg_url``);
this is not a ``conftest.py``, so nothing here runs unless a test asks for it.

* ``AIRFLOW_PRIVACY_TEST_PG_URL`` set: that server (a SQLAlchemy URL whose role may create
  databases) is used as it is.
* Otherwise the local Debian/Ubuntu cluster (``pg_lsclusters``) is started when it is down
  (as root: ``pg_ctlcluster --skip-systemctl-redirect VERSION NAME start``), a test role with
  CREATEDB is created or updated over ``su postgres -c psql``, and every test gets a fresh
  database, dropped afterwards. A cluster that is already running is used as it is and left
  running (other test sessions may share it).
* PostgreSQL not installed at all: the tests are skipped with the reason, unless the
  environment variable ``CI`` is ``true``: then they fail, loudly. A server that is installed
  but cannot be started or reached always fails.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

URL_ENV = "AIRFLOW_PRIVACY_TEST_PG_URL"
ROLE = "airflow_privacy_test"
PASSWORD = "airflow-privacy-test"  # a throw-away role on a local test cluster


@dataclass(frozen=True)
class PgServer:
    """Where to reach the server and how to make a database on it."""

    host: str
    port: int
    user: str
    password: str
    admin_db: str

    def url(self, database: str) -> str:
        return (
            f"postgresql+psycopg://{self.user}:{self.password}@{self.host}:{self.port}/{database}"
        )

    def _admin(self) -> object:
        import psycopg

        return psycopg.connect(
            host=self.host,
            port=self.port,
            user=self.user,
            password=self.password,
            dbname=self.admin_db,
            autocommit=True,
            connect_timeout=10,
        )

    def create_database(self) -> str:
        from psycopg import sql

        name = f"ap_test_{os.getpid()}_{secrets.token_hex(4)}"
        with self._admin() as conn:  # type: ignore[attr-defined]
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return name

    def drop_database(self, name: str) -> None:
        """Drop a test database, ending only this role's own sessions on it.

        ``DROP DATABASE ... WITH (FORCE)`` terminates every backend on the database, and
        fails with "must be a member of the role whose process is being terminated" when one
        belongs to another role (on a shared or loaded cluster: an autovacuum worker, a
        monitoring session). So: end our own sessions, then a plain ``DROP`` retried while
        other backends leave; a database still busy after a minute is left for the cluster's
        owner (a warning, never a failed test: it is a throw-away name).
        """
        import warnings

        import psycopg
        from psycopg import sql

        deadline = time.monotonic() + 60
        while True:
            with self._admin() as conn:  # type: ignore[attr-defined]
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = %s AND usename = current_user AND pid <> pg_backend_pid()",
                    (name,),
                )
                try:
                    conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
                    return
                except psycopg.errors.ObjectInUse:
                    if time.monotonic() > deadline:
                        warnings.warn(
                            f"test database {name} is still in use by another role's "
                            "session; left in place",
                            stacklevel=2,
                        )
                        return
            time.sleep(0.5)


def _unavailable(reason: str) -> None:
    """Skip locally, fail in CI."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"PostgreSQL is required in CI: {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL tests skipped: {reason}")


def _clusters() -> list[tuple[str, str, int, str]]:
    """``(version, name, port, status)`` of every local cluster."""
    out = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True, check=True)
    rows = []
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 4:
            rows.append((parts[0], parts[1], int(parts[2]), parts[3]))
    return rows


def _as_postgres(cmd: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    if os.geteuid() == 0:
        import shlex

        full = ["su", "postgres", "-s", "/bin/sh", "-c", shlex.join(cmd)]
    else:
        full = cmd
    return subprocess.run(full, input=stdin, capture_output=True, text=True, timeout=120)


def _start_local() -> PgServer:
    """Start the local cluster and make the test role, one test process at a time: the
    workers of ``pytest -n`` start together, and two concurrent ``ALTER ROLE`` statements
    fail with "tuple concurrently updated"."""
    import fcntl
    import tempfile

    lock = Path(tempfile.gettempdir()) / "airflow-privacy-pg-setup.lock"
    with open(lock, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            return _start_local_locked()
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _start_local_locked() -> PgServer:
    if shutil.which("pg_lsclusters") is None or shutil.which("pg_ctlcluster") is None:
        _unavailable("PostgreSQL is not installed (no pg_lsclusters / pg_ctlcluster on PATH)")
    clusters = _clusters()
    if not clusters:
        _unavailable("PostgreSQL is installed but has no cluster (pg_createcluster 15 main)")
    version, name, port, status = clusters[0]
    if status != "online":
        cmd = ["pg_ctlcluster", "--skip-systemctl-redirect", version, name, "start"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        # another session may have started it at the same moment
        status = next(c[3] for c in _clusters() if c[:2] == (version, name))
        if proc.returncode != 0 and status != "online":
            pytest.fail(
                f"could not start PostgreSQL {version}/{name}: {proc.stderr.strip()}",
                pytrace=False,
            )
    deadline = time.monotonic() + 60
    while True:
        ready = subprocess.run(["pg_isready", "-q", "-p", str(port)], capture_output=True)
        if ready.returncode == 0:
            break
        if time.monotonic() > deadline:
            pytest.fail(f"PostgreSQL {version}/{name} is not accepting connections", pytrace=False)
        time.sleep(0.2)
    sql = f"""
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') THEN
    CREATE ROLE {ROLE} LOGIN CREATEDB PASSWORD '{PASSWORD}';
  ELSE
    ALTER ROLE {ROLE} LOGIN CREATEDB PASSWORD '{PASSWORD}';
  END IF;
END
$$;
"""
    proc = _as_postgres(
        ["psql", "-X", "-q", "-p", str(port), "-v", "ON_ERROR_STOP=1", "-d", "postgres"], sql
    )
    if proc.returncode != 0:
        pytest.fail(f"could not create the test role: {proc.stderr.strip()}", pytrace=False)
    return PgServer("127.0.0.1", port, ROLE, PASSWORD, "postgres")


@pytest.fixture(scope="session")
def pg_server() -> PgServer:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("the psycopg 3 driver is not installed (pip install '.[postgres]')")
    override = os.environ.get(URL_ENV)
    if override:
        from sqlalchemy.engine import make_url

        u = make_url(override)
        return PgServer(
            u.host or "127.0.0.1",
            u.port or 5432,
            u.username or "",
            u.password or "",
            u.database or "postgres",
        )
    return _start_local()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """A SQLAlchemy URL (psycopg 3) of a fresh, empty database, dropped afterwards."""
    name = pg_server.create_database()
    try:
        yield pg_server.url(name)
    finally:
        pg_server.drop_database(name)
