"""Releases that are SQL tables: their content digest, snapshot and publication, in the
database.

A table's content is the multiset of its rows (SQL has no row order), which a
``GROUP BY`` over every column with ``COUNT(*)`` states exactly: the digest of a table is
the SHA-256 of its column names and of those groups, each written canonically (every value
as text or null, the count) and sorted. Only the groups travel; a release table holds the
published columns only (its groups' labels and sensitive values, which are what is published).

Publishing a table mirrors publishing a file (:func:`airflow_privacy.gate.attempts.publish`):
the release is first copied inside the database into a private snapshot table
(``CREATE TABLE ... AS SELECT``), the snapshot is what is verified against the attempt and
what becomes the published table, so a table changed in between is never published; the
destination is never replaced when it holds other content. Statements are built with the
dialect's own identifier quoting; nothing is interpolated but quoted identifiers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
from collections.abc import Iterator
from typing import TYPE_CHECKING

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.tables import (
    database_errors,
    sql_column_names,
    sql_group_counts,
    sql_name_parts,
    sql_target,
)

if TYPE_CHECKING:
    import sqlalchemy as sa

SNAPSHOT_PREFIX = "airflow_privacy_snapshot_"


def quoted(engine: sa.Engine, name: str) -> str:
    """``schema.table`` as the dialect quotes it (any text is a name, never SQL)."""
    if "\x00" in name:
        raise InputError(f"table name {name!r} contains a NUL character")
    prep = engine.dialect.identifier_preparer
    schema, table = sql_name_parts(name)
    out = prep.quote(table)
    return f"{prep.quote_schema(schema)}.{out}" if schema else out


def _ctas(engine: sa.Engine, target: str, source: str) -> str:
    """``CREATE TABLE target AS SELECT * FROM source`` with quoted names."""
    return f"CREATE TABLE {quoted(engine, target)} AS SELECT * FROM {quoted(engine, source)}"


def _engine(ref: ReleaseRef, ctx: GateContext, write: bool = False) -> tuple[sa.Engine, str]:
    return sql_target(ref, ctx, write=write)


def exists(engine: sa.Engine, name: str) -> bool:
    import sqlalchemy as sa

    schema, table = sql_name_parts(name)
    return bool(sa.inspect(engine).has_table(table, schema))


def table_digest(ref: ReleaseRef, ctx: GateContext) -> str:
    """``sha256:HEX`` of a release table's rows as a multiset (module doc): its
    ``GROUP BY`` over every column, each group written canonically, sorted."""
    engine, name = _engine(ref, ctx)
    with database_errors(ref):
        if not exists(engine, name):
            raise InputError(f"table {name!r} does not exist")
    columns = sql_column_names(ref, ctx)
    rows = [
        json.dumps([None if v is None else str(v) for v in row[:-1]] + [int(row[-1])])
        for row in sql_group_counts(ref, columns, ctx)
    ]
    rows.sort()
    h = hashlib.sha256()
    h.update(json.dumps(columns).encode("utf-8"))
    for r in rows:
        h.update(b"\n" + r.encode("utf-8"))
    return "sha256:" + h.hexdigest()


@contextlib.contextmanager
def snapshot(ref: ReleaseRef, ctx: GateContext) -> Iterator[ReleaseRef]:
    """A private copy of the release table in its database (removed afterwards)."""
    import sqlalchemy as sa

    engine, name = _engine(ref, ctx, write=True)
    schema, _ = sql_name_parts(name)
    snap = f"{schema + '.' if schema else ''}{SNAPSHOT_PREFIX}{secrets.token_hex(6)}"
    with database_errors(ref):
        if not exists(engine, name):
            raise InputError(f"table {name!r} does not exist")
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    f"CREATE TABLE {quoted(engine, snap)} AS SELECT * FROM {quoted(engine, name)}"
                )
            )
    try:
        yield ReleaseRef(sql_table=snap, conn=ref.conn)
    finally:
        with contextlib.suppress(Exception), engine.begin() as conn:
            conn.execute(sa.text(f"DROP TABLE IF EXISTS {quoted(engine, snap)}"))


def destination(release: ReleaseRef, to: str) -> ReleaseRef:
    """The published table's reference: ``to`` names a table on the release's connection
    (``table:`` may prefix it)."""
    name = to.removeprefix("table:").strip()
    if not name:
        raise InputError(f"{opt('to')} is empty")
    return ReleaseRef(sql_table=name, conn=release.conn)


def check_target(snap: ReleaseRef, target: ReleaseRef, ctx: GateContext) -> None:
    """The destination table does not exist, or holds exactly the snapshot's content (the
    trace of an interrupted earlier run)."""
    from airflow_privacy.core.backends.sql import check_name_length

    engine, name = _engine(target, ctx)
    check_name_length(engine, name, f"the published table ({opt('to')})")
    if not exists(engine, name):
        return
    if table_digest(target, ctx) != table_digest(snap, ctx):
        raise InputError(
            f"{target.describe()} already exists with other content: publishing never "
            f"replaces a published table; give another {opt('to')} (e.g. one per version)"
        )


def copy(snap: ReleaseRef, target: ReleaseRef, ctx: GateContext) -> None:
    """The snapshot copied to the destination table in one transaction (an identical
    destination, left by an interrupted run, is kept)."""
    import sqlalchemy as sa

    engine, src = _engine(snap, ctx, write=True)
    _, dst = _engine(target, ctx)
    with database_errors(target):
        if exists(engine, dst):
            return
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    f"CREATE TABLE {quoted(engine, dst)} AS SELECT * FROM {quoted(engine, src)}"
                )
            )
