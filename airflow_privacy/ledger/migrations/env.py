"""Alembic environment of the ledger: runs on the connection the ledger hands over
(``config.attributes["connection"]``), inside the ledger's transaction."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from airflow_privacy.ledger.models import VERSION_TABLE, Base

config = context.config


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is None:  # `alembic -x url=...` from a shell
        url = context.get_x_argument(as_dictionary=True).get("url")
        if not url:
            raise SystemExit(
                "pass the database URL: alembic -x url=sqlite:///ledger.db upgrade head"
            )
        engine = create_engine(url)
        with engine.begin() as conn:
            _migrate(conn)
        return
    _migrate(connection)


def _migrate(connection: object) -> None:
    context.configure(
        connection=connection,  # type: ignore[arg-type]
        target_metadata=Base.metadata,
        version_table=VERSION_TABLE,
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("the ledger's migrations run online only")
run()
