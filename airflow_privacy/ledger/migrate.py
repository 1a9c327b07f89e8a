"""Schema migrations: Alembic, run programmatically.

The scripts live in ``airflow_privacy/ledger/migrations`` (inside the package, so an installed
wheel can migrate). :func:`ensure` brings a ledger to the newest revision:

* a database without ledger tables is a new ledger only for a writer that may create one
  (``create=True``); a reader gets an :class:`InputError` (reading never creates a ledger);
* an existing ledger at an older revision is upgraded (inside one transaction: on PostgreSQL
  under an advisory lock, on SQLite under ``BEGIN IMMEDIATE``, so two processes opening it
  at once do not both migrate);
* a ledger at a revision this version does not know (written by a newer airflow-privacy) is
  refused.

Alembic's INFO lines ("Context impl SQLiteImpl", "Will assume non-transactional DDL",
"setup plugin ...") are kept out of task logs: a filter on Alembic's loggers drops them while
the ledger is talking to Alembic (:func:`quiet_alembic`), whatever levels the application
configured, and leaves every other user of Alembic in the process (Airflow's own migrations)
alone. Alembic is imported only inside that scope.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection, Engine

from airflow_privacy.errors import InputError, LedgerMissing
from airflow_privacy.ledger.engine import READ
from airflow_privacy.ledger.models import VERSION_TABLE

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_PG_LOCK = 7_263_512_093  # pg_advisory_xact_lock key of the ledger's migrations
_NOISY = ("alembic.runtime.migration", "alembic.runtime.plugins")
_QUIET: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "airflow_privacy_quiet_alembic", default=False
)


class _QuietFilter(logging.Filter):
    """Drops Alembic's records below WARNING inside :func:`quiet_alembic`."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or not _QUIET.get()


_FILTER = _QuietFilter()


@contextmanager
def quiet_alembic() -> Iterator[None]:
    """Alembic's INFO lines are dropped inside the block (this thread / task only)."""
    for name in _NOISY:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)


def alembic_config(connection: Connection | None = None) -> Config:
    with quiet_alembic():
        from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("path_separator", "os")
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


@cache
def _scripts() -> ScriptDirectory:
    with quiet_alembic():
        from alembic.script import ScriptDirectory

        return ScriptDirectory.from_config(alembic_config())


def head() -> str:
    rev = _scripts().get_current_head()
    assert rev is not None
    return rev


def known_revisions() -> set[str]:
    return {s.revision for s in _scripts().walk_revisions()}


def current(connection: Connection) -> str | None:
    with quiet_alembic():
        from alembic.runtime.migration import MigrationContext

        ctx = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
        return ctx.get_current_revision()


def ensure(engine: Engine, *, create: bool, where: str) -> str:
    """Bring the ledger on ``engine`` to the newest revision (module doc); returns it."""
    target = head()
    with engine.connect().execution_options(**READ) as conn, conn.begin():
        # the tables first, then the revision: a migration committing in between (another
        # process creating the ledger) then reads as "ledger at head", never as "tables
        # without a revision" (both are committed together)
        has_tables = inspect(conn).has_table("ledger_releases")
        rev = current(conn)
    if rev == target:
        return target
    if rev is not None and rev not in known_revisions():
        raise InputError(
            f"ledger {where} is at schema revision {rev!r}, written by a newer "
            f"airflow-privacy than this one (newest known: {target!r}); upgrade airflow-privacy"
        )
    if rev is None and has_tables:
        raise InputError(
            f"{where} has tables named like a ledger's but no ledger revision: it is not a "
            "ledger this tool wrote"
        )
    if rev is None and not create:
        raise LedgerMissing(
            f"{where} holds no ledger yet (no ledger tables): nothing has been recorded there"
        )
    upgrade(engine)
    return target


def upgrade(engine: Engine) -> str:
    """Migrate to the newest revision when needed, in one transaction that holds the
    migration lock (two processes never both migrate); returns the revision."""
    target = head()
    with quiet_alembic(), engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        raw: Any = conn.connection.dbapi_connection
        if sqlite:
            # SQLite moves a table (batch migrations) by copying it, dropping the old one and
            # renaming the copy; with foreign keys on, the DROP deletes every row first and
            # the ON DELETE CASCADE empties groups, hashes and attempts. The pragma only takes
            # effect outside a transaction, so it is set on the driver's connection here.
            raw.execute("PRAGMA foreign_keys=OFF")
        try:
            with conn.begin():
                if conn.dialect.name == "postgresql":
                    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK})
                if current(conn) != target:
                    from alembic import command

                    command.upgrade(alembic_config(conn), "head")
                    if sqlite:
                        broken = conn.exec_driver_sql("PRAGMA foreign_key_check").all()
                        if broken:
                            raise RuntimeError(
                                f"the migration broke {len(broken)} foreign key(s): {broken[:3]}"
                            )
        finally:
            if sqlite:
                raw.execute("PRAGMA foreign_keys=ON")
    return target
