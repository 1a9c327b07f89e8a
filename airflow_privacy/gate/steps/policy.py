"""The policy step, declared once (:class:`PolicyStep`; ``airflow-privacy policy set`` and
``DatasetPolicyOperator`` are derived from it): record a new version of a dataset's policy
(:func:`airflow_privacy.gate.policy.set_policy`). Showing, approving and rejecting are
``policy show`` / ``approve`` / ``reject`` and the operator's ``action``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow_privacy.gate.steps.base import Known, Step
from airflow_privacy.gate.steps.fields import Field

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.policy import Policy


@dataclass(frozen=True)
class PolicyRequest:
    """A new version of ``dataset``'s policy (its lines) with who and why."""

    dataset: str
    reason: str
    criteria: list[Any] = field(default_factory=list)
    composition_measure: str | None = None
    confidence: float | None = None
    max_pvp: float | None = None
    overlap: str = "worst-case"
    maxent_c: float | None = None
    benign: list[str] = field(default_factory=list)
    approvers: list[str] = field(default_factory=list)
    max_prosecutor_risk: float | None = None
    required_steps: list[str] = field(default_factory=list)
    dp_rho_cap: float | None = None
    dp_epsilon_cap: float | None = None
    new_dataset: str | None = None
    by: str | None = None
    ledger: str | None = None


class PolicyStep(Step):
    """``policy set``: a new version of a dataset's policy (module doc)."""

    name = "policy"
    command = ("policy", "set")
    summary = "record a new version of a dataset's policy (what every release must pass)"
    description = (
        "Record what every release of --dataset must pass: the kinds of check it must have "
        "passed, criteria with their minimum parameters, the composition audit's limits, "
        "MaxEnt's, its DP budget, the benign values a check may declare, who approves "
        "changes. In force at once when it keeps or tightens every line of the policy in "
        "force; a change that loosens anything is proposed and waits for a second, "
        "different person (policy approve / reject). Exit 0 = in force, 1 = proposed, "
        "2 = bad input, 5 = a proposal is already waiting."
    )  # fmt: skip
    operator = "airflow_privacy.providers.airflow.operators.policy.DatasetPolicyOperator"
    fields = (
        Field("dataset", "label", "the dataset the policy governs", required=True,
              metavar="NAME", type_hint="str"),
        Field("criteria", "values", "a criterion every release must pass, with its minimum "
              "parameters, NAME:PARAM=VALUE,... (e.g. k-anonymity:k=5); a check with weaker "
              "parameters does not count", cli="--criterion", metavar="NAME:PARAMS",
              type_hint="Sequence[str] | None"),
        Field("composition_measure", "choice", "the composition audit's measure (with "
              "confidence and max_pvp)", choices=("ganta", "posterior"),
              type_hint="str | None"),
        Field("confidence", "number", "the audit's confidence: an audit counts only at this "
              "or a lower confidence", low=0, high=1, open_low=True, metavar="C",
              type_hint="float | str | None"),
        Field("max_pvp", "number", "the audit's largest share of people pinned, in percent",
              low=0, high=100, metavar="PCT", type_hint="float | str | None"),
        Field("overlap", "choice", "worst-case (only worst-case audits count) or known "
              "(either counts)", choices=("worst-case", "known"), default="worst-case",
              type_hint="str"),
        Field("maxent_c", "number", "MaxEnt's largest posterior: a MaxEnt check counts only "
              "at this c or lower", low=0, high=1, open_low=True, metavar="C",
              type_hint="float | str | None"),
        Field("benign", "values", "a sensitive value checks may declare benign (default: "
              "none)", airflow="benign_values", metavar="VALUE",
              type_hint="Sequence[str] | None"),
        Field("approvers", "values", "who may approve a loosening change (default: any "
              "second person)", cli="--approver", metavar="NAME",
              type_hint="Sequence[str] | None"),
        Field("max_prosecutor_risk", "number", "the highest prosecutor risk a release may "
              "have on its QIs (default: identity disclosure accepted, e.g. QIs public "
              "anyway)", low=0, high=1, open_low=True, metavar="RISK",
              type_hint="float | str | None"),
        Field("required_steps", "values", "a kind of check every release must have passed, "
              "whatever its DAG names it: check, maxent, audit (the composition audit), risk "
              "(with limits) or validate", cli="--require", metavar="STEP",
              type_hint="Sequence[str] | None"),
        Field("dp_rho_cap", "number", "the privacy budget of the dataset's differentially "
              "private releases: their total zero-concentrated DP loss rho, never reset "
              "(default: no DP release)", low=0, high=100, open_low=True, metavar="RHO",
              exclusive="dp-cap", type_hint="float | str | None"),
        Field("dp_epsilon_cap", "number", "the budget as a total pure-DP epsilon instead "
              "(its DP releases use the Laplace mechanism)", low=0, high=100, open_low=True,
              metavar="EPS", exclusive="dp-cap", type_hint="float | str | None"),
        Field("new_dataset", "label", "confirm a new dataset whose name is close to one the "
              "ledger knows by repeating its name", metavar="NAME", type_hint="str | None"),
        Field("by", "label", "who sets it (default: the user, or the task)", metavar="NAME",
              type_hint="str | None"),
        Field("reason", "text", "why (kept with the version)", required=True, metavar="TEXT",
              type_hint="str"),
    )  # fmt: skip
    cli_groups = ("ledger", "output")

    def rules(self, known: Known) -> None:
        from airflow_privacy.errors import InputError, opt

        keys = ("composition_measure", "confidence", "max_pvp")
        if known.has(*keys):
            given = [known[k] is not None for k in keys]
            if any(given) and not all(given):
                raise InputError(
                    f"the composition line needs {opt('composition_measure')}, "
                    f"{opt('confidence')} and {opt('max_pvp')} together"
                )

    def request(self, values: Mapping[str, Any]) -> PolicyRequest:
        return PolicyRequest(
            dataset=values["dataset"],
            reason=values["reason"],
            criteria=list(values.get("criteria") or []),
            composition_measure=values.get("composition_measure"),
            confidence=values.get("confidence"),
            max_pvp=values.get("max_pvp"),
            overlap=values.get("overlap") or "worst-case",
            maxent_c=values.get("maxent_c"),
            benign=list(values.get("benign") or []),
            approvers=list(values.get("approvers") or []),
            max_prosecutor_risk=values.get("max_prosecutor_risk"),
            required_steps=list(values.get("required_steps") or []),
            dp_rho_cap=values.get("dp_rho_cap"),
            dp_epsilon_cap=values.get("dp_epsilon_cap"),
            new_dataset=values.get("new_dataset"),
            by=values.get("by"),
            ledger=values.get("ledger"),
        )

    def run(self, req: PolicyRequest, ctx: GateContext) -> Envelope:
        """Build the policy (its values checked as declared) and record it."""
        from airflow_privacy.gate.policy import set_policy

        policy = build_policy(
            criteria=req.criteria, measure=req.composition_measure, confidence=req.confidence,
            max_pvp=req.max_pvp, overlap=req.overlap, maxent_c=req.maxent_c,
            benign=req.benign, approvers=req.approvers,
            max_prosecutor_risk=req.max_prosecutor_risk, required_steps=req.required_steps,
            dp_rho_cap=req.dp_rho_cap, dp_epsilon_cap=req.dp_epsilon_cap,
        )  # fmt: skip
        return set_policy(
            req.dataset, policy, by=req.by, reason=req.reason, ctx=ctx, ledger=req.ledger,
            new_dataset=req.new_dataset,
        )  # fmt: skip


POLICY = PolicyStep()


#: the kinds of check a policy may require (the steps that record a verdict)
REQUIRABLE = ("check", "maxent", "audit", "risk", "validate")


def build_policy(
    *,
    criteria: Sequence[str] = (),
    measure: str | None = None,
    confidence: float | None = None,
    max_pvp: float | None = None,
    overlap: str = "worst-case",
    maxent_c: float | None = None,
    benign: Sequence[str] = (),
    approvers: Sequence[str] = (),
    max_prosecutor_risk: float | None = None,
    required_steps: Sequence[str] = (),
    dp_rho_cap: float | None = None,
    dp_epsilon_cap: float | None = None,
) -> Policy:
    """A policy from its front end's values (the option names in messages are the front
    end's: ``opt``). The ranges, choices and the composition line's rule are this step's
    declaration (:class:`PolicyStep`), checked here for every caller."""
    from airflow_privacy.errors import InputError, opt
    from airflow_privacy.gate.criteria import parse_criteria
    from airflow_privacy.gate.policy import Policy

    POLICY.check(
        Known(
            {"composition_measure": measure, "confidence": confidence, "max_pvp": max_pvp,
             "overlap": overlap, "maxent_c": maxent_c,
             "max_prosecutor_risk": max_prosecutor_risk, "dp_rho_cap": dp_rho_cap,
             "dp_epsilon_cap": dp_epsilon_cap}
        )
    )  # fmt: skip
    lines = parse_criteria(list(criteria), "criterion") if criteria else []
    names = [n for n, _ in lines]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"{opt('criterion')} {dupes[0]!r} is given twice: one line per criterion")
    composition = None
    if measure is not None and confidence is not None and max_pvp is not None:
        composition = {"measure": measure, "confidence": float(confidence),
                       "max_pvp": float(max_pvp), "overlap": overlap}  # fmt: skip
    steps = list(dict.fromkeys(str(x).strip() for x in required_steps))
    for step in steps:
        if step not in REQUIRABLE:
            raise InputError(
                f"{opt('required_steps')}: {step!r} is not a kind of check (known: "
                f"{', '.join(REQUIRABLE)})"
            )
    dp = (
        {"unit": "rho", "cap": float(dp_rho_cap)} if dp_rho_cap is not None
        else {"unit": "epsilon", "cap": float(dp_epsilon_cap)} if dp_epsilon_cap is not None
        else None
    )  # fmt: skip
    if (
        not lines and not steps and composition is None and maxent_c is None
        and max_prosecutor_risk is None and dp is None
    ):  # fmt: skip
        raise InputError(
            f"a policy needs at least one line: {opt('required_steps')}, {opt('criterion')}, "
            f"the composition line, {opt('maxent_c')}, {opt('max_prosecutor_risk')} or a DP "
            f"budget ({opt('dp_rho_cap')} / {opt('dp_epsilon_cap')})"
        )
    return Policy(
        criteria=[(n, dict(p)) for n, p in lines],
        composition=composition,
        maxent_c=float(maxent_c) if maxent_c is not None else None,
        benign=sorted({str(b) for b in benign}),
        approvers=sorted({str(a).strip() for a in approvers if str(a).strip()}),
        max_prosecutor_risk=float(max_prosecutor_risk) if max_prosecutor_risk is not None else None,
        required_steps=steps,
        dp=dp,
    )
