"""The Apache Airflow provider: operators, the ledger hook and its connection type, plugin.

``get_provider_info`` is the ``apache_airflow_provider`` entry point: Airflow's providers
manager reads it to list the operators, hooks, connection type and the operator extra link
(the release report's "Privacy report" button). The plugin (the ledger's UI pages) is
registered through the ``airflow.plugins`` entry point, which Airflow loads under its default
settings (a plugin only in the provider metadata is not loaded when providers are discovered
lazily); there is no plugins-folder copy, so it is registered once.

:func:`record_check` lets a task of your own (a Great Expectations suite, a custom test)
record its verdict under an attempt like any check operator.
"""

from __future__ import annotations

from typing import Any

from airflow_privacy import __version__
from airflow_privacy.providers.airflow.config import provider_config
from airflow_privacy.providers.airflow.connection_fields import CONN_FIELDS, UI_FIELD_BEHAVIOUR

OPERATOR_MODULES = [
    "airflow_privacy.providers.airflow.operators.anonymize",
    "airflow_privacy.providers.airflow.operators.attempt",
    "airflow_privacy.providers.airflow.operators.check",
    "airflow_privacy.providers.airflow.operators.maxent",
    "airflow_privacy.providers.airflow.operators.risk",
    "airflow_privacy.providers.airflow.operators.composition",
    "airflow_privacy.providers.airflow.operators.publish",
    "airflow_privacy.providers.airflow.operators.report",
    "airflow_privacy.providers.airflow.operators.policy",
    "airflow_privacy.providers.airflow.operators.override",
    "airflow_privacy.providers.airflow.operators.dp_release",
]
HOOK_MODULES = ["airflow_privacy.providers.airflow.hooks.ledger"]
CONNECTION_TYPES: list[dict[str, Any]] = [
    {
        "hook-class-name": "airflow_privacy.providers.airflow.hooks.ledger.PrivacyLedgerHook",
        "hook-name": "Privacy ledger",
        "connection-type": "privacyledger",
        "conn-fields": CONN_FIELDS,
        "ui-field-behaviour": UI_FIELD_BEHAVIOUR,
    }
]
EXTRA_LINKS = ["airflow_privacy.providers.airflow.operators.report.ReleaseReportLink"]


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
        "config": provider_config(),
        "notifications": ["airflow_privacy.providers.airflow.notifier.ReleaseVerdictNotifier"],
        "task-decorators": [
            {
                "name": "privacy_check",
                "class-name": "airflow_privacy.providers.airflow.decorators.privacy_check_task",
            },
            {
                "name": "anonymize",
                "class-name": "airflow_privacy.providers.airflow.decorators.anonymize_task",
            },
        ],
    }


def record_check(
    context: Any,
    name: str,
    safe: bool,
    summary: str,
    *,
    attempt_task_id: str = "open_attempt",
    reasons: list[str] | None = None,
    details: dict[str, Any] | None = None,
    privacy_ledger_conn_id: str | None = None,
) -> dict[str, Any]:
    """Record a custom task's verdict as check ``name`` of the run's attempt (the attempt
    pushed by ``attempt_task_id``); returns the envelope. ``safe`` must be True or False; a
    verdict of False is recorded and the task goes on (the gate blocks, naming the check)."""
    import logging

    from airflow_privacy.gate.custom import record_check as record
    from airflow_privacy.providers.airflow import adapter
    from airflow_privacy.providers.airflow.steps import instance_name

    own = instance_name(name, context)  # a mapped task's instance: one verdict each

    def service(ctx: Any) -> Any:
        attempt = adapter.resolve_attempt(None, attempt_task_id, context)
        return record(attempt, own, safe, summary, ctx, reasons=reasons or [], details=details)

    log = logging.getLogger("airflow.task")
    return adapter.run(
        context, service, log=log.info, conn_id=privacy_ledger_conn_id, on_unsafe="continue"
    )
