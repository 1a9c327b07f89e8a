"""``AirflowPrivacyPlugin``: mounts a read-only view of the privacy ledger in the API server.

``GET /privacy/api/releases`` (filters ``dataset``, ``status``) and
``GET /privacy/api/releases/{id}`` return what the ledger holds: status, reasons, criteria
results and manifest, never records. The ledger is the one named by
``AIRFLOW_PRIVACY_LEDGER_URL``, else the default SQLite file under ``AIRFLOW_HOME`` (the
same default as :class:`PrivacyLedgerHook`). Read-only by construction: no route writes.
"""

from __future__ import annotations

import os
from typing import Any

from airflow.plugins_manager import AirflowPlugin
from fastapi import FastAPI, HTTPException

from airflow_privacy import __version__


def ledger_url() -> str:
    from airflow_privacy.providers.airflow.hooks.ledger import default_ledger_path

    return os.environ.get("AIRFLOW_PRIVACY_LEDGER_URL") or f"sqlite:///{default_ledger_path()}"


def create_app() -> FastAPI:
    app = FastAPI(title="airflow-privacy ledger", version=__version__)

    @app.get("/api/releases")
    def releases(dataset: str | None = None, status: str | None = None) -> list[dict[str, Any]]:
        from airflow_privacy.errors import InputError
        from airflow_privacy.ledger import ReleaseLedger

        try:
            with ReleaseLedger(ledger_url(), create=False) as ledger:
                rows = ledger.list(dataset=dataset, status=status)
        except InputError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from None
        keep = ("id", "dataset", "version", "status", "created_at", "updated_at", "kind",
                "records", "groups", "reasons")  # fmt: skip
        return [{k: r.to_dict()[k] for k in keep} for r in rows]

    @app.get("/api/releases/{release_id}")
    def release(release_id: int) -> dict[str, Any]:
        from airflow_privacy.errors import InputError
        from airflow_privacy.ledger import ReleaseLedger

        try:
            with ReleaseLedger(ledger_url(), create=False) as ledger:
                info: dict[str, Any] = ledger.info(release_id).to_dict()
                return info
        except InputError as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from None

    return app


class AirflowPrivacyPlugin(AirflowPlugin):
    """Registers the ledger view under ``/privacy`` in the Airflow 3 API server."""

    name = "airflow_privacy"
    fastapi_apps = [  # noqa: RUF012  (AirflowPlugin's declared class attribute)
        {"app": create_app(), "url_prefix": "/privacy", "name": "Privacy ledger"}
    ]
