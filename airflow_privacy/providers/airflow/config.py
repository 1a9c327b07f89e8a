"""The provider's ``[privacy]`` section of Airflow's configuration (declared in the provider
metadata, so ``airflow config list`` shows it), and how a setting is read: the project's own
environment variable first (kept as an override), then Airflow's configuration (``airflow.cfg``
or ``AIRFLOW__PRIVACY__<OPTION>``), then the default.

The command line reads the same section without importing Airflow: from Airflow's
environment form ``AIRFLOW__PRIVACY__<OPTION>`` (:func:`airflow_privacy.ledger.location.
env_setting`).
"""

from __future__ import annotations

import os
from typing import Any

SECTION = "privacy"

#: option -> (the environment variable that overrides it, description, example, default)
OPTIONS: dict[str, tuple[str, str, str | None, str]] = {
    "ledger_url": (
        "AIRFLOW_PRIVACY_LEDGER_URL",
        "The ledger's SQLAlchemy URL, when no operator names another connection: "
        "$AIRFLOW_PRIVACY_LEDGER_URL overrides it, and it overrides the connection "
        "privacy_ledger_default (then the file privacy_ledger.db in $AIRFLOW_HOME).",
        "postgresql+psycopg://ledger@db/ledger",
        "",
    ),
    "ledger_conn_id": (
        "AIRFLOW_PRIVACY_LEDGER_CONN_ID",
        "The connection that holds the ledger when no operator names one and no ledger_url is "
        "set (default privacy_ledger_default): one organization-wide name for every DAG. "
        "A connection named here that does not exist is an error, never a fallback. "
        "$AIRFLOW_PRIVACY_LEDGER_CONN_ID overrides it.",
        "privacy_ledger_prod",
        "",
    ),
    "output_dir": (
        "AIRFLOW_PRIVACY_OUTPUT_DIR",
        "Where the sample DAG writes its inputs, releases and published copies "
        "($AIRFLOW_PRIVACY_OUTPUT_DIR overrides it; default: privacy_releases in $AIRFLOW_HOME).",
        "/srv/privacy-releases",
        "",
    ),
    "ui_auth": (
        "AIRFLOW_PRIVACY_UI_AUTH",
        "How the ledger pages authenticate: airflow (the API server's login; the default) or "
        "none (only for a page served on a private socket in tests). Anything else fails "
        "closed. $AIRFLOW_PRIVACY_UI_AUTH overrides it.",
        "airflow",
        "airflow",
    ),
}


def provider_config() -> dict[str, Any]:
    """The section as the provider metadata declares it (``get_provider_info()["config"]``)."""
    from airflow_privacy import __version__

    return {
        SECTION: {
            "description": "airflow-privacy: where the ledger is (its URL or its connection), "
            "where the sample DAG writes, how the ledger pages authenticate. The criteria and "
            "thresholds every release must pass are not set here: they are each dataset's "
            "policy, recorded in the ledger (airflow-privacy policy set).\n",
            "options": {
                name: {
                    "description": f"{text}\n",
                    "version_added": __version__,
                    "type": "string",
                    "example": example,
                    "default": default,
                }
                for name, (_env, text, example, default) in OPTIONS.items()
            },
        }
    }


def setting(option: str) -> str | None:
    """The value of ``option`` (module doc); None when blank everywhere."""
    env, _text, _example, default = OPTIONS[option]
    raw = os.environ.get(env, "").strip()
    if raw:
        return raw
    from airflow.configuration import conf

    value = str(conf.get(SECTION, option, fallback=default) or "").strip()
    return value or None
