"""Checks the project does not compute itself (Great Expectations suites, a custom task):
their verdict recorded under an attempt like any other check.

The verdict must be a real boolean (``True`` passes, ``False`` blocks); a task that fails
before recording leaves its required check without a result, which blocks the attempt.
Reasons and details must not carry an individual's sensitive values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airflow_privacy.errors import InputError
from airflow_privacy.gate.attempts import begin_check, record, skipped
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.envelope import Envelope, ReleaseFacts


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
    if not isinstance(safe, bool):
        raise InputError(f"check {name!r}: the verdict must be true or false, got {safe!r}")
    start = begin_check(attempt, ledger, ctx)  # reads something else: not compared
    if start.skip:
        return skipped(step, name, start.info)
    env = Envelope(
        step=step,
        name=name,
        outcome="passed" if safe else "failed",
        safe=safe,
        summary=summary,
        reasons=[f"{name}: {r}" for r in reasons] if not safe else [],
        release=ReleaseFacts(ref=release) if release else None,
        details=dict(details or {}),
    )
    return record(env, start, ledger, ctx)
