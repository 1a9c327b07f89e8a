"""The people of a population that is a SQL table, read without their identifiers.

The composition audit and the attempt's member hashes need each person's QI values and the
keyed hash of their identifier. For a SQL table the hash is computed in the database
(:mod:`airflow_privacy.core.backends.keyed_hash`): the query returns the QI columns and the
hashes, never the identifier column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from airflow_privacy.errors import InputError
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef

if TYPE_CHECKING:
    from airflow_privacy.core.composition.locate import Population


def table_population(
    ref: ReleaseRef,
    qis: Sequence[str],
    id_column: str | None,
    key: bytes | None,
    ctx: GateContext,
) -> Population:
    """The QI values (as text, stripped) and identifier hashes of a population table."""
    import sqlalchemy as sa

    from airflow_privacy.core.backends.keyed_hash import hashed_column, refuse_other_space
    from airflow_privacy.core.composition.locate import Population
    from airflow_privacy.gate.tables import _sql_columns, database_errors

    wanted = list(dict.fromkeys([*qis, *([id_column] if id_column else [])]))
    engine, table, _ = _sql_columns(ref, ctx, wanted)
    where = ref.describe()
    selected = [table.c[q] for q in dict.fromkeys(qis)]
    with database_errors(ref), engine.connect() as conn:
        if id_column is not None:
            if key is None:
                raise InputError(
                    "identifier hashes need a key: set the ledger's key environment "
                    "variable (AIRFLOW_PRIVACY_LEDGER_KEY unless the ledger names another)"
                )
            refuse_other_space(conn, table, table.c[id_column], where)
            expr, extra = hashed_column(engine, table.c[id_column], key)
            fn = extra.get("sqlite_function")
            if fn is not None:
                raw = conn.connection.driver_connection
                raw.create_function("airflow_privacy_hmac", 1, fn, deterministic=True)
            selected.append(expr.label("id_hash"))
        ctx.progress(f"reading the population {where} (identifiers hashed in the database)")
        rows = conn.execute(sa.select(*selected)).all()
    if not rows:
        raise InputError(f"{where} is empty (0 records)")
    columns: dict[str, tuple[str, ...]] = {}
    for i, q in enumerate(dict.fromkeys(qis)):
        values = [r[i] for r in rows]
        if any(v is None for v in values):
            missing = sum(v is None for v in values)
            raise InputError(
                f"column {q!r} of {where} has {missing} missing value(s); fill or drop them first"
            )
        columns[q] = tuple(str(v).strip() for v in values)
    hashes = tuple(str(r[-1]) for r in rows) if id_column is not None else None
    return Population(columns, len(rows), hashes, None)
