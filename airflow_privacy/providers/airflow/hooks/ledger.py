"""``PrivacyLedgerHook``: the release ledger behind an Airflow connection.

The hook builds its own SQLAlchemy engine from its own connection type
(``privacy_ledger``): task code never touches Airflow's metadata database. Without a
connection, the ledger is a SQLite file under ``AIRFLOW_HOME`` (``privacy_ledger.db``).

Connection fields: ``host``/``port``/``schema`` (database)/``login``/``password`` for
PostgreSQL; extras ``dialect`` (``postgresql``, the default, or ``sqlite``), ``path`` (the
SQLite file), ``url`` (a full SQLAlchemy URL, overriding the rest) and ``hmac_key_env`` (the
environment variable holding the key for identifier hashes).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

from airflow_privacy.providers.airflow.connection_fields import UI_FIELD_BEHAVIOUR

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

    from airflow_privacy.ledger import ReleaseLedger

DEFAULT_CONN_ID = "privacy_ledger_default"
DEFAULT_FILE = "privacy_ledger.db"


def default_ledger_path() -> Path:
    home = os.environ.get("AIRFLOW_HOME") or str(Path.home() / "airflow")
    return Path(home) / DEFAULT_FILE


class PrivacyLedgerHook(BaseHook):
    """Open the :class:`~airflow_privacy.ledger.ReleaseLedger` named by a connection."""

    conn_name_attr = "privacy_ledger_conn_id"
    default_conn_name = DEFAULT_CONN_ID
    conn_type = "privacy_ledger"
    hook_name = "Privacy ledger"

    def __init__(self, privacy_ledger_conn_id: str = DEFAULT_CONN_ID, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.privacy_ledger_conn_id = privacy_ledger_conn_id

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        return UI_FIELD_BEHAVIOUR

    def url(self) -> URL:
        """The SQLAlchemy URL of the ledger (a SQLite file under AIRFLOW_HOME by default)."""
        from airflow.sdk.exceptions import AirflowNotFoundException
        from sqlalchemy.engine import URL

        try:
            conn = self.get_connection(self.privacy_ledger_conn_id)
        except AirflowNotFoundException:
            if self.privacy_ledger_conn_id != DEFAULT_CONN_ID:
                raise
            return URL.create("sqlite", database=str(default_ledger_path()))
        extra = conn.extra_dejson or {}
        if extra.get("url"):
            from airflow_privacy.ledger.engine import parse_url

            return parse_url(str(extra["url"]))
        dialect = str(extra.get("dialect") or "postgresql")
        if dialect == "sqlite":
            path = extra.get("path") or conn.host or str(default_ledger_path())
            return URL.create("sqlite", database=str(path))
        if dialect != "postgresql":
            raise ValueError(f"connection {conn.conn_id!r}: unknown ledger dialect {dialect!r}")
        return URL.create(
            "postgresql+psycopg",
            username=conn.login or None,
            password=conn.password or None,
            host=conn.host or None,
            port=conn.port or None,
            database=conn.schema or None,
        )

    def get_conn(self) -> ReleaseLedger:
        """A migrated :class:`ReleaseLedger` (close it, or use it as a context manager)."""
        from airflow.sdk.exceptions import AirflowNotFoundException

        from airflow_privacy.core.composition.identifiers import DEFAULT_KEY_ENV
        from airflow_privacy.ledger import ReleaseLedger

        key_env = DEFAULT_KEY_ENV
        try:
            conn = self.get_connection(self.privacy_ledger_conn_id)
            key_env = str((conn.extra_dejson or {}).get("hmac_key_env") or key_env)
        except AirflowNotFoundException:
            pass
        url = self.url()
        if url.drivername.startswith("sqlite") and url.database:
            Path(url.database).parent.mkdir(parents=True, exist_ok=True)
        return ReleaseLedger(url, key_env=key_env)
