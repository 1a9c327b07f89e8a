"""The Apache Airflow provider: operators, the ledger hook and its connection type, plugin.

``get_provider_info`` is the ``apache_airflow_provider`` entry point: Airflow's providers
manager reads it to list the operators, hooks, connection type, the operator extra link (the
release report's "Privacy report" button) and the plugin.
"""

from __future__ import annotations

from typing import Any

from airflow_privacy import __version__
from airflow_privacy.providers.airflow.connection_fields import CONN_FIELDS, UI_FIELD_BEHAVIOUR

OPERATOR_MODULES = [
    "airflow_privacy.providers.airflow.operators.check",
    "airflow_privacy.providers.airflow.operators.anonymize",
    "airflow_privacy.providers.airflow.operators.composition",
    "airflow_privacy.providers.airflow.operators.ledger",
    "airflow_privacy.providers.airflow.operators.maxent",
    "airflow_privacy.providers.airflow.operators.report",
]
HOOK_MODULES = ["airflow_privacy.providers.airflow.hooks.ledger"]
CONNECTION_TYPES: list[dict[str, Any]] = [
    {
        "hook-class-name": "airflow_privacy.providers.airflow.hooks.ledger.PrivacyLedgerHook",
        "hook-name": "Privacy ledger",
        "connection-type": "privacy_ledger",
        "conn-fields": CONN_FIELDS,
        "ui-field-behaviour": UI_FIELD_BEHAVIOUR,
    }
]
EXTRA_LINKS = ["airflow_privacy.providers.airflow.operators.report.ReleaseReportLink"]
PLUGINS: list[dict[str, str]] = [
    {
        "name": "airflow_privacy",
        "plugin-class": "airflow_privacy.providers.airflow.plugin.AirflowPrivacyPlugin",
    }
]


def get_provider_info() -> dict[str, Any]:
    """Provider metadata in the format of Airflow's provider.yaml schema."""
    return {
        "package-name": "airflow-privacy",
        "name": "Privacy (airflow-privacy)",
        "description": "Gate scheduled data releases on worst-case privacy guarantees: "
        "(c,k)-safety, privacy skyline, composition audit across releases, MaxEnt risk.",
        "versions": [__version__],
        "integrations": [
            {
                "integration-name": "Privacy",
                "external-doc-url": "https://github.com/airflow-privacy/airflow-privacy",
                "tags": ["software"],
            }
        ],
        "operators": [{"integration-name": "Privacy", "python-modules": OPERATOR_MODULES}],
        "hooks": [{"integration-name": "Privacy", "python-modules": HOOK_MODULES}],
        "connection-types": CONNECTION_TYPES,
        "extra-links": EXTRA_LINKS,
        "plugins": PLUGINS,
    }
