"""The release report's re-identification risk section, as plain data, built from a ``risk``
envelope (:mod:`airflow_privacy.gate.risk`): the measures with their sentences, the
class-size distribution with the records at risk, and SUDA's attribute contributions. Only
aggregates: no record, no score of a record, no QI value."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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
    if v is None or isinstance(v, int | float | str):
        return v
    return str(v)


def risk_section(env: Envelope) -> RiskSection:
    """The section of one ``risk`` envelope (sizes binned as the utility histogram is)."""
    from airflow_privacy.report.build import size_bins

    d: Mapping[str, Any] = env.details
    hist = [h for h in d.get("class_sizes") or [] if isinstance(h, Mapping)]
    top = max((int(h.get("size") or 0) for h in hist), default=1)
    bins = []
    for low, high in size_bins(max(top, 1)):
        inside = [h for h in hist if low <= int(h.get("size") or 0) <= high]
        bins.append(
            RiskBin(
                low=low,
                high=high,
                groups=sum(int(h.get("groups") or 0) for h in inside),
                records=sum(int(h.get("records") or 0) for h in inside),
                records_at_risk=sum(int(h.get("records") or 0) for h in inside
                                    if h.get("at_risk") is True),
            )
        )  # fmt: skip
    while bins and bins[-1].groups == 0 and len(bins) > 1:
        bins.pop()
    suda = d.get("suda") if isinstance(d.get("suda"), Mapping) else None
    contrib = (suda or {}).get("attribute_contributions") or {}
    contributions = sorted(
        (RiskContribution(str(a), float(v)) for a, v in contrib.items()
         if isinstance(v, int | float)),
        key=lambda c: -c.percent,
    )  # fmt: skip
    pop = d.get("population") if isinstance(d.get("population"), Mapping) else {}
    return RiskSection(
        source=env.name,
        summary=env.summary,
        threshold=float(d.get("threshold") or 0.0),
        qis=[str(q) for q in d.get("qis") or []],
        population=str((pop or {}).get("source") or "the release itself"),
        measures=[
            RiskMeasure(
                str(m.get("label") or m.get("measure")),
                _num(m.get("value")),
                str(m.get("explanation") or ""),
            )
            for m in d.get("measures") or []
            if isinstance(m, Mapping)
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
