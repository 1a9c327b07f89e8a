"""Reading the checks' report envelopes into report sections.

Every check reports through one typed envelope (:class:`airflow_privacy.gate.envelope.Envelope`):
the XCom of an operator, the ``--format json`` of a command and the ledger's record are the
same object, so a section is chosen by the envelope's ``step``, never by guessing from keys,
and the thresholds come from the results' parameters, never from text.

Envelopes carry no individual's sensitive value and do not say which value a group holds
(witnesses name groups, pseudonymous rows and ``value A``, ``value B``, ...); :func:`redact`
is kept as a second line of defence for reasons written before those rules (an envelope
read back from the ledger or a file): it removes an individual's values from a composition
reason and the quoted values from the old wording of the other criteria.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow_privacy.core.criteria.base import fmt
from airflow_privacy.core.criteria.registry import known

# one definition of redact, in the engines' layer (the ledger redacts on read too)
from airflow_privacy.core.redaction import redact
from airflow_privacy.report.model import (
    AtRiskRow,
    AuditedRelease,
    CombinedRelease,
    CompositionSection,
    CriterionRow,
    Individual,
    MaxEntSection,
    Number,
    PvpRow,
)
from airflow_privacy.report.values import as_float, as_list, as_mapping, as_whole

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

# what the number of a check that is not a registry criterion is, in words with its unit
# (a criterion's own is its class's ``measure``)
MEASURES: dict[str, str] = {
    "composition": "PVP_C: people pinned down after intersecting (% of the overlap)",
    "maxent": "largest MaxEnt posterior P*(s | q) (probability)",
}


def measure_text(criterion: str) -> str:
    """What ``criterion``'s value is, in words with its unit."""
    if criterion in MEASURES:
        return MEASURES[criterion]
    cls = known(criterion)
    return cls.measure if cls is not None else "value"


def _num(x: Any) -> Number:
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        if math.isnan(x):
            return None
        return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")
    if x in ("inf", "-inf"):
        return str(x)
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _text(x: Any) -> str | None:
    return None if x is None else str(x)


def _fmt(v: Any) -> str:
    return fmt(v)


def threshold_text(criterion: str, params: Mapping[str, Any]) -> str:
    """The requirement in words: ``below c = 0.7 against k = 3 implications`` (a registry
    criterion's words are its class's ``threshold_text``)."""
    p = {k: v for k, v in params.items() if v is not None}
    cls = known(criterion) if criterion not in MEASURES else None
    own = cls.threshold_text(p) if cls is not None else None
    if own is not None:
        return own
    if criterion == "composition":
        c = p.get("confidence")
        return (
            f"at most {_fmt(p.get('max_pvp'))}% pinned with confidence >= {_fmt(c)}"
            f" ({p.get('measure', 'ganta')}, {p.get('overlap', 'worst-case')} overlap)"
        )
    if criterion == "maxent":
        c = p.get("c")
        return f"below c = {_fmt(c)}" if c is not None else "no threshold given (estimate only)"
    return ", ".join(f"{k} = {_fmt(v)}" for k, v in p.items())


def criterion_row(source: str, r: Mapping[str, Any]) -> CriterionRow:
    """A criterion result (``CriterionResult.to_dict()``) as a row of the criteria table."""
    name = str(r.get("criterion", "?"))
    safe = r.get("safe")
    return CriterionRow(
        source=source,
        criterion=name,
        passed=safe if isinstance(safe, bool) else None,
        value=_num(r.get("value")),
        measure=measure_text(name),
        threshold=threshold_text(name, as_mapping(r.get("parameters"))),
        witness=redact(_witness(name, r)),
    )


def _witness(name: str, r: Mapping[str, Any]) -> str:
    cls = known(name)
    text = cls.witness_text(r) if cls is not None else str(r.get("reason") or "")
    which = as_mapping(r.get("details")).get("which_attribute")
    return f"{text}; which attribute: {which}" if isinstance(which, str) and which else text


def generic_row(env: Envelope) -> CriterionRow:
    """A check that only says ``safe`` and why (Great Expectations, custom tasks)."""
    words = "; ".join(redact(x) for x in env.reasons) or redact(env.summary)
    return CriterionRow(
        source=env.name,
        criterion=env.name if env.step == "validate" else env.step,
        passed=env.safe,
        value=None,
        measure="pass / fail",
        threshold="every expectation holds" if env.step == "validate" else "passes",
        witness=words or ("passed" if env.safe else "no reason given"),
    )


def rows_of(env: Envelope) -> list[CriterionRow]:
    """Criteria-table rows of one envelope (the anonymizer's are the manifest's rows)."""
    if env.step in ("anonymize", "attempt", "publish", "report", "block", "supersede", "record"):
        return []
    if env.outcome == "already-published":
        return []
    if env.results:
        return [criterion_row(env.name, r) for r in env.results]
    return [generic_row(env)]


# ------------------------------------------------------------------ composition
def _individual(w: Mapping[str, Any]) -> Individual | None:
    row = as_whole(w.get("row"))
    if row is None:
        return None
    return Individual(
        id=f"row {row}",
        confidence=as_float(w.get("confidence")) or 0.0,
        posterior=as_float(w.get("posterior")),
        ea_hat=as_whole(w.get("ea_hat")),
        anon_drop=as_whole(w.get("anon_drop")),
        releases=[
            CombinedRelease(release=str(r.get("release", "?")), ea=as_whole(r.get("ea")))
            for r in as_list(w.get("releases"))
            if isinstance(r, Mapping)
        ],
    )


def _pvp_row(r: Mapping[str, Any]) -> PvpRow | None:
    confidence, vp, pvp = (
        as_float(r.get("confidence")),
        as_whole(r.get("vp")),
        as_float(r.get("pvp")),
    )
    if confidence is None or vp is None or pvp is None:
        return None
    return PvpRow(
        confidence=confidence,
        vp=vp,
        pvp=pvp,
        posterior_vp=as_whole(r.get("posterior_vp")),
        posterior_pvp=as_float(r.get("posterior_pvp")),
        alone_pvp=as_float(r.get("alone_pvp")),
    )


def composition_section(env: Envelope) -> CompositionSection:
    """The audit's numbers: PVP_C by confidence, the releases, the worst individuals."""
    v = env.results[0] if env.results else {}
    d = env.details
    params = as_mapping(v.get("parameters"))
    pvp = [row for r in as_list(d.get("pvp")) if isinstance(r, Mapping) and (row := _pvp_row(r))]
    releases = [
        AuditedRelease(
            name=str(r.get("name")),
            role=str(r.get("role")),
            records=_int(r.get("records")),
            groups=_int(r.get("groups")),
        )
        for r in as_list(d.get("releases"))
        if isinstance(r, Mapping)
    ]
    worst = [i for w in as_list(d.get("worst")) if isinstance(w, Mapping) and (i := _individual(w))]
    note = ""
    if d.get("first_release"):
        note = "declared first release: there was no earlier release to intersect with"
    return CompositionSection(
        source=env.name,
        passed=env.safe,
        summary=redact(env.summary),
        confidence=as_float(params.get("confidence")),
        max_pvp=as_float(params.get("max_pvp")),
        measure=_text(params.get("measure")),
        overlap=_text(params.get("overlap")),
        population=_int(d.get("population")),
        overlap_size=_int(d.get("overlap_size")),
        vp=_int(d.get("vp")),
        pvp=pvp,
        releases=releases,
        worst=worst,
        note=note,
    )


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


# ------------------------------------------------------------------------- maxent
def maxent_section(env: Envelope) -> MaxEntSection:
    """Top QI values at risk, by QI value and posterior only: named people are only
    counted, and which sensitive value a QI value is likely to hold is never shown (an
    older envelope's ``value`` is ignored)."""
    d = env.details
    v = env.results[0] if env.results else {}
    params = as_mapping(v.get("parameters"))
    top = [a for a in as_list(d.get("top_at_risk")) if isinstance(a, Mapping)]
    qi = [a for a in top if a.get("kind", "qi") == "qi"]
    people = [a for a in top if a.get("kind") == "person"]
    posteriors = [p for a in people if (p := as_float(a.get("posterior"))) is not None]
    return MaxEntSection(
        source=env.name,
        passed=env.safe,
        threshold=as_float(params.get("c")),
        max_posterior=as_float(d.get("max_posterior")) or 0.0,
        summary=redact(env.summary),
        accuracy=as_float(d.get("accuracy")),
        knowledge=len(d["knowledge"]) if isinstance(d.get("knowledge"), list) else None,
        people=len(d["people"]) if isinstance(d.get("people"), list) else len(people),
        people_max_posterior=max(posteriors, default=None),
        top=[
            AtRiskRow(
                label=str(a.get("label")),
                records=as_whole(a.get("records")) or 0,
                posterior=as_float(a.get("posterior")) or 0.0,
            )
            for a in qi
        ],
        heatmap=None,
        heatmap_note="",
    )
