"""A check the project does not compute itself (a Great Expectations suite, a test of your
own), declared once like every step (:class:`CustomCheckStep`; ``airflow-privacy
record-check`` is derived from it, and
:func:`airflow_privacy.providers.airflow.record_check` in a task): its verdict recorded
under an attempt like any other check, through the attempt protocol of
:class:`~airflow_privacy.gate.steps.base.MeasuringStep` (the attempt must be open; an
attempt whose content is published already takes no more checks).

The verdict must be a real boolean (``True`` passes, ``False`` blocks); a task that fails
before recording leaves its required check without a result, which blocks the attempt.
Reasons and details must not carry an individual's sensitive values. The check reads no
release of its own, so the attempt's content digest is not compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow_privacy.gate.steps.base import Known, MeasuringStep
from airflow_privacy.gate.steps.fields import Field

if TYPE_CHECKING:
    from airflow_privacy.gate.attempts import CheckStart
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope


@dataclass(frozen=True)
class CustomCheckRequest:
    """A verdict to record as check ``name`` of ``attempt`` (None: the envelope only)."""

    name: str
    safe: bool
    summary: str
    attempt: str | None = None
    reasons: Sequence[str] = field(default_factory=tuple)
    details: Mapping[str, Any] | None = None
    release: str | None = None
    ledger: str | None = None
    step: str = "validate"


class CustomCheckStep(MeasuringStep):
    """``record-check``: record a verdict computed elsewhere (module doc)."""

    name = "validate"
    command = ("record-check",)
    summary = "record a check computed elsewhere (e.g. a Great Expectations suite) under an attempt"
    description = (
        "Record the verdict of a check the project does not compute itself (a Great "
        "Expectations suite, a test of your own) as check --name of --attempt, like any "
        "other check: the gate counts it, and a failed verdict blocks the attempt with its "
        "reasons. Exit 0 = recorded as passed, 1 = recorded as failed. Reasons must not "
        "carry an individual's sensitive values."
    )
    fields = (
        Field("verdict", "choice", "the check's verdict", choices=("passed", "failed"),
              required=True, airflow=None),
        Field("summary", "text", "one line saying what was checked and what was found",
              required=True, metavar="TEXT", airflow=None),
        Field("reasons", "values", "why it failed (kept with a failed verdict)",
              cli="--reason", airflow=None, metavar="TEXT", noun="reason"),
    )  # fmt: skip
    cli_groups = ("attempt", "output")

    def request(self, values: Mapping[str, Any]) -> CustomCheckRequest:
        verdict = values.get("verdict")
        safe = values.get("safe", verdict == "passed")
        return CustomCheckRequest(
            name=self.name if values.get("name") is None else values["name"],
            safe=safe,
            summary=values.get("summary") or "",
            attempt=values.get("attempt"),
            reasons=tuple(values.get("reasons") or ()),
            details=values.get("details"),
            release=values.get("release"),
            ledger=values.get("ledger"),
            step=values.get("step") or self.name,
        )

    def values_of(self, req: CustomCheckRequest) -> Known:
        return Known({"safe": req.safe, "name": req.name, "reasons": list(req.reasons)})

    def rules(self, known: Known) -> None:
        from airflow_privacy.errors import InputError, opt

        if known.has("name") and (not isinstance(known["name"], str) or not known["name"].strip()):
            raise InputError(f"{opt('name')} must name the check, got {known['name']!r}")
        if known.has("safe") and not isinstance(known["safe"], bool):
            name = known.get("name", "check")
            raise InputError(f"check {name!r}: the verdict must be true or false, got "
                             f"{known['safe']!r}")  # fmt: skip
        for reason in known.get("reasons") or []:
            if not isinstance(reason, str) or not reason.strip():
                raise InputError(f"{opt('reasons')} must say why, got {reason!r}")

    def reads(self, req: CustomCheckRequest) -> None:
        return None  # what it checked is not a release the gate can compare

    def measure(
        self, req: CustomCheckRequest, ctx: GateContext, start: CheckStart, prepared: Any
    ) -> Envelope:
        from airflow_privacy.gate.envelope import Envelope, ReleaseFacts

        return Envelope(
            step=req.step,
            name=req.name,
            outcome="passed" if req.safe else "failed",
            safe=req.safe,
            summary=req.summary,
            reasons=[f"{req.name}: {r}" for r in req.reasons] if not req.safe else [],
            release=ReleaseFacts(ref=req.release) if req.release else None,
            details=dict(req.details or {}),
        )


CUSTOM = CustomCheckStep()
