"""The release report's re-identification risk section, as plain data, built from a ``risk``
envelope (:mod:`airflow_privacy.gate.steps.risk`): the measures with their sentences, the
class-size distribution with the records at risk, and SUDA's attribute contributions. Only
aggregates: no record, no score of a record, no QI value."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_privacy.report.values import as_float, as_list, as_mapping, as_whole, size_bins

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope


@dataclass(frozen=True)
class RiskMeasure:
    """One number of the analysis and the sentence that says what it means."""

    label: str
    value: float | int | str | None
    explanation: str


@dataclass(frozen=True)
class RiskBin:
    """Groups whose size is in ``[low, high]``: how many, their records, and how many of
    those records are at prosecutor risk (``1/size`` above the threshold)."""

    low: int
    high: int
    groups: int
    records: int
    records_at_risk: int


@dataclass(frozen=True)
class RiskContribution:
    """SUDA2: the share (percent) of the total score from special uniques with ``attribute``."""

    attribute: str
    percent: float


@dataclass(frozen=True)
class RiskSection:
    """Re-identification risk (El Emam & Dankar 2008; Dankar et al. 2012; SUDA2)."""

    source: str
    summary: str
    threshold: float
    qis: list[str]
    population: str
    measures: list[RiskMeasure]
    bins: list[RiskBin]
    contributions: list[RiskContribution]


def _num(v: Any) -> float | int | str | None:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return as_float(v)
    return None if v is None else str(v)


def risk_section(env: Envelope) -> RiskSection:
    """The section of one ``risk`` envelope (sizes binned as the utility histogram is). An
    envelope read back from a file may hold anything: a field that cannot be read is left
    out, never an error (as for the other sections, ``report/checks.py``)."""
    d = as_mapping(env.details)
    hist: list[tuple[int, int, bool, int]] = []  # (size, records, at risk, groups)
    for item in as_list(d.get("class_sizes")):
        h = as_mapping(item)
        size, records = as_whole(h.get("size")), as_whole(h.get("records"))
        if size is not None and records is not None and size >= 1 and records >= 0:
            groups = as_whole(h.get("groups")) or 0
            hist.append((size, records, h.get("at_risk") is True, max(groups, 0)))
    top = min(max((x[0] for x in hist), default=1), 10**15)
    bins = []
    for low, high in size_bins(top):
        inside = [x for x in hist if low <= x[0] <= high]
        bins.append(
            RiskBin(
                low=low,
                high=high,
                groups=sum(x[3] for x in inside),
                records=sum(x[1] for x in inside),
                records_at_risk=sum(x[1] for x in inside if x[2]),
            )
        )
    while len(bins) > 1 and bins[-1].groups == 0 and bins[-1].records == 0:
        bins.pop()
    contrib = as_mapping(as_mapping(d.get("suda")).get("attribute_contributions"))
    contributions = sorted(
        (
            RiskContribution(str(a), v)
            for a, v in ((a, as_float(x)) for a, x in contrib.items())
            if v is not None
        ),
        key=lambda c: -c.percent,
    )
    pop = as_mapping(d.get("population"))
    return RiskSection(
        source=env.name,
        summary=env.summary,
        threshold=as_float(d.get("threshold")) or 0.0,
        qis=[str(q) for q in as_list(d.get("qis"))],
        population=str(pop.get("source") or "the release itself"),
        measures=[
            RiskMeasure(
                str(m.get("label") or m.get("measure")),
                _num(m.get("value")),
                str(m.get("explanation") or ""),
            )
            for m in (as_mapping(x) for x in as_list(d.get("measures")))
            if m
        ],
        bins=bins,
        contributions=contributions,
    )


def first_risk(checks: Sequence[Envelope]) -> RiskSection | None:
    """The section of the first ``risk`` envelope among ``checks`` (None without one)."""
    for env in checks:
        if env.step == "risk" and env.outcome != "already-published":
            return risk_section(env)
    return None


def identity_section(identity: Any) -> RiskSection | None:
    """The section from the identity risk every attempt records on its QIs
    (:func:`airflow_privacy.core.composition.identity.identity_risk`, kept in the release's spec),
    when no risk analysis ran: the prosecutor measures, each with its sentence."""
    if not isinstance(identity, dict) or not identity.get("records"):
        return None
    n = int(identity["records"])
    highest = float(identity["highest"])
    at_risk = int(identity["records_at_risk"])
    uniques = int(identity["sample_uniques"])
    threshold = float(identity.get("threshold") or 0.2)
    qis = [str(q) for q in identity.get("qis") or []]
    smallest = round(1 / highest) if highest else 0
    measures = [
        RiskMeasure("highest prosecutor risk", highest,
                    f"the smallest class of QI values holds {smallest} record(s): an attacker "
                    "who knows a person is in the release and knows their QIs picks the right "
                    f"record with probability {highest:.3g}"),
        RiskMeasure("records at risk", at_risk,
                    f"{at_risk:,} of {n:,} records ({100 * at_risk / n:.3g}%) are in a class "
                    f"whose re-identification probability is above {threshold:g}"),
        RiskMeasure("average prosecutor risk", float(identity["average"]),
                    "the share of records an attacker re-identifies on average (classes / "
                    "records)"),
        RiskMeasure("sample uniques", uniques,
                    f"{uniques:,} record(s) are alone in their class of QI values"),
    ]  # fmt: skip
    summary = (
        f"identity risk on the QIs ({', '.join(qis)}): highest prosecutor risk {highest:.3g}, "
        f"{at_risk:,} of {n:,} records at risk, {uniques:,} sample uniques (measured when the "
        "attempt was opened; no risk analysis among the checks)"
    )
    return RiskSection(source="attempt", summary=summary, threshold=threshold, qis=qis,
                       population="the release itself (prosecutor model)", measures=measures,
                       bins=[], contributions=[])  # fmt: skip
