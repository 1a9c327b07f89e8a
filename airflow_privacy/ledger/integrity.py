"""A corrupted ledger named, not crashed on.

A ledger is a database other tools can write to; on SQLite nothing stops a text in an
integer column or a half-written JSON document (PostgreSQL enforces the column types). A
value the ledger cannot read is found here and named by table, row and column, and the
command refuses with exit 2: "the ledger holds a value it cannot read: table
ledger_releases, row 1, column qis (not JSON)". Nothing is repaired: the operator restores
the ledger from a backup (docs/ledger.md, "A corrupted ledger").

* :class:`CheckedInteger` reads a whole-number column and refuses anything else as it is
  loaded (SQLite hands back the text ``'many'`` as it was stored);
* :func:`diagnose` scans a SQLite ledger for the first unreadable value -- JSON that does not
  parse, a timestamp that is not one, a non-integer in an integer column, a row pointing at
  a row that does not exist -- when reading it failed.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, Boolean, DateTime, Integer, MetaData
from sqlalchemy.types import TypeDecorator

from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    from sqlalchemy.engine import Dialect, Engine


class CorruptValue(ValueError):
    """A value of the ledger that is not of its column's type."""


class LedgerCorrupt(InputError):
    """The ledger holds a value it cannot read (named by table, row and column): bad input,
    exit 2, whatever was asked of it (a release looked up is not "not found")."""


class CheckedInteger(TypeDecorator[int]):
    """``INTEGER``, refusing a stored value that is not a whole number when it is read."""

    impl = Integer
    cache_ok = True

    def process_result_value(self, value: Any, dialect: Dialect) -> int | None:
        if value is None:
            return None
        if _whole(value):
            return int(value)
        raise CorruptValue("not a whole number")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _problem(value: Any, kind: Any) -> str | None:
    if value is None:
        return None
    if isinstance(kind, JSON):
        if not isinstance(value, str):
            return None
        try:
            json.loads(value)
        except ValueError:
            return "not JSON"
        return None
    if isinstance(kind, DateTime):
        if not isinstance(value, str):
            return "not a timestamp"
        try:
            datetime.fromisoformat(value)
        except ValueError:
            return "not a timestamp"
        return None
    if isinstance(kind, Boolean):
        return None if value in (0, 1) else "not true or false"
    if isinstance(kind, (Integer, CheckedInteger)):
        return None if _whole(value) else "not a whole number"
    return None


def diagnose(engine: Engine, metadata: MetaData) -> str | None:
    """The first value of a SQLite ledger that cannot be read, as ``table T, row R, column C
    (what)``, or a row whose reference points nowhere; None when every value reads (or the
    ledger is not SQLite, whose column types the database enforces). ``metadata`` holds the
    ledger's tables (:data:`airflow_privacy.ledger.models.Base.metadata`)."""
    if engine.dialect.name != "sqlite":
        return None
    with engine.connect() as conn:
        for table in metadata.sorted_tables:
            cols = [c for c in table.columns if isinstance(
                c.type, (JSON, DateTime, Boolean, Integer, CheckedInteger))]  # fmt: skip
            if not cols:
                continue
            names = ", ".join(f'"{c.name}"' for c in cols)
            rows = conn.exec_driver_sql(f'SELECT rowid, {names} FROM "{table.name}"')
            for row in rows:
                for col, value in zip(cols, row[1:], strict=True):
                    what = _problem(value, col.type)
                    if what is not None:
                        return f"table {table.name}, row {row[0]}, column {col.name} ({what})"
        for bad in conn.exec_driver_sql("PRAGMA foreign_key_check"):
            return f"table {bad[0]}, row {bad[1]}, refers to a row of {bad[2]} that does not exist"
    return None
