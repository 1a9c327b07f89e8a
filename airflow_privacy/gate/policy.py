"""A dataset's policy: what every release of the dataset must pass, owned by the
organization and kept in the ledger (:mod:`airflow_privacy.ledger.policies`), not in a run's
parameters.

A policy holds *minimums*:

* the kinds of check every release must have passed (``required_steps``: ``audit`` means a
  composition audit is among the attempt's passed checks, whatever the DAG calls it);
* criteria with their parameters (``k-anonymity:k=5``): a check of the attempt must have
  passed the criterion with parameters at least as strict, as each parameter's declaration
  says (:attr:`Parameter.stricter <airflow_privacy.core.criteria.base.Parameter.stricter>`:
  a higher ``k``, a lower ``t``; facts such as a population size must be equal);
* the composition audit: its measure, and at most this confidence and share pinned
  (``max_pvp``), worst-case overlap unless the policy accepts a known one;
* MaxEnt: at most this confidence ``c``;
* the privacy budget of its differentially private releases (``dp``: a cap on the total
  zCDP ``rho``, or on the total pure ``epsilon``, never reset: :mod:`airflow_privacy.ledger.
  budget`); without it the dataset takes no DP release;
* the sensitive values a check may declare benign (none unless listed);
* who may approve a change that loosens it (default: any second person).

A run may tighten the policy, never loosen it: the gate blocks an attempt whose checks do
not meet a line, naming the line and the strongest check recorded. A new version that
loosens anything waits for a second, different person (:func:`decide_policy`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.envelope import Envelope
from airflow_privacy.vocabulary import DP_KIND

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.ledger import AttemptInfo, PolicyInfo
    from airflow_privacy.ledger.budget import Cap


@dataclass(frozen=True)
class Policy:
    """The lines of a policy (module doc)."""

    criteria: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    composition: dict[str, Any] | None = None
    maxent_c: float | None = None
    benign: list[str] = field(default_factory=list)
    approvers: list[str] = field(default_factory=list)
    #: the highest prosecutor risk a release may have on its QIs (None: identity disclosure
    #: is accepted, e.g. a bucketized release whose QIs are public anyway)
    max_prosecutor_risk: float | None = None
    #: the kinds of check (steps) every release must have passed
    required_steps: list[str] = field(default_factory=list)
    #: the DP budget: ``{"unit": "rho" | "epsilon", "cap": X}`` (None: no DP release)
    dp: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "require": list(self.required_steps),
            "criteria": [{"name": n, "parameters": dict(p)} for n, p in self.criteria],
            "composition": dict(self.composition) if self.composition else None,
            "maxent": {"c": self.maxent_c} if self.maxent_c is not None else None,
            "benign": list(self.benign),
            "approvers": list(self.approvers),
            "identity": (
                {"max_prosecutor_risk": self.max_prosecutor_risk}
                if self.max_prosecutor_risk is not None
                else None
            ),
            "dp": dict(self.dp) if self.dp else None,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Policy:
        maxent = d.get("maxent") or {}
        return cls(
            criteria=[
                (str(c["name"]), dict(c.get("parameters") or {})) for c in d.get("criteria") or []
            ],
            composition=dict(d["composition"]) if d.get("composition") else None,
            maxent_c=float(maxent["c"]) if maxent.get("c") is not None else None,
            benign=[str(b) for b in d.get("benign") or []],
            approvers=[str(a) for a in d.get("approvers") or []],
            max_prosecutor_risk=(
                float(identity["max_prosecutor_risk"])
                if (identity := d.get("identity") or {}).get("max_prosecutor_risk") is not None
                else None
            ),
            required_steps=[str(x) for x in d.get("require") or []],
            dp=(
                {"unit": str(dp["unit"]), "cap": float(dp["cap"])}
                if isinstance(dp := d.get("dp"), Mapping) and dp.get("unit") in ("rho", "epsilon")
                else None
            ),
        )

    def lines(self) -> list[str]:
        """Every requirement in words, one per line."""
        out = [f"requires a passed {step} check" for step in self.required_steps]
        out += [criterion_text(n, p) for n, p in self.criteria]
        if self.composition:
            out.append(composition_text(self.composition))
        if self.maxent_c is not None:
            out.append(f"maxent: c <= {self.maxent_c:g}")
        out.append(
            f"identity: highest prosecutor risk <= {self.max_prosecutor_risk:g}"
            if self.max_prosecutor_risk is not None
            else "identity: disclosure of identity accepted (no limit)"
        )
        out.append(dp_text(self.dp))
        out.append("benign values: " + (", ".join(self.benign) if self.benign else "none"))
        out.append("approvers: " + (", ".join(self.approvers) or "any second person"))
        return out


def composition_text(line: Mapping[str, Any]) -> str:
    return (
        f"composition: {line['measure']}, confidence <= {float(line['confidence']):g}, "
        f"max_pvp <= {float(line['max_pvp']):g}%, {line['overlap']} overlap"
    )


def dp_text(line: Mapping[str, Any] | None) -> str:
    if not line:
        return "differential privacy: no DP release (no budget)"
    return f"differential privacy: total {line['unit']} <= {float(line['cap']):g}, never reset"


def dp_cap(held: PolicyInfo | None) -> Cap | None:
    """The budget line of a dataset's policy in force, for the ledger (None: no policy,
    or one that allows no DP release)."""
    from airflow_privacy.ledger.budget import Cap

    if held is None:
        return None
    line = Policy.from_dict(held.policy).dp
    if not line:
        return None
    return Cap(unit=str(line["unit"]), cap=float(line["cap"]), policy_version=held.version)


def criterion_text(name: str, params: Mapping[str, Any]) -> str:
    inner = ",".join(f"{k}={_fmt(v)}" for k, v in params.items() if v is not None)
    return f"{name}:{inner}" if inner else name


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list):
        return ";".join(map(str, v))
    return str(v)


#: the kinds of check a policy may require (the steps that record a verdict)
REQUIRABLE = ("check", "maxent", "audit", "risk", "validate")


# ------------------------------------------------------------------------- building
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
    end's: ``opt``). The ranges, choices and the composition line's rule are the policy
    step's declaration (:class:`airflow_privacy.gate.steps.policy.PolicyStep`), checked
    here for every caller."""
    from airflow_privacy.gate.criteria import parse_criteria
    from airflow_privacy.gate.steps.base import Known
    from airflow_privacy.gate.steps.policy import POLICY

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


# ----------------------------------------------------------------------- comparing
def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)


def meets(name: str, measured: Mapping[str, Any], minimum: Mapping[str, Any]) -> str | None:
    """Why parameters ``measured`` of criterion ``name`` are weaker than ``minimum`` (None:
    at least as strict)."""
    from airflow_privacy.core.criteria.registry import known

    for key, want in minimum.items():
        if want is None:
            continue
        got = measured.get(key)
        cls = known(name)
        declared = cls.parameter(key) if cls is not None else None
        way = declared.stricter if declared is not None else ""
        if got is None:
            return f"{key} was not set (the policy's is {_fmt(want)})"
        g, w = _num(got), _num(want)
        if way == "higher" and g is not None and w is not None:
            if g < w:
                return f"{key}={_fmt(got)} is below the policy's {_fmt(want)}"
        elif way == "lower" and g is not None and w is not None:
            if g > w:
                return f"{key}={_fmt(got)} is above the policy's {_fmt(want)}"
        elif got != want:
            return f"{key}={_fmt(got)} is not the policy's {_fmt(want)}"
    return None


def _composition_meets(measured: Mapping[str, Any], line: Mapping[str, Any]) -> str | None:
    if measured.get("measure") != line["measure"]:
        return f"measure {measured.get('measure')!r} is not the policy's {line['measure']!r}"
    conf, pvp = _num(measured.get("confidence")), _num(measured.get("max_pvp"))
    if conf is None or conf > float(line["confidence"]):
        return (
            f"confidence {measured.get('confidence')} is above the policy's {line['confidence']:g}"
        )
    if pvp is None or pvp > float(line["max_pvp"]):
        return f"max_pvp {measured.get('max_pvp')} is above the policy's {line['max_pvp']:g}"
    if line["overlap"] == "worst-case" and measured.get("overlap") != "worst-case":
        return f"overlap {measured.get('overlap')!r} is not the policy's worst case"
    return None


def loosened(old: Policy | None, new: Policy) -> list[str]:
    """The lines of ``old`` that ``new`` weakens or drops, in words (empty: it only keeps or
    tightens them)."""
    if old is None:
        return []
    out: list[str] = [
        f"no longer requires a passed {step} check"
        for step in old.required_steps
        if step not in new.required_steps
    ]
    mine = dict(new.criteria)
    for name, params in old.criteria:
        if name not in mine:
            out.append(f"drops {criterion_text(name, params)}")
        elif (why := meets(name, mine[name], params)) is not None:
            out.append(f"loosens {criterion_text(name, params)}: {why}")
    if old.composition:
        if not new.composition:
            out.append("drops the composition line")
        elif (why := _composition_meets(new.composition, old.composition)) is not None:
            out.append(f"loosens the composition line: {why}")
    if old.maxent_c is not None and (new.maxent_c is None or new.maxent_c > old.maxent_c):
        out.append(f"loosens maxent: c <= {old.maxent_c:g}")
    more = sorted(set(new.benign) - set(old.benign))
    if more:
        out.append(f"declares more benign values ({', '.join(more)})")
    if set(new.approvers) != set(old.approvers):
        out.append("changes who approves")
    if old.max_prosecutor_risk is not None and (
        new.max_prosecutor_risk is None or new.max_prosecutor_risk > old.max_prosecutor_risk
    ):
        out.append(f"loosens identity: highest prosecutor risk <= {old.max_prosecutor_risk:g}")
    if new.dp and (
        not old.dp
        or new.dp["unit"] != old.dp["unit"]
        or float(new.dp["cap"]) > float(old.dp["cap"])
    ):
        out.append(f"allows more DP releases ({dp_text(old.dp)} -> {dp_text(new.dp)})")
    return out


def _benign_ok(row: Mapping[str, Any], policy: Policy) -> bool:
    params = row.get("parameters") if isinstance(row.get("parameters"), Mapping) else {}
    assert isinstance(params, Mapping)
    return set(map(str, params.get("benign") or [])) <= set(policy.benign)


def dp_reasons(info: AttemptInfo, held: PolicyInfo, policy: Policy) -> list[str]:
    """Why a differentially private release may not be published under ``policy`` (empty:
    it may). Its privacy is its spend, recorded with it under the dataset's budget when its
    noise was drawn: it needs a passed ``dp-release`` check (the record of that spend) and
    a policy that still allows DP releases. The lines about partitions (criteria, the
    composition audit, MaxEnt, identity) say nothing about noisy counts and do not apply."""
    head = f"policy v{held.version} of {held.dataset!r}"
    out: list[str] = []
    if not policy.dp:
        out.append(f"{head} allows no differentially private release (it sets no DP budget)")
    if not [c for c in info.checks if c.step == "dp-release" and c.safe is True]:
        out.append(f"{head}: a DP release needs its dp-release record (its spend of the budget)")
    return out


def policy_reasons(info: AttemptInfo, held: PolicyInfo) -> list[str]:
    """Why the attempt's checks do not meet its dataset's policy (empty: they do), one
    reason per line missed, naming the strongest check recorded for it."""
    from airflow_privacy.gate.rules import check_problem

    policy = Policy.from_dict(held.policy)
    if info.release.kind == DP_KIND:
        return dp_reasons(info, held, policy)
    rows: list[tuple[str, Mapping[str, Any]]] = []
    failed: set[str] = set()  # criteria a recorded check measured and did not pass
    for c in info.checks:
        env = c.envelope if isinstance(c.envelope, dict) else {}
        results = [r for r in env.get("results") or [] if isinstance(r, Mapping)]
        failed |= {str(r.get("criterion")) for r in results if r.get("safe") is not True}
        if c.safe is not True or check_problem(info.release, env) is not None:
            continue
        rows += [(c.name, r) for r in results]
    head = f"policy v{held.version} of {held.dataset!r}"
    out: list[str] = []

    for step in policy.required_steps:
        kinds = [c for c in info.checks if c.step == step]
        good = [
            c for c in kinds
            if c.safe is True and check_problem(
                info.release, c.envelope if isinstance(c.envelope, dict) else {}
            ) is None
        ]  # fmt: skip
        if not good:
            got = (
                f"its {step} check(s) ({', '.join(repr(c.name) for c in kinds)}) did not pass"
                if kinds
                else f"no {step} check was recorded under this attempt"
            )
            out.append(f"{head} requires a passed {step} check: {got}")

    def passed(name: str) -> list[tuple[str, Mapping[str, Any]]]:
        return [(n, r) for n, r in rows if r.get("criterion") == name and r.get("safe") is True]

    for name, params in policy.criteria:
        candidates = passed(name)
        why = [meets(name, _params(r), params) for _, r in candidates]
        if any(
            w is None and _benign_ok(r, policy) for w, (_, r) in zip(why, candidates, strict=True)
        ):
            continue
        line = criterion_text(name, params)
        if not candidates:
            out.append(f"{head} requires {line}: " + _none_passed(name, failed))
        else:
            n, r = candidates[0]
            detail = why[0] or "it declared benign values the policy does not list"
            out.append(
                f"{head} requires {line}; check {n!r} measured "
                f"{criterion_text(name, _params(r))}: {detail}"
            )
    if policy.composition:
        found = passed("composition")
        if not any(_composition_meets(_params(r), policy.composition) is None for _, r in found):
            weaker = _composition_meets(_params(found[0][1]), policy.composition) if found else None
            missing = weaker or _none_passed("composition", failed)
            out.append(f"{head} requires {composition_text(policy.composition)}: {missing}")
    if policy.maxent_c is not None:
        limit = policy.maxent_c
        found = passed("maxent")
        ok = [r for _, r in found if (_num(_params(r).get("c")) or math.inf) <= limit]
        if not any(_benign_ok(r, policy) for r in ok):
            got = ", ".join(str(_params(r).get("c")) for _, r in found) or "no passed MaxEnt check"
            out.append(f"{head} requires maxent c <= {limit:g}: measured {got}")
    if policy.max_prosecutor_risk is not None:
        spec = info.release.spec if isinstance(info.release.spec, Mapping) else {}
        identity = spec.get("identity") if isinstance(spec.get("identity"), Mapping) else None
        cap = policy.max_prosecutor_risk
        if identity is None:
            out.append(
                f"{head} limits the highest prosecutor risk to {cap:g}, but this release's "
                "identity risk was not measured (content recorded before it was): open a new "
                "attempt"
            )
        elif float(identity.get("highest") or 0.0) > cap:
            out.append(
                f"{head} limits the highest prosecutor risk to {cap:g}; this release's is "
                f"{float(identity['highest']):.3g} ({int(identity.get('sample_uniques') or 0):,} "
                f"sample uniques, {int(identity.get('records_at_risk') or 0):,} records at "
                "risk): generalize or suppress the QIs further"
            )
    return out


def _none_passed(criterion: str, failed: set[str]) -> str:
    if criterion in failed:
        return "the check of this attempt that measured it did not pass (its reason is given)"
    return "no check of this attempt measured it"


def _params(row: Mapping[str, Any]) -> Mapping[str, Any]:
    p = row.get("parameters")
    return p if isinstance(p, Mapping) else {}


# -------------------------------------------------------------------------- services
def set_policy(
    dataset: str,
    policy: Policy,
    *,
    by: str | None,
    reason: str,
    ctx: GateContext,
    ledger: str | None = None,
    new_dataset: str | None = None,
) -> Envelope:
    """Record a new version of ``dataset``'s policy: active at once, or proposed when it
    loosens the active one (a second person then approves it). A first policy under a name
    close to a known dataset's is refused unless ``new_dataset`` repeats it."""
    from airflow_privacy.gate.names import refuse_near_miss

    who = by if by is not None else ctx.user()
    with ctx.open_ledger(ledger, create=True) as db:
        refuse_near_miss(dataset, set(db.datasets()) | set(db.policy_datasets()), new_dataset)
        info = db.set_policy(
            dataset,
            policy.to_dict(),
            by=who,
            reason=reason,
            loosens=lambda cur: loosened(Policy.from_dict(cur.policy) if cur else None, policy),
        )
    return _envelope(info, "set")


def show_policy(dataset: str, ctx: GateContext, ledger: str | None = None) -> Envelope:
    """The policy in force for ``dataset``, with its history."""
    with ctx.open_ledger(ledger) as db:
        current = db.policy(dataset)
        versions = db.policy_history(dataset)
        known = db.policy_datasets()
    if not versions:
        hint = f" (datasets with a policy: {', '.join(known)})" if known else ""
        raise InputError(f"dataset {dataset!r} has no policy{hint}")
    env = _envelope(current or versions[-1], "show")
    env.details["history"] = [v.to_dict() for v in versions]
    return env


def decide_policy(
    dataset: str,
    version: int,
    *,
    approve: bool,
    by: str | None,
    reason: str,
    ctx: GateContext,
    ledger: str | None = None,
) -> Envelope:
    """A second person approves (it takes effect) or rejects a proposed version."""
    who = by if by is not None else ctx.user()
    with ctx.open_ledger(ledger) as db:
        info = db.decide_policy(dataset, version, approve=approve, by=who, reason=reason)
    return _envelope(info, "approve" if approve else "reject")


def _envelope(info: PolicyInfo, action: str) -> Envelope:
    policy = Policy.from_dict(info.policy)
    if info.status == "proposed":
        summary = (
            f"policy v{info.version} of {info.dataset!r} proposed by {info.created_by}: it "
            f"loosens the policy in force ({'; '.join(info.loosens)}), so it takes effect only "
            "when a second person approves it"
        )
        outcome = "proposed"
    elif info.status == "rejected":
        summary = f"policy v{info.version} of {info.dataset!r} rejected by {info.decided_by}"
        outcome = "rejected"
    else:
        summary = f"policy v{info.version} of {info.dataset!r} is {info.status}" + (
            f" (approved by {info.decided_by})" if info.decided_by else ""
        )
        outcome = "recorded" if action != "show" else "computed"
    return Envelope(
        step="policy", name=action, outcome=outcome, safe=None, summary=summary,
        details={"policy": info.to_dict(), "lines": policy.lines()},
    )  # fmt: skip
