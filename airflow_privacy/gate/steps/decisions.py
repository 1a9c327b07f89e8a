"""A steward's decisions on an attempt, declared once like every step (``airflow-privacy
ledger mark-published | mark-blocked | supersede | override | approve | reject`` are derived
from these declarations): decide a release's open attempt through the gate, block it by hand,
set a blocked attempt aside, or ask for, approve and reject publishing a blocked attempt
despite its reasons (four eyes). The services are :mod:`airflow_privacy.gate.attempts`'s.

In Airflow the same decisions are the gate itself (``PublishReleaseOperator``) and the
human-in-the-loop ``StewardOverrideOperator``, whose arguments are a form's, not these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from airflow_privacy.gate.steps.base import Step
from airflow_privacy.gate.steps.fields import Field

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.refs import ReleaseRef

_RELEASE_ID = Field(
    "release_id", "text", "the release whose open attempt is decided: its id (3), UUID or "
    "DATASET@VERSION", cli="RELEASE", airflow=None, required=True,
)  # fmt: skip
_ATTEMPT = Field(
    "blocked_attempt", "text", "the blocked attempt's UUID (or id)", cli="ATTEMPT",
    airflow=None, required=True,
)  # fmt: skip
_BY = Field("by", "label", "who decides (default: your user name)", metavar="NAME",
            type_hint="str | None")  # fmt: skip


@dataclass(frozen=True)
class Decision:
    """One decision on an attempt: which attempt (``attempt``: a UUID or id; or the open
    attempt of ``release_id``), why, by whom, and for an approval the release file to verify
    and copy to ``destination``."""

    attempt: str | None = None
    release_id: str | None = None
    reasons: Sequence[str] = field(default_factory=tuple)
    by: str | None = None
    release: ReleaseRef | None = None
    destination: str | None = None
    set_aside: bool = False
    ledger: str | None = None

    @property
    def reason(self) -> str:
        """The one reason of a decision that takes one (empty when none was given: the
        ledger refuses a blank reason as bad input)."""
        return str(self.reasons[0]) if self.reasons else ""


class _DecisionStep(Step):
    """What the decisions share: their values become a :class:`Decision`; the ledger
    option and the output options on the command line."""

    cli_groups = ("ledger", "output")

    def request(self, values: Mapping[str, Any]) -> Decision:
        reasons = values.get("reasons")
        if reasons is None and values.get("reason") is not None:
            reasons = [values["reason"]]
        return Decision(
            attempt=values.get("blocked_attempt"),
            release_id=values.get("release_id"),
            reasons=tuple(reasons or ()),
            by=values.get("by"),
            release=values.get("release"),
            destination=values.get("to"),
            set_aside=bool(values.get("set_aside")),
            ledger=values.get("ledger"),
        )

    @staticmethod
    def open_attempt(req: Decision, ctx: GateContext) -> str:
        """The UUID of the open attempt of ``req.release_id`` (exit 5 when it has none)."""
        with ctx.open_ledger(req.ledger) as db:
            return db.open_attempt_of(db.resolve(str(req.release_id)).id).uuid


class MarkPublishedStep(_DecisionStep):
    """``ledger mark-published``: the gate on a release's open attempt, no files copied."""

    name = "mark-published"
    command = ("ledger", "mark-published")
    summary = "publish a release's open attempt through the gate (no files copied)"
    description = (
        "Decide the open attempt of RELEASE like `airflow-privacy publish` without copying "
        "files: published only if every check of the attempt passed, otherwise blocked with "
        "every reason (exit 1)."
    )
    fields = (_RELEASE_ID,)

    def run(self, req: Decision, ctx: GateContext) -> Envelope:
        from airflow_privacy.gate.attempts import PublishRequest, publish

        return publish(PublishRequest(attempt=self.open_attempt(req, ctx), ledger=req.ledger), ctx)


class BlockStep(_DecisionStep):
    """``ledger mark-blocked``: a steward blocks a release's open attempt, with reasons."""

    name = "block"
    command = ("ledger", "mark-blocked")
    summary = "block a release's open attempt, with a reason"
    description = (
        "Block the open attempt of RELEASE by hand (a steward's decision): the reasons and "
        "who are kept, and the attempt can no longer be published."
    )
    fields = (
        _RELEASE_ID,
        Field("reasons", "values", "why it is blocked", cli="--reason", airflow=None,
              required=True, metavar="TEXT", noun="reason"),
        _BY,
    )  # fmt: skip

    def run(self, req: Decision, ctx: GateContext) -> Envelope:
        from airflow_privacy.gate.attempts import block

        return block(self.open_attempt(req, ctx), list(req.reasons), ctx, req.ledger, req.by)


_REASON = Field("reason", "text", "why (kept with the decision)", required=True,
                metavar="TEXT", type_hint="str")  # fmt: skip


class SupersedeStep(_DecisionStep):
    """``ledger supersede``: a steward sets a blocked attempt aside (four eyes under a
    policy: then only asked)."""

    name = "supersede"
    command = ("ledger", "supersede")
    summary = "set a blocked attempt aside, with a reason (who, when, why are kept)"
    description = (
        "A steward's decision that a blocked attempt no longer stands (e.g. it was blocked by "
        "a data error that has been fixed). The attempt stays in the ledger as superseded, "
        "with who, when and why; the release is no longer shown as blocked. It does not "
        "publish anything: a new attempt is judged afresh by its checks. Four eyes: when the "
        "dataset has a policy this only asks, and a second, different person approves it "
        "(`ledger approve ATTEMPT`) or rejects it. Exit 0 = superseded, 1 = asked (waiting "
        "for the second person)."
    )
    fields = (
        _ATTEMPT,
        Field("reason", "text", "why the block no longer stands (kept with the decision)",
              required=True, metavar="TEXT", type_hint="str"),
        _BY,
    )  # fmt: skip

    def run(self, req: Decision, ctx: GateContext) -> Envelope:
        from airflow_privacy.gate.attempts import supersede

        return supersede(str(req.attempt), req.reason, ctx, req.ledger, req.by)


class _OverrideStep(_DecisionStep):
    """The override decisions: ``action`` is the service's
    (:class:`airflow_privacy.gate.attempts.OverrideRequest`)."""

    action: ClassVar[str]

    def run(self, req: Decision, ctx: GateContext) -> Envelope:
        from airflow_privacy.gate.attempts import OverrideRequest, override

        action = "set-aside" if self.action == "approve" and req.set_aside else self.action
        return override(
            OverrideRequest(
                attempt=str(req.attempt), action=action, reason=req.reason, by=req.by,
                release=req.release, destination=req.destination, ledger=req.ledger,
            ),
            ctx,
        )  # fmt: skip


class OverrideStep(_OverrideStep):
    """``ledger override``: ask to publish a blocked attempt despite its reasons."""

    name = "override"
    command = ("ledger", "override")
    action = "ask"
    summary = "ask to publish a blocked attempt despite its reasons (a second person approves)"
    description = (
        "A steward asks to publish a blocked attempt despite its reasons. Nothing is "
        "published until a second, different person approves (`ledger approve`); a rejection "
        "(`ledger reject`) keeps the block. Who, when and why are kept. Exit 1 = asked "
        "(waiting for the second person)."
    )
    fields = (
        _ATTEMPT,
        Field("reason", "text", "why it should be published anyway (kept with the request)",
              required=True, metavar="TEXT", type_hint="str"),
        _BY,
    )  # fmt: skip


class ApproveStep(_OverrideStep):
    """``ledger approve``: a second person approves an override (it publishes) or a
    supersede."""

    name = "approve"
    command = ("ledger", "approve")
    action = "approve"
    summary = "approve an override (it publishes) or a supersede: a second, different person"
    description = (
        "A second, different person approves a pending override (the attempt is published: "
        "with RELEASE and --to the release file is verified to be the attempt's bytes and "
        "copied there) or a pending supersede (the block no longer stands). Exit 0 = "
        "published or superseded."
    )
    fields = (
        _ATTEMPT,
        Field("release", "ref", "the attempt's release file, verified and copied to --to "
              "(without it and --to, only the ledger is updated)", cli="RELEASE",
              airflow=None),
        Field("to", "text", "the folder to publish into (with RELEASE)", airflow=None,
              metavar="DIR"),
        Field("set_aside", "flag", "approve a pending override as a supersede instead: the "
              "block no longer stands, nothing is published, a new attempt is judged afresh "
              "(no RELEASE or --to)", airflow=None),
        _REASON,
        _BY,
    )  # fmt: skip


class RejectStep(_OverrideStep):
    """``ledger reject``: a second person rejects an override or a supersede."""

    name = "reject"
    command = ("ledger", "reject")
    action = "reject"
    summary = "reject an override or a supersede (the block stands): a second, different person"
    description = (
        "A second, different person rejects a pending override or supersede: the block "
        "stands. Who, when and why are kept. Exit 1 = rejected (nothing published)."
    )
    fields = (_ATTEMPT, _REASON, _BY)


MARK_PUBLISHED = MarkPublishedStep()
BLOCK = BlockStep()
SUPERSEDE = SupersedeStep()
OVERRIDE = OverrideStep()
APPROVE = ApproveStep()
REJECT = RejectStep()
