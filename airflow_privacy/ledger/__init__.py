"""The release ledger: what was published and attempted, for the composition audit and the
gate.

SQLAlchemy 2 models (:mod:`.models`), Alembic migrations (:mod:`.migrate`, scripts in
``migrations/``), where the ledger is (:mod:`.location`: one resolution for the CLI, the
operators and the UI), and the :class:`ReleaseLedger` repository (:mod:`.api`). SQLite file
by default, PostgreSQL for real deployments. Never imports Airflow.
"""

from airflow_privacy.ledger.api import AttemptInfo, CheckInfo, ReleaseInfo, ReleaseLedger
from airflow_privacy.ledger.location import (
    DEFAULT_CONN_ID,
    DEFAULT_FILE,
    URL_ENV,
    LedgerLocation,
    resolve,
)
from airflow_privacy.ledger.models import ATTEMPT_STATUSES, STATUSES
from airflow_privacy.ledger.policies import PolicyInfo

__all__ = [
    "ATTEMPT_STATUSES",
    "DEFAULT_CONN_ID",
    "DEFAULT_FILE",
    "STATUSES",
    "URL_ENV",
    "AttemptInfo",
    "CheckInfo",
    "LedgerLocation",
    "PolicyInfo",
    "ReleaseInfo",
    "ReleaseLedger",
    "resolve",
]
