"""Reading a dataset's policy and deciding a proposed version, declared once like every step
(``airflow-privacy policy show | approve | reject`` are derived from these declarations; the
services are :mod:`airflow_privacy.gate.policy`'s). Recording a version is the policy step
(:mod:`airflow_privacy.gate.steps.policy`). In Airflow, ``DatasetPolicyOperator`` does all
four by its ``action``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_privacy.gate.steps.base import Step
from airflow_privacy.gate.steps.fields import Field

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope

_DATASET = Field("dataset", "label", "the dataset", required=True, metavar="NAME",
                 type_hint="str")  # fmt: skip


@dataclass(frozen=True)
class PolicyDecision:
    """Show ``dataset``'s policy, or decide its proposed ``version`` (with who and why)."""

    dataset: str
    version: int | None = None
    by: str | None = None
    reason: str = ""
    ledger: str | None = None


class _PolicyStep(Step):
    cli_groups = ("ledger", "output")

    def request(self, values: Mapping[str, Any]) -> PolicyDecision:
        version = values.get("version")
        return PolicyDecision(
            dataset=values["dataset"],
            version=int(version) if version is not None else None,
            by=values.get("by"),
            reason=values.get("reason") or "",
            ledger=values.get("ledger"),
        )


class PolicyShowStep(_PolicyStep):
    """``policy show``: the policy in force and its history."""

    name = "policy-show"
    command = ("policy", "show")
    summary = "the policy in force and its history"
    description = (
        "Show the policy in force for --dataset (each line: what every release must pass) "
        "and every version of it: who proposed it, why, who decided."
    )
    fields = (_DATASET,)

    def run(self, req: PolicyDecision, ctx: GateContext) -> Envelope:
        from airflow_privacy.gate.policy import show_policy

        return show_policy(req.dataset, ctx, req.ledger)


class _DecideStep(_PolicyStep):
    approve: bool

    def run(self, req: PolicyDecision, ctx: GateContext) -> Envelope:
        from airflow_privacy.gate.policy import decide_policy

        assert req.version is not None  # required
        return decide_policy(
            req.dataset, req.version, approve=self.approve, by=req.by, reason=req.reason,
            ctx=ctx, ledger=req.ledger,
        )  # fmt: skip


def _decide_fields(words: str) -> tuple[Field, ...]:
    return (
        _DATASET,
        Field(
            "version",
            "whole",
            f"the proposed version to {words}",
            required=True,
            low=1,
            metavar="N",
            type_hint="int",
        ),
        Field(
            "by",
            "label",
            "who decides (default: your user name)",
            metavar="NAME",
            type_hint="str | None",
        ),
        Field(
            "reason",
            "text",
            "why (kept with the version)",
            required=True,
            metavar="TEXT",
            type_hint="str",
        ),
    )


class PolicyApproveStep(_DecideStep):
    """``policy approve``: a second person approves a proposed version (it takes effect)."""

    name = "policy-approve"
    command = ("policy", "approve")
    summary = "approve a proposed version (it takes effect): a second person"
    description = (
        "Approve the proposed version of --dataset's policy: it takes effect. The person "
        "who proposed it cannot approve it (four eyes). Exit 0 = in force."
    )
    fields = _decide_fields("approve")
    approve = True


class PolicyRejectStep(_DecideStep):
    """``policy reject``: a second person rejects a proposed version."""

    name = "policy-reject"
    command = ("policy", "reject")
    summary = "reject a proposed version: a second person"
    description = (
        "Reject the proposed version of --dataset's policy: the policy in force stays. "
        "Exit 1 = rejected."
    )
    fields = _decide_fields("reject")
    approve = False


POLICY_SHOW = PolicyShowStep()
POLICY_APPROVE = PolicyApproveStep()
POLICY_REJECT = PolicyRejectStep()
