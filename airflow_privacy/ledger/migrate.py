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

Alembic's INFO lines ("Context impl SQLiteImpl", "Will assume non-transactional DDL") are
kept out of task logs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection, Engine

from airflow_privacy.errors import InputError
from airflow_privacy.ledger.engine import READ
from airflow_privacy.ledger.models import VERSION_TABLE

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_PG_LOCK = 7_263_512_093  # pg_advisory_xact_lock key of the ledger's migrations


def alembic_config(connection: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("path_separator", "os")
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def _scripts() -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config())


def head() -> str:
    rev = _scripts().get_current_head()
    assert rev is not None
    return rev


def known_revisions() -> set[str]:
    return {s.revision for s in _scripts().walk_revisions()}


@contextmanager
def _quiet_alembic() -> Iterator[None]:
    logger = logging.getLogger("alembic")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def current(connection: Connection) -> str | None:
    with _quiet_alembic():
        ctx = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
        return ctx.get_current_revision()


def ensure(engine: Engine, *, create: bool, where: str) -> str:
    """Bring the ledger on ``engine`` to the newest revision (module doc); returns it."""
    target = head()
    with engine.connect().execution_options(**READ) as conn, conn.begin():
        rev = current(conn)
        empty = rev is None and not inspect(conn).has_table("ledger_releases")
    if rev == target:
        return target
    if rev is not None and rev not in known_revisions():
        raise InputError(
            f"ledger {where} is at schema revision {rev!r}, written by a newer "
            f"airflow-privacy than this one (newest known: {target!r}); upgrade airflow-privacy"
        )
    if rev is None and not empty:
        raise InputError(
            f"{where} has tables named like a ledger's but no ledger revision: it is not a "
            "ledger this tool wrote"
        )
    if rev is None and not create:
        raise InputError(
            f"{where} holds no ledger yet (no tables): nothing has been recorded there"
        )
    upgrade(engine)
    return target


def upgrade(engine: Engine) -> str:
    """Migrate to the newest revision when needed; returns it."""
    target = head()
    with engine.connect() as conn:
        if current(conn) == target:
            return target
    with _quiet_alembic(), engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK})
        if current(conn) != target:
            command.upgrade(alembic_config(conn), "head")
    return target
