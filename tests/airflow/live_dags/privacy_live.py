"""The gated release DAGs of the end-to-end tests in a running Airflow (built by
:func:`tests.airflow.live_dags.builder.build`)."""

from __future__ import annotations

from tests.airflow.live_dags.builder import build

dag = build("privacy_live", identifiers=False)
ids_dag = build("privacy_live_ids", identifiers=True)
steward_dag = build("privacy_live_steward", identifiers=False, steward=True)
audit_dag = build("privacy_live_audit", identifiers=False, audit=True)
