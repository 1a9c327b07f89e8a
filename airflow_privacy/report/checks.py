"""Reading the checks' report envelopes into report sections.

Every check reports through one typed envelope (:class:`airflow_privacy.gate.envelope.Envelope`):
the XCom of an operator, the ``--format json`` of a command and the ledger's record are the
same object, so a section is chosen by the envelope's ``step``, never by guessing from keys,
and the thresholds come from the results' parameters, never from text.

Envelopes carry no individual's sensitive value (witnesses name groups and pseudonymous
rows); :func:`redact` is kept as a second line of defence for reasons written before that
rule, removing an individual's values from a composition reason.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

# what each criterion's number is, in words with its unit
MEASURES: dict[str, str] = {
    "k-anonymity": "smallest group (records)",
    "distinct-l-diversity": "fewest distinct sensitive values in a group",
    "entropy-l-diversity": "smallest effective number of values, exp(entropy)",
    "recursive-cl-diversity": "largest ratio r1 / (r_l + ... + r_m)",
    "t-closeness": "largest distance to the table's distribution (EMD, 0 to 1)",
    "ck-safety": "maximum disclosure (probability)",
    "negation-safety": "maximum disclosure (probability)",
    "skyline": "maximum breach (probability)",
    "composition": "PVP_C: people pinned down after intersecting (% of the overlap)",
    "maxent": "largest MaxEnt posterior P*(s | q) (probability)",
}

_WORST = re.compile(r"row (\d+): \{.*?\} left after intersecting ")


def redact(text: str) -> str:
    """Remove the sensitive values of an individual from a composition reason: ``row 147:
    {'AIDS'} left after intersecting A group x with B group y`` -> ``row 147 pinned down
    after intersecting A group x with B group y``."""
    return _WORST.sub(lambda m: f"row {m.group(1)} pinned down after intersecting ", text)


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


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list | tuple):
        return "(" + ", ".join(_fmt(x) for x in v) + ")"
    return str(v)


def threshold_text(criterion: str, params: Mapping[str, Any]) -> str:
    """The requirement in words: ``below c = 0.7 against k = 3 implications``."""
    p = {k: v for k, v in params.items() if v is not None}
    if criterion == "k-anonymity" and "k" in p:
        return f"at least k = {_fmt(p['k'])} records per group"
    if criterion in ("distinct-l-diversity", "entropy-l-diversity") and "l" in p:
        return f"at least l = {_fmt(p['l'])}"
    if criterion == "recursive-cl-diversity" and "c" in p:
        return f"below c = {_fmt(p['c'])} (l = {_fmt(p.get('l'))})"
    if criterion == "t-closeness" and "t" in p:
        return f"at most t = {_fmt(p['t'])}"
    if criterion == "ck-safety" and "c" in p:
        return f"below c = {_fmt(p['c'])} against k = {_fmt(p.get('k'))} implications"
    if criterion == "negation-safety" and "c" in p:
        return f"below c = {_fmt(p['c'])} against k = {_fmt(p.get('k'))} negated atoms"
    if criterion == "skyline" and "points" in p:
        pts = "; ".join(f"(l, k, m) = {_fmt(q[:3])} below c = {_fmt(q[3])}" for q in p["points"])
        return f"at every point: {pts}"
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
        measure=MEASURES.get(name, "value"),
        threshold=threshold_text(name, r.get("parameters") or {}),
        witness=redact(str(r.get("reason") or "")),
    )


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
def _individual(w: Mapping[str, Any]) -> Individual:
    return Individual(
        id=f"row {int(w['row'])}",
        confidence=float(w.get("confidence", 0.0)),
        posterior=float(w["posterior"]) if w.get("posterior") is not None else None,
        ea_hat=int(w["ea_hat"]) if w.get("ea_hat") is not None else None,
        anon_drop=int(w["anon_drop"]) if w.get("anon_drop") is not None else None,
        releases=[
            CombinedRelease(
                release=str(r.get("release", "?")),
                ea=int(r["ea"]) if r.get("ea") is not None else None,
            )
            for r in w.get("releases") or []
            if isinstance(r, Mapping)
        ],
    )


def composition_section(env: Envelope) -> CompositionSection:
    """The audit's numbers: PVP_C by confidence, the releases, the worst individuals."""
    v = env.results[0] if env.results else {}
    d = env.details
    params = v.get("parameters") or {}
    pvp = [
        PvpRow(
            confidence=float(r["confidence"]),
            vp=int(r["vp"]),
            pvp=float(r["pvp"]),
            posterior_vp=int(r["posterior_vp"]) if r.get("posterior_vp") is not None else None,
            posterior_pvp=float(r["posterior_pvp"]) if r.get("posterior_pvp") is not None else None,
            alone_pvp=float(r["alone_pvp"]) if r.get("alone_pvp") is not None else None,
        )
        for r in d.get("pvp") or []
        if isinstance(r, Mapping)
    ]
    releases = [
        AuditedRelease(
            name=str(r.get("name")),
            role=str(r.get("role")),
            records=r.get("records") if isinstance(r.get("records"), int) else None,
            groups=r.get("groups") if isinstance(r.get("groups"), int) else None,
        )
        for r in d.get("releases") or []
        if isinstance(r, Mapping)
    ]
    worst = [_individual(w) for w in d.get("worst") or [] if isinstance(w, Mapping) and "row" in w]
    note = ""
    if d.get("first_release"):
        note = "declared first release: there was no earlier release to intersect with"
    return CompositionSection(
        source=env.name,
        passed=env.safe,
        summary=redact(env.summary),
        confidence=float(params["confidence"]) if "confidence" in params else None,
        max_pvp=float(params["max_pvp"]) if "max_pvp" in params else None,
        measure=params.get("measure"),
        overlap=params.get("overlap"),
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
    """Top QI values at risk (named people are only counted: never shown)."""
    d = env.details
    v = env.results[0] if env.results else {}
    params = v.get("parameters") or {}
    top = [a for a in d.get("top_at_risk") or [] if isinstance(a, Mapping)]
    qi = [a for a in top if a.get("kind", "qi") == "qi"]
    people = [a for a in top if a.get("kind") == "person"]
    c = params.get("c")
    return MaxEntSection(
        source=env.name,
        passed=env.safe,
        threshold=float(c) if c is not None else None,
        max_posterior=float(d.get("max_posterior") or 0.0),
        summary=env.summary,
        accuracy=float(d["accuracy"]) if d.get("accuracy") is not None else None,
        knowledge=_int(d.get("knowledge")),
        people=_int(d.get("people")) or len(people),
        people_max_posterior=max(
            (float(a["posterior"]) for a in people if a.get("posterior") is not None),
            default=None,
        ),
        top=[
            AtRiskRow(
                label=str(a.get("label")),
                records=int(a.get("records") or 0),
                value=str(a.get("value")),
                posterior=float(a.get("posterior") or 0.0),
            )
            for a in qi
        ],
        heatmap=None,
        heatmap_note="",
    )
