"""``PrivacyLedgerHook``: the release ledger behind an Airflow connection.

The hook builds its own SQLAlchemy engine from its own connection type (``privacyledger``):
task code never touches Airflow's metadata database. Where the ledger is, is decided in one
place for the hook, the operators, the UI and the command line
(:func:`airflow_privacy.ledger.location.resolve`): a named connection other than the
default, else ``$AIRFLOW_PRIVACY_LEDGER_URL``, else the connection
``privacy_ledger_default``, else ``$AIRFLOW_HOME/privacy_ledger.db``.

Connection fields: ``host``/``port``/``schema`` (database)/``login``/``password`` for
PostgreSQL; extras ``dialect`` (``postgresql``, the default, or ``sqlite``), ``path`` (the
SQLite file), ``url`` (a full SQLAlchemy URL, overriding the rest) and ``hmac_key_env`` (the
environment variable holding the key for identifier hashes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

from airflow_privacy.ledger.location import CONN_TYPE, DEFAULT_CONN_ID
from airflow_privacy.providers.airflow.connection_fields import UI_FIELD_BEHAVIOUR

if TYPE_CHECKING:
    from airflow_privacy.ledger import ReleaseLedger
    from airflow_privacy.ledger.location import LedgerLocation

__all__ = ["DEFAULT_CONN_ID", "PrivacyLedgerHook"]


class PrivacyLedgerHook(BaseHook):
    """Open the :class:`~airflow_privacy.ledger.ReleaseLedger` named by a connection."""

    conn_name_attr = "privacy_ledger_conn_id"
    default_conn_name = DEFAULT_CONN_ID
    conn_type = CONN_TYPE
    hook_name = "Privacy ledger"

    def __init__(self, privacy_ledger_conn_id: str = DEFAULT_CONN_ID, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.privacy_ledger_conn_id = privacy_ledger_conn_id

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        return UI_FIELD_BEHAVIOUR

    def location(self) -> LedgerLocation:
        """Where the ledger is (module doc)."""
        from airflow_privacy.providers.airflow.adapter import locate

        return locate(self.privacy_ledger_conn_id)

    def get_conn(self, create: bool = False) -> ReleaseLedger:
        """The ledger, migrated (close it, or use it as a context manager). ``create=False``
        (the default) refuses a ledger that does not exist yet."""
        from airflow_privacy.ledger import ReleaseLedger

        loc = self.location()
        return ReleaseLedger(loc.url, create=create, key_env=loc.key_env)
