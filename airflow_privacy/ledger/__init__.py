"""The release ledger: what was published, for the composition audit.

SQLAlchemy 2 models (:mod:`.models`), Alembic migrations run on first use (:mod:`.migrate`,
scripts in ``migrations/``), and the :class:`ReleaseLedger` API (:mod:`.api`). SQLite file
by default, PostgreSQL for real deployments. Never imports Airflow: the Airflow hook wraps
it, building it from a connection's URL or engine.
"""

from airflow_privacy.ledger.api import ReleaseInfo, ReleaseLedger
from airflow_privacy.ledger.engine import DEFAULT_FILE, URL_ENV, default_url
from airflow_privacy.ledger.models import STATUSES

__all__ = ["DEFAULT_FILE", "STATUSES", "URL_ENV", "ReleaseInfo", "ReleaseLedger", "default_url"]
