"""The application layer: one service per step of a release gate, under both front ends.

The command line (:mod:`airflow_privacy.cli`) and the Airflow operators
(:mod:`airflow_privacy.providers.airflow`) only adapt their arguments into the typed requests
below and render the one report envelope (:mod:`.envelope`) each service returns; neither
orchestrates an engine itself. Every invariant of the gate (docs/design.md) is enforced here
and in the ledger, so it holds whichever front end, and whichever DAG, drives it.

* anonymize: :func:`.anonymize.run_anonymize` (:class:`.anonymize.AnonymizeRequest`)
* open an attempt: :func:`.attempts.open_attempt` (:class:`.attempts.AttemptRequest`)
* check criteria: :func:`.check.run_check` (:class:`.check.CheckRequest`)
* MaxEnt risk: :func:`.maxent.run_maxent` (:class:`.maxent.MaxEntRequest`)
* composition audit: :func:`.audit.run_audit` (:class:`.audit.AuditRequest`)
* publish, the gate: :func:`.attempts.publish` (:class:`.attempts.PublishRequest`)
* block / supersede by hand: :func:`.attempts.block`, :func:`.attempts.supersede`
* release report: :func:`.report.run_report` (:class:`.report.ReportRequest`)
* a custom check's verdict: :func:`.custom.record_check`

Release references (path, object-store URI, SQL table) are :class:`.refs.ReleaseRef`; every
read and write goes through :mod:`.tables`; the ledger is located once
(:mod:`airflow_privacy.ledger.location`) through the front end's :class:`.context.GateContext`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.refs import ReleaseRef

__all__ = ["Envelope", "GateContext", "ReleaseRef"]

_LAZY = {
    "Envelope": "airflow_privacy.gate.envelope",
    "GateContext": "airflow_privacy.gate.context",
    "ReleaseRef": "airflow_privacy.gate.refs",
}


def __getattr__(name: str) -> Any:
    """The package's names, imported when first used: the command line builds its parser
    from :mod:`airflow_privacy.gate.steps` (a subpackage) on every start, which must not pay
    for the context, the envelope and the references."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
