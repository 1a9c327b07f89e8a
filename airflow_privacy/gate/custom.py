"""Checks the project does not compute itself (Great Expectations suites, a custom task):
their verdict recorded under an attempt like any other check, by the custom check step
(:mod:`airflow_privacy.gate.steps.custom`, where the rules are).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.envelope import Envelope


def record_check(
    attempt: str | None,
    name: str,
    safe: bool,
    summary: str,
    ctx: GateContext,
    *,
    reasons: Sequence[str] = (),
    details: Mapping[str, Any] | None = None,
    release: str | None = None,
    ledger: str | None = None,
    step: str = "validate",
) -> Envelope:
    """Record a custom check's verdict (module doc); without an attempt only the envelope."""
    from airflow_privacy.gate.steps.custom import CUSTOM

    return CUSTOM.run(
        CUSTOM.request(
            {"attempt": attempt, "name": name, "safe": safe, "summary": summary,
             "reasons": reasons, "details": details, "release": release, "ledger": ledger,
             "step": step}
        ),
        ctx,
    )  # fmt: skip
