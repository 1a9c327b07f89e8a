"""Schema migrations: Alembic, run programmatically on first use.

The scripts live in ``airflow_privacy/ledger/migrations`` (inside the package, so an installed
wheel can migrate). :func:`upgrade` brings a database to the newest revision inside one
transaction: on PostgreSQL under an advisory lock, on SQLite under ``BEGIN IMMEDIATE``, so
two processes that open a fresh ledger at once do not both create the tables.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

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


def head() -> str:
    rev = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert rev is not None
    return rev


def current(connection: Connection) -> str | None:
    ctx = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
    return ctx.get_current_revision()


def upgrade(engine: Engine) -> str:
    """Migrate to the newest revision when needed; returns it."""
    target = head()
    with engine.connect() as conn:
        if current(conn) == target:
            return target
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK})
        if current(conn) != target:
            command.upgrade(alembic_config(conn), "head")
    return target
