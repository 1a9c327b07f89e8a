"""The asset event of a published release (Airflow assets): ``PublishReleaseOperator(asset=
...)`` declares the asset as the gate's outlet, and when the gate publishes, the event's
``extra`` says what was published and why it could be.

Airflow emits a task's outlet events only when the task succeeds, and the gate fails
whenever it does not publish: a DAG scheduled on the asset runs after a published release,
never after a blocked one. A gate that finds its content already published succeeds too
(nothing new is published): its event says ``outcome: already-published``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def as_asset(value: Any) -> Any:
    """An ``Asset`` from an ``Asset`` or a URI (``file:///srv/published/survey``,
    ``s3://bucket/survey``)."""
    from airflow.sdk import Asset

    from airflow_privacy.errors import InputError

    if isinstance(value, Asset):
        return value
    if isinstance(value, str) and value.strip():
        return Asset(value.strip())
    raise InputError(f"asset must be an Asset or its URI, got {value!r}")


def asset_extra(envelope: Mapping[str, Any]) -> dict[str, Any]:
    """The event's ``extra``: the release (id, UUID, dataset, version), the attempt, the
    outcome and verdict, the policy version it was decided under, the criteria its checks
    passed and a DP release's budget. Ledger identities and words only: nothing of the data."""
    attempt = envelope.get("attempt") or {}
    details = envelope.get("details") or {}
    return {
        "release_id": attempt.get("release_id"),
        "release_uuid": attempt.get("release_uuid"),
        "dataset": attempt.get("dataset"),
        "version": attempt.get("version"),
        "attempt": attempt.get("uuid"),
        "outcome": envelope.get("outcome"),
        "verdict": "published",
        "destination": details.get("destination"),
        "policy_version": details.get("policy_version"),
        "criteria": list(details.get("criteria") or []),
        "dp": details.get("dp"),
    }
