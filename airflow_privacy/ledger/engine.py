"""Turning a ledger URL (or an Engine) into a configured SQLAlchemy engine.

* ``None``: ``$AIRFLOW_PRIVACY_LEDGER_URL``, else the SQLite file
  ``airflow-privacy-ledger.db`` in the working directory;
* a plain path (``ledger.db``): that SQLite file;
* ``sqlite:///path``, ``postgresql+psycopg://user:pass@host/db`` (``postgresql://`` is read
  as psycopg 3, the driver the ``postgres`` extra installs);
* an existing :class:`sqlalchemy.engine.Engine` (an Airflow hook builds it from a
  connection), used as it is apart from the SQLite settings below.

SQLite: write-ahead log, a 30 s busy timeout, foreign keys on, and every transaction opened
with ``BEGIN IMMEDIATE`` so that concurrent writers queue instead of failing when a read lock
would be upgraded. Switching a fresh file to the write-ahead log ignores SQLite's busy
handler (it fails at once with "database is locked" while another process holds the file),
so that one statement is retried here until the busy timeout runs out.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.pool import StaticPool

from airflow_privacy.errors import InputError

URL_ENV = "AIRFLOW_PRIVACY_LEDGER_URL"
DEFAULT_FILE = "airflow-privacy-ledger.db"
BUSY_TIMEOUT_S = 30


def default_url() -> str:
    return os.environ.get(URL_ENV) or f"sqlite:///{DEFAULT_FILE}"


def safe_url(url: URL | str) -> str:
    """The URL with its password masked, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparsable URL>"


def parse_url(url: str | URL | None) -> URL:
    if url is None:
        url = default_url()
    if isinstance(url, URL):
        parsed = url
    else:
        text = str(url).strip()
        if not text:
            raise InputError("the ledger URL is empty")
        if "://" not in text:
            text = f"sqlite:///{Path(text).expanduser()}"
        try:
            parsed = make_url(text)
        except ArgumentError:
            raise InputError(
                f"{safe_url(text)!r} is not a ledger URL (use a file path, sqlite:///PATH or "
                "postgresql+psycopg://USER:PASSWORD@HOST/DB)"
            ) from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def sqlite_path(url: URL) -> Path | None:
    """The file of a SQLite URL, None for an in-memory database."""
    db = url.database
    if not db or db == ":memory:" or db.startswith("file::memory:"):
        return None
    return Path(db)


def make_engine(url: str | URL | None, create: bool = True) -> Engine:
    """An engine for ``url``; ``create=False`` refuses to create a missing SQLite file."""
    parsed = parse_url(url)
    kwargs: dict[str, Any] = {"future": True}
    if parsed.get_backend_name() == "sqlite":
        path = sqlite_path(parsed)
        if path is None:
            kwargs.update(poolclass=StaticPool, connect_args={"check_same_thread": False})
        else:
            if not path.parent.exists():
                raise InputError(f"folder {str(path.parent)!r} of the ledger file does not exist")
            if path.is_dir():
                raise InputError(f"ledger path {str(path)!r} is a directory, expected a file")
            if not create and not path.exists():
                raise InputError(
                    f"ledger file {str(path)!r} does not exist (record a release first, "
                    "or check --ledger)"
                )
            kwargs["connect_args"] = {"timeout": BUSY_TIMEOUT_S}
    else:
        kwargs["pool_pre_ping"] = True
    try:
        engine = create_engine(parsed, **kwargs)
    except NoSuchModuleError:
        raise InputError(
            f"unknown ledger URL scheme {parsed.drivername!r} in {safe_url(parsed)!r} "
            "(use a file path, sqlite:///PATH or postgresql+psycopg://USER:PASSWORD@HOST/DB)"
        ) from None
    except ModuleNotFoundError as exc:
        raise InputError(
            f"the database driver for {safe_url(parsed)!r} is not installed ({exc.name}); "
            "for PostgreSQL install the 'postgres' extra (psycopg 3)"
        ) from None
    except ArgumentError as exc:
        raise InputError(f"bad ledger URL {safe_url(parsed)!r}: {exc}") from None
    configure(engine)
    return engine


_CONFIGURED = "_airflow_privacy_ledger_configured"


def configure(engine: Engine) -> Engine:
    """Install the SQLite settings on ``engine`` (once; a no-op for other databases)."""
    if not is_sqlite(engine) or getattr(engine, _CONFIGURED, False):
        return engine
    memory = sqlite_path(engine.url) is None

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_S * 1000}")
        if not memory:
            _enable_wal(cur)
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    setattr(engine, _CONFIGURED, True)
    return engine


def _enable_wal(cur: Any) -> None:
    """``PRAGMA journal_mode=WAL``, retried while another connection holds the file.

    The journal-mode switch needs an exclusive lock and returns ``SQLITE_BUSY`` without
    calling the busy handler, so two processes opening a fresh ledger at once would otherwise
    see "database is locked" immediately.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    delay = 0.002
    while True:
        try:
            row = cur.execute("PRAGMA journal_mode").fetchone()
            if row is not None and str(row[0]).lower() == "wal":
                return
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
