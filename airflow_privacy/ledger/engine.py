"""Turning a ledger URL (or an Engine) into a configured SQLAlchemy engine, and database
errors into the project's errors.

* a plain path (``ledger.db``): that SQLite file;
* ``sqlite:///path``, ``postgresql+psycopg://user:pass@host/db`` (``postgresql://`` is read
  as psycopg 3, the driver the ``postgres`` extra installs);
* an existing :class:`sqlalchemy.engine.Engine` (an Airflow hook may build one), used as it
  is apart from the SQLite settings below.

Which ledger to open is decided elsewhere, in one place (:mod:`.location`).

SQLite: write-ahead log (switched on by an engine that may create the ledger; a reader never
changes the file), foreign keys on; a *write* transaction is opened with
``BEGIN IMMEDIATE`` so that concurrent writers queue on the lock (for up to
``AIRFLOW_PRIVACY_LEDGER_LOCK_TIMEOUT`` seconds, default 600) instead of failing when a read
lock would be upgraded; a *read* transaction (the ``ledger_read`` execution option) is a
plain deferred ``BEGIN``, which in WAL mode never waits for a writer. Switching a fresh file
to the write-ahead log ignores SQLite's busy handler, so that one statement is retried here
until the timeout runs out.

:func:`classify` maps a database exception to :class:`LedgerUnavailable` (unreachable, locked
too long, a lost race: retry later), :class:`InputError` (not a ledger, a corrupt file, a
bad URL) or leaves it alone (a bug).
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

from airflow_privacy.errors import (
    InputError,
    LedgerMissing,
    LedgerUnavailable,
    PrivacyGateError,
    opt,
)

LOCK_TIMEOUT_ENV = "AIRFLOW_PRIVACY_LEDGER_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT_S = 600.0
READ = {"ledger_read": True}  # execution options of a read-only transaction
MAX_ID = 2**31 - 1  # the ids are INTEGER columns


def lock_timeout() -> float:
    """Seconds a writer waits for the SQLite write lock (environment, default 600)."""
    raw = os.environ.get(LOCK_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_LOCK_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        raise InputError(f"{LOCK_TIMEOUT_ENV} must be a number of seconds, got {raw!r}") from None
    if not 0 < value <= 86_400:
        raise InputError(f"{LOCK_TIMEOUT_ENV} must be in (0, 86400] seconds, got {raw!r}")
    return value


def safe_url(url: URL | str) -> str:
    """The URL with its password masked (also a ``password=`` query parameter), for
    messages."""
    try:
        parsed = make_url(url) if isinstance(url, str) else url
    except (ArgumentError, ValueError):
        return "<unparsable URL>"
    query = {
        k: ("***" if "pass" in k.lower() or "secret" in k.lower() else v)
        for k, v in parsed.query.items()
    }
    return parsed.set(query=query).render_as_string(hide_password=True)


def url_secrets(url: URL | str) -> tuple[str, ...]:
    """The secrets a URL holds (its password, ``password=`` / ``secret`` query values), to be
    scrubbed from any message that might echo them."""
    try:
        parsed = make_url(url) if isinstance(url, str) else url
    except (ArgumentError, ValueError):
        return ()
    found = [parsed.password] if parsed.password else []
    for k, v in parsed.query.items():
        if "pass" in k.lower() or "secret" in k.lower():
            found.extend([v] if isinstance(v, str) else list(v))
    return tuple(str(x) for x in found if x and len(str(x)) >= 3)


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every secret masked."""
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def parse_url(url: str | URL) -> URL:
    if isinstance(url, URL):
        parsed = url
    else:
        text = str(url).strip()
        if not text:
            raise InputError(f"the ledger URL is empty ({opt('ledger')})")
        if "\x00" in text:
            raise InputError("the ledger URL contains a NUL character")
        if "://" not in text:
            text = f"sqlite:///{Path(text).expanduser()}"
        elif text.split("://", 1)[1].split("/", 1)[0].count("@") > 1:
            # user:p@ss@host: where the password ends is a guess (and a wrong guess shows
            # the rest of it as the host in every message): refused, the secret unquoted
            raise InputError(
                f"the ledger URL ({opt('ledger')}) has more than one '@' before its host: "
                "percent-encode an '@' in the user name or password as %40"
            )
        try:
            parsed = make_url(text)
            _ = parsed.port  # a malformed port raises here
        except (ArgumentError, ValueError):
            raise InputError(
                f"{safe_url(text)!r} is not a ledger URL (use a file path, sqlite:///PATH or "
                "postgresql+psycopg://USER:PASSWORD@HOST/DB)"
            ) from None
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise InputError(
            f"port {parsed.port} of ledger URL {safe_url(parsed)!r} is not a TCP port (1-65535)"
        )
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


def sqlite_exists(url: str | URL) -> bool | None:
    """Whether a SQLite ledger file exists (None: not a SQLite file URL)."""
    parsed = parse_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    path = sqlite_path(parsed)
    if path is None:
        return None
    try:
        return path.is_file()
    except OSError:  # a name the file system refuses: opening it says so
        return None


def _check_sqlite_path(path: Path, create: bool) -> None:
    """The ledger file's path is usable: its folder exists, it is a regular file (or, when
    creating, absent); a name the file system refuses is bad input, not a crash."""
    try:
        if not path.parent.is_dir():
            raise InputError(f"folder {str(path.parent)!r} of the ledger file does not exist")
        if path.is_dir():
            raise InputError(f"ledger path {str(path)!r} is a folder, expected a file")
        if path.exists() and not path.is_file():
            raise InputError(f"ledger path {str(path)!r} is not a regular file")
        missing = not path.exists()
    except OSError as exc:  # a name too long, a symlink loop
        where = str(path)[:200]
        raise InputError(f"cannot use the ledger path {where!r}: {exc.strerror}") from None
    if not create and missing:
        raise LedgerMissing(
            f"ledger file {str(path)!r} does not exist: nothing has been recorded "
            f"there (check {opt('ledger')} for a typo)"
        )


def make_engine(url: str | URL, create: bool = True) -> Engine:
    """An engine for ``url``; ``create=False`` refuses a missing SQLite file."""
    parsed = parse_url(url)
    kwargs: dict[str, Any] = {"future": True}
    if parsed.get_backend_name() == "sqlite":
        path = sqlite_path(parsed)
        if path is None:
            kwargs.update(poolclass=StaticPool, connect_args={"check_same_thread": False})
        else:
            _check_sqlite_path(path, create)
            kwargs["connect_args"] = {"timeout": lock_timeout()}
    else:
        kwargs["pool_pre_ping"] = True
        if parsed.get_backend_name() == "postgresql":
            kwargs["connect_args"] = {"connect_timeout": 10}
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
    except (ArgumentError, TypeError, ValueError) as exc:
        why = scrub(_first_line(exc), url_secrets(parsed))
        raise InputError(f"bad ledger URL {safe_url(parsed)!r}: {why}") from None
    configure(engine, wal=create)
    return engine


_CONFIGURED = "_airflow_privacy_ledger_configured"


def configure(engine: Engine, *, wal: bool = True) -> Engine:
    """Install the SQLite settings on ``engine`` (once; a no-op for other databases).

    ``wal=False`` (an engine that may not create a ledger) leaves the journal mode alone: a
    ledger is switched to the write-ahead log by the writer that creates it, and a reader
    opened on some other SQLite file must not change it.
    """
    if not is_sqlite(engine) or getattr(engine, _CONFIGURED, False):
        return engine
    switch_wal = wal and sqlite_path(engine.url) is not None
    busy_ms = int(lock_timeout() * 1000)

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={busy_ms}")
        if switch_wal:
            _enable_wal(cur, busy_ms / 1000)
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        read = conn.get_execution_options().get("ledger_read", False)
        conn.exec_driver_sql("BEGIN" if read else "BEGIN IMMEDIATE")

    setattr(engine, _CONFIGURED, True)
    return engine


def _enable_wal(cur: Any, timeout: float) -> None:
    """``PRAGMA journal_mode=WAL``, retried while another connection holds the file.

    The journal-mode switch needs an exclusive lock and returns ``SQLITE_BUSY`` without
    calling the busy handler, so two processes opening a fresh ledger at once would otherwise
    see "database is locked" immediately.
    """
    deadline = time.monotonic() + timeout
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


# --------------------------------------------------------------------------- errors
_UNAVAILABLE = (
    "database is locked",
    "database table is locked",
    "could not connect",
    "connection refused",
    "connection timed out",
    "timeout expired",
    "server closed the connection",
    "terminating connection",
    "the database system is",
    "too many clients",
    "could not translate host name",
    "name or service not known",
    "no route to host",
    "connection reset",
    "ssl syscall",
    "deadlock detected",
    "could not serialize",
    "could not obtain lock",
    "lock timeout",
    "disk i/o error",
    "unable to open database file",
)
_BAD_URL = (
    "invalid connection option",
    "invalid dsn",
    "invalid sslmode value",
    "invalid integer value",
    "invalid value for parameter",
    "invalid uri query parameter",
    'missing "=" after',
    "invalid percent-encoded token",
)
_NOT_A_LEDGER = (
    "password authentication failed",
    "authentication failed",
    "file is not a database",
    "database disk image is malformed",
    "file is encrypted",
    "no such table",
    "does not exist",
    "undefinedtable",
    "malformed",
)


def classify(
    exc: BaseException, where: str, secrets: tuple[str, ...] = ()
) -> PrivacyGateError | None:
    """The project error for a database exception at ledger ``where`` (a display URL), or
    None when it is not one we know (a bug: let it surface). ``secrets`` (the URL's password)
    never appear in the message, even when the driver echoes them."""
    from sqlalchemy import exc as sa_exc

    if isinstance(exc, PrivacyGateError):
        return exc
    first = scrub(_first_line(exc), secrets)
    text = first.lower()
    if isinstance(exc, sa_exc.DBAPIError | sqlite3.Error) and any(s in text for s in _BAD_URL):
        return InputError(f"bad ledger URL {where}: {first}")
    if isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError | sa_exc.DisconnectionError):
        if any(s in text for s in _UNAVAILABLE):
            return LedgerUnavailable(f"ledger {where} is unavailable: {first}")
        if any(s in text for s in _NOT_A_LEDGER):
            return InputError(f"{where} is not a readable ledger: {first}")
        return LedgerUnavailable(f"ledger {where} is unavailable: {first}")
    if isinstance(exc, sa_exc.TimeoutError):
        return LedgerUnavailable(f"ledger {where}: no database connection free ({first})")
    if isinstance(exc, sa_exc.IntegrityError):
        return LedgerUnavailable(
            f"a concurrent writer changed ledger {where} at the same moment; try again ({first})"
        )
    if isinstance(exc, sa_exc.DatabaseError | sqlite3.DatabaseError) and any(
        s in text for s in _NOT_A_LEDGER
    ):
        return InputError(f"{where} is not a readable ledger: {first}")
    if isinstance(exc, OverflowError):
        return InputError(f"a number is too large for ledger {where}: {first}")
    return None


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__
