"""The gate's steps, each declared once (:mod:`airflow_privacy.gate.steps.base`): the
command line, the operators' argument checks, the error wording and the reference tables of
the docs are derived from these declarations.

Importing this package imports no engine and no step: a command imports its own step's
module; :data:`STEPS` (every declaration, by command name) is built when first read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow_privacy.gate.steps.base import Step

    STEPS: dict[str, Step]

#: the module of each declared step and the name of its declaration there
DECLARATIONS: tuple[tuple[str, str], ...] = (
    ("anonymize", "ANONYMIZE"),
    ("attempt", "ATTEMPT"),
    ("audit", "AUDIT"),
    ("audit_algorithm", "AUDIT_ALGORITHM"),
    ("check", "CHECK"),
    ("custom", "CUSTOM"),
    ("decisions", "MARK_PUBLISHED"),
    ("decisions", "BLOCK"),
    ("decisions", "SUPERSEDE"),
    ("decisions", "OVERRIDE"),
    ("decisions", "APPROVE"),
    ("decisions", "REJECT"),
    ("disclosure", "DISCLOSURE"),
    ("dp_release", "DP_RELEASE"),
    ("ledger", "LEDGER_LIST"),
    ("ledger", "LEDGER_SHOW"),
    ("ledger", "LEDGER_IMPORT"),
    ("maxent", "MAXENT"),
    ("policy", "POLICY"),
    ("policy_decisions", "POLICY_SHOW"),
    ("policy_decisions", "POLICY_APPROVE"),
    ("policy_decisions", "POLICY_REJECT"),
    ("publish", "PUBLISH"),
    ("report", "REPORT"),
    ("risk", "RISK"),
    ("skyline", "SKYLINE"),
)


def __getattr__(name: str) -> Any:
    """``STEPS``: every declared step by its command name, imported on first use."""
    if name != "STEPS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    steps = [
        getattr(importlib.import_module(f"{__name__}.{module}"), constant)
        for module, constant in DECLARATIONS
    ]
    table = {step.name: step for step in steps}
    globals()["STEPS"] = table
    return table
