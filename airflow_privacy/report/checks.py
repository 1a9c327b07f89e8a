"""Reading the JSON reports of the checks into report sections.

The same engines report through two doors: the ``privacy_report`` XCom dicts of the Airflow
operators (``CheckSafetyOperator``, ``MaxEntRiskOperator``, ``CompositionAuditOperator``,
the anonymizers, any task pushing ``{"safe", "reasons"}``) and the ``--format json`` output
of ``airflow-privacy check`` / ``maxent`` / ``audit``. :func:`classify` recognises each by
its content, not by its name.

Nothing that identifies a person's sensitive value survives: the composition audit's
witnesses (QI values, the values left after intersecting) are reduced to the pseudonymous
row number, the confidence and the releases combined, and the "Worst: ..." clause of its
reason is rewritten the same way (:func:`redact`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

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

_WORST = re.compile(r"row (\d+): \{.*\} left after intersecting ")


def redact(text: str) -> str:
    """Remove the sensitive values of an individual from a composition reason: ``row 147:
    {'AIDS'} left after intersecting A group x with B group y`` -> ``row 147 pinned down
    after intersecting A group x with B group y`` (groups are published; values are not
    repeated)."""
    return _WORST.sub(lambda m: f"row {m.group(1)} pinned down after intersecting ", text)


def classify(d: Mapping[str, Any]) -> str:
    """``check-set`` | ``criterion`` | ``composition`` | ``maxent`` | ``anonymizer`` |
    ``generic``."""
    if isinstance(d.get("results"), list):
        return "check-set"
    if d.get("criterion") == "composition" or isinstance(d.get("audit"), Mapping):
        return "composition"
    if d.get("check") == "CompositionAuditOperator" or (
        isinstance(d.get("verdict"), Mapping) and "pvp" in d
    ):
        return "composition"
    if "max_posterior" in d and "top_at_risk" in d:
        return "maxent"
    if "criterion" in d and "safe" in d:
        return "criterion"
    if "method" in d and "manifest" in d:
        return "anonymizer"
    return "generic"


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
    return ", ".join(f"{k} = {_fmt(v)}" for k, v in p.items())


def criterion_row(source: str, r: Mapping[str, Any]) -> CriterionRow:
    """A :class:`CriterionResult` dict as a row of the criteria table."""
    name = str(r.get("criterion", "?"))
    safe = r.get("safe")
    return CriterionRow(
        source=source,
        criterion=name,
        passed=bool(safe) if isinstance(safe, bool) else None,
        value=_num(r.get("value")),
        measure=MEASURES.get(name, "value"),
        threshold=threshold_text(name, r.get("parameters") or {}),
        witness=redact(str(r.get("reason") or "")),
    )


def generic_row(source: str, d: Mapping[str, Any]) -> CriterionRow:
    """A check that only says ``safe`` and why (Great Expectations, custom tasks)."""
    safe = d.get("safe")
    reasons = [redact(str(x)) for x in d.get("reasons") or []]
    summary = redact(str(d.get("summary") or ""))
    words = "; ".join(reasons) or summary or ("passed" if safe else "no reason given")
    return CriterionRow(
        source=source,
        criterion=str(d.get("check") or source),
        passed=bool(safe) if isinstance(safe, bool) else None,
        value=None,
        measure="pass / fail",
        threshold="every expectation holds",
        witness=words,
    )


def rows_of(source: str, d: Mapping[str, Any]) -> list[CriterionRow]:
    """Criteria-table rows for one check dict (the composition and MaxEnt checks also get
    their own sections)."""
    kind = classify(d)
    if kind == "check-set":
        return [criterion_row(source, r) for r in d["results"] if isinstance(r, Mapping)]
    if kind == "criterion":
        return [criterion_row(source, d)]
    if kind == "composition":
        return [composition_row(source, d)]
    if kind == "maxent":
        return [maxent_row(source, d)]
    if kind == "anonymizer":
        return []
    return [generic_row(source, d)]


# ------------------------------------------------------------------ composition
def _verdict_of(d: Mapping[str, Any]) -> Mapping[str, Any]:
    if d.get("criterion") == "composition":
        return d
    v = d.get("verdict")
    return v if isinstance(v, Mapping) else {}


def composition_row(source: str, d: Mapping[str, Any]) -> CriterionRow:
    v = _verdict_of(d)
    if v:
        return criterion_row(source, v)
    safe = d.get("safe")
    return CriterionRow(
        source=source,
        criterion="composition",
        passed=bool(safe) if isinstance(safe, bool) else None,
        value=None,
        measure=MEASURES["composition"],
        threshold="no earlier release to intersect with",
        witness=redact(str(d.get("summary") or "")),
    )


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


def composition_section(source: str, d: Mapping[str, Any]) -> CompositionSection:
    """The audit's numbers: PVP_C by confidence, the releases, the worst individuals."""
    v = _verdict_of(d)
    audit = d.get("audit") if isinstance(d.get("audit"), Mapping) else {}
    assert isinstance(audit, Mapping)
    params = v.get("parameters") or {}
    pvp_rows = audit.get("pvp") if audit else d.get("pvp")
    pvp = [
        PvpRow(
            confidence=float(r["confidence"]),
            vp=int(r["vp"]),
            pvp=float(r["pvp"]),
            posterior_vp=int(r["posterior_vp"]) if r.get("posterior_vp") is not None else None,
            posterior_pvp=float(r["posterior_pvp"]) if r.get("posterior_pvp") is not None else None,
            alone_pvp=float(r["alone_pvp"]) if r.get("alone_pvp") is not None else None,
        )
        for r in pvp_rows or []
        if isinstance(r, Mapping)
    ]
    releases: list[AuditedRelease] = []
    if audit:
        releases = [
            AuditedRelease(
                name=str(r.get("name")),
                role=str(r.get("role")),
                records=r.get("records"),
                groups=r.get("groups"),
            )
            for r in audit.get("releases") or []
        ]
    else:
        for p in d.get("priors") or []:
            if isinstance(p, Mapping):
                name = p.get("name") or p.get("release") or p.get("path") or p.get("id")
                releases.append(
                    AuditedRelease(str(name), "prior", p.get("records"), p.get("groups"))
                )
            else:
                releases.append(AuditedRelease(str(p), "prior", None, None))
    raw_worst = audit.get("worst") if audit else d.get("worst")
    if raw_worst is None and isinstance(v.get("witness"), Mapping):
        raw_worst = [v["witness"]]
    worst = [_individual(w) for w in raw_worst or [] if isinstance(w, Mapping) and "row" in w]
    details = v.get("details") or {}
    note = ""
    if not v:
        note = "no earlier release to intersect with: the audit had nothing to combine"
    elif raw_worst is not None and not audit and d.get("worst") is None:
        note = "only the deciding individual is listed (the operator's report carries one)"
    safe = v.get("safe", d.get("safe"))
    return CompositionSection(
        source=source,
        passed=bool(safe) if isinstance(safe, bool) else None,
        summary=redact(str(v.get("reason") or d.get("summary") or "")),
        confidence=float(params["confidence"]) if "confidence" in params else None,
        max_pvp=float(params["max_pvp"]) if "max_pvp" in params else None,
        measure=params.get("measure"),
        overlap=params.get("overlap"),
        population=audit.get("population") if audit else None,
        overlap_size=audit.get("overlap_size", details.get("overlap_size"))
        if audit
        else details.get("overlap_size"),
        vp=audit.get("vp", details.get("vp")) if audit else details.get("vp"),
        pvp=pvp,
        releases=releases,
        worst=worst,
        note=note,
    )


# ------------------------------------------------------------------------- maxent
def named_people(d: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(name, value)`` of every named person a MaxEnt report lists: never shown."""
    out = [
        (str(a.get("label")), str(a.get("value")))
        for a in d.get("top_at_risk") or []
        if isinstance(a, Mapping) and a.get("kind") == "person"
    ]
    at = d.get("max_at")
    if isinstance(at, Mapping) and at.get("kind") == "person":
        out.append((str(at.get("label")), str(at.get("value"))))
    return out


def hide_people(text: str, people: Sequence[tuple[str, str]]) -> str:
    """Replace "NAME has 'VALUE'" by "a named person has a value" (MaxEnt wording)."""
    for name, value in people:
        text = text.replace(f"person {name} has {value!r}", "a named person has a value")
        text = text.replace(f"{name} has {value!r}", "a named person has a value")
    return text


def maxent_row(source: str, d: Mapping[str, Any]) -> CriterionRow:
    c = d.get("c", d.get("threshold"))
    safe = d.get("safe")
    thr = f"below c = {_fmt(c)}" if c is not None else "no threshold given (estimate only)"
    return CriterionRow(
        source=source,
        criterion="maxent",
        passed=bool(safe) if isinstance(safe, bool) else None,
        value=_num(d.get("max_posterior")),
        measure=MEASURES["maxent"],
        threshold=thr,
        witness=hide_people(str(d.get("reason") or d.get("summary") or ""), named_people(d)),
    )


def maxent_section(source: str, d: Mapping[str, Any], threshold: float | None) -> MaxEntSection:
    """Top QI values at risk (named people only counted: their values are not shown)."""
    top = [a for a in d.get("top_at_risk") or [] if isinstance(a, Mapping)]
    qi = [a for a in top if a.get("kind", "qi") == "qi"]
    people = [a for a in top if a.get("kind") == "person"]
    n_people = len(d.get("people") or []) or len(people)
    knowledge = d.get("knowledge")
    c = d.get("c", threshold)
    safe = d.get("safe")
    return MaxEntSection(
        source=source,
        passed=bool(safe) if isinstance(safe, bool) else None,
        threshold=float(c) if c is not None else None,
        max_posterior=float(d.get("max_posterior") or 0.0),
        summary=hide_people(str(d.get("reason") or d.get("summary") or ""), named_people(d)),
        accuracy=float(d["accuracy"]) if d.get("accuracy") is not None else None,
        knowledge=len(knowledge) if isinstance(knowledge, Sequence) else None,
        people=n_people,
        people_max_posterior=max((float(a["posterior"]) for a in people), default=None),
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
