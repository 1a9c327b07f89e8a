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
not meet a line, naming the line and the strongest check recorded
(:func:`airflow_privacy.gate.rules.policy_reasons`). A new version that loosens anything
waits for a second, different person (:func:`decide_policy`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError
from airflow_privacy.gate.envelope import Envelope

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.ledger import PolicyInfo
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


# ----------------------------------------------------------------------- comparing
def as_number(v: Any) -> float | None:
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
        g, w = as_number(got), as_number(want)
        if way == "higher" and g is not None and w is not None:
            if g < w:
                return f"{key}={_fmt(got)} is below the policy's {_fmt(want)}"
        elif way == "lower" and g is not None and w is not None:
            if g > w:
                return f"{key}={_fmt(got)} is above the policy's {_fmt(want)}"
        elif got != want:
            return f"{key}={_fmt(got)} is not the policy's {_fmt(want)}"
    return None


def composition_meets(measured: Mapping[str, Any], line: Mapping[str, Any]) -> str | None:
    if measured.get("measure") != line["measure"]:
        return f"measure {measured.get('measure')!r} is not the policy's {line['measure']!r}"
    conf, pvp = as_number(measured.get("confidence")), as_number(measured.get("max_pvp"))
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
        elif (why := composition_meets(new.composition, old.composition)) is not None:
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
