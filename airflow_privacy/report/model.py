"""The release report as plain data: what a privacy officer reads, nothing else.

Every field is JSON-native (str, int, float, bool, None, list, dict with str keys), so
``ReleaseReport.from_dict(report.to_dict()) == report`` and the ledger can store the dict.
The report holds aggregates of the published release and the results of the checks only:
no record of the original table, and no individual's sensitive value (the composition
audit's worst individuals appear by the pseudonymous row number the audit gives them, with
their confidence and the releases that combine, not with the value left).

A section that did not run is ``None`` and :attr:`ReleaseReport.notes` says why.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from airflow_privacy.report.dp import DPSection
from airflow_privacy.report.risk import RiskSection

SCHEMA_VERSION = 1
STATUSES = ("published", "blocked", "not-published", "candidate", "checked")

Number = float | int | str | None  # a str only for "inf" / "-inf" (json_safe)


@dataclass(frozen=True)
class ReleaseFacts:
    """What was released: the file, its ledger identity and its shape."""

    path: str
    dataset: str | None
    version: str | None
    release_id: int | None
    records: int
    groups: int
    sensitive: str
    sensitive_values: int
    group_columns: list[str]
    qis: list[str]
    method: str | None
    generated: str
    tool_version: str


@dataclass(frozen=True)
class Verdict:
    """The decision, first: status, headline, and every reason it was blocked."""

    status: str
    headline: str
    reasons: list[str]
    checks_run: int
    checks_failed: int
    #: the way forward: the failed checks' advice, each change re-checked before it was
    #: suggested (:mod:`airflow_privacy.core.advice`)
    advice: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CriterionRow:
    """One criterion a check evaluated: the number against its threshold, and why."""

    source: str
    criterion: str
    passed: bool | None
    value: Number
    measure: str
    threshold: str
    witness: str


@dataclass(frozen=True)
class CurvePoint:
    """Maximum disclosure (probability) against ``k`` implications / negated atoms."""

    k: int
    implications: float
    negations: float


@dataclass(frozen=True)
class CurveSection:
    """Disclosure-vs-k curve of the worst-case engine (Martin et al. 2007, Theorem 9)."""

    k_max: int
    c: float | None
    points: list[CurvePoint]
    witness: str


@dataclass(frozen=True)
class SkylineSection:
    """SkylineFind at confidence ``c`` (Chen et al. 2007): ``staircase[l][k]`` is the
    largest safe ``m`` (-1: none) within ``bounds`` = (max l, max k, max m)."""

    c: float
    bounds: list[int]
    points: list[list[int]]
    breaches: list[float]
    staircase: list[list[int]]
    evaluations: int
    unsafe_example: str | None


@dataclass(frozen=True)
class PvpRow:
    """``PVP_C`` (percent of the overlap pinned with confidence >= C) at one level C."""

    confidence: float
    vp: int
    pvp: float
    posterior_vp: int | None
    posterior_pvp: float | None
    alone_pvp: float | None


@dataclass(frozen=True)
class AuditedRelease:
    name: str
    role: str
    records: int | None
    groups: int | None


@dataclass(frozen=True)
class CombinedRelease:
    """One release an individual was located in, and how many values it left (EA)."""

    release: str
    ea: int | None


@dataclass(frozen=True)
class Individual:
    """A breached individual by pseudonymous id (the audit's row number), never the value."""

    id: str
    confidence: float
    posterior: float | None
    ea_hat: int | None
    anon_drop: int | None
    releases: list[CombinedRelease]


@dataclass(frozen=True)
class CompositionSection:
    """The intersection attack against earlier releases (Ganta et al. 2008)."""

    source: str
    passed: bool | None
    summary: str
    confidence: float | None
    max_pvp: float | None
    measure: str | None
    overlap: str | None
    population: int | None
    overlap_size: int | None
    vp: int | None
    pvp: list[PvpRow]
    releases: list[AuditedRelease]
    worst: list[Individual]
    note: str


@dataclass(frozen=True)
class AtRiskRow:
    """A QI value of the release and the posterior of its most likely sensitive value under
    MaxEnt (which value that is, is not part of the report)."""

    label: str
    records: int
    posterior: float


@dataclass(frozen=True)
class HeatmapRow:
    label: str
    records: int
    posterior: list[float]


@dataclass(frozen=True)
class Heatmap:
    """``P*(s | q)`` for the riskiest QI values (rows), each row sorted from the most to the
    least likely sensitive value; ``values`` names the columns by rank (``1st``, ``2nd``,
    ...), never by value."""

    values: list[str]
    rows: list[HeatmapRow]
    source: str


@dataclass(frozen=True)
class MaxEntSection:
    """Privacy-MaxEnt posteriors (Du et al. 2008)."""

    source: str
    passed: bool | None
    threshold: float | None
    max_posterior: float
    summary: str
    accuracy: float | None
    knowledge: int | None
    people: int
    people_max_posterior: float | None
    top: list[AtRiskRow]
    heatmap: Heatmap | None
    heatmap_note: str


@dataclass(frozen=True)
class SizeBin:
    """Groups whose size is in ``[low, high]`` and the records they hold."""

    low: int
    high: int
    groups: int
    records: int


@dataclass(frozen=True)
class Metric:
    name: str
    value: Number
    meaning: str


@dataclass(frozen=True)
class UtilitySection:
    """What the release keeps: information loss (manifest) and group sizes."""

    method: str | None
    records_in: int | None
    records_out: int
    suppressed: int | None
    groups: int
    min_size: int
    median_size: float
    mean_size: float
    max_size: int
    histogram: list[SizeBin]
    metrics: list[Metric]
    dropped_columns: list[str]


@dataclass(frozen=True)
class ReleaseReport:
    """The whole report; ``None`` sections did not run (``notes[section]`` says why)."""

    facts: ReleaseFacts
    verdict: Verdict
    criteria: list[CriterionRow]
    curve: CurveSection | None
    skyline: SkylineSection | None
    composition: CompositionSection | None
    maxent: MaxEntSection | None
    utility: UtilitySection
    notes: dict[str, str] = field(default_factory=dict)
    schema: int = SCHEMA_VERSION
    risk: RiskSection | None = None  # the re-identification risk section (report/risk.py)
    dp: DPSection | None = None  # a differentially private release (report/dp.py)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe plain data (no NaN, no tuples)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Any) -> ReleaseReport:
        """The inverse of :meth:`to_dict` (also of its JSON round trip). Every field is
        checked against its declared type (a number is a number, a status is one of
        :data:`STATUSES`): a stored report is data from a database, and a string where a
        number belongs must never reach a page unescaped."""
        report = _load(cls, d, "report")
        assert isinstance(report, ReleaseReport)
        if report.verdict.status not in STATUSES:
            raise ValueError(f"report: unknown status {report.verdict.status!r}")
        return report


def _load(tp: Any, value: Any, where: str) -> Any:
    """``value`` as type ``tp`` (dataclasses, unions, lists, dicts of str), or ValueError."""
    import dataclasses
    import types
    import typing

    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(tp):
            try:
                return _load(option, value, where)
            except ValueError:
                continue
        raise ValueError(f"{where}: {value!r} is not a {tp}")
    if tp is type(None):
        if value is None:
            return None
        raise ValueError(f"{where}: expected null")
    if origin is list:
        if not isinstance(value, list):
            raise ValueError(f"{where}: expected a list")
        (item,) = typing.get_args(tp)
        return [_load(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ValueError(f"{where}: expected an object")
        _, vt = typing.get_args(tp)
        return {str(k): _load(vt, v, f"{where}.{k}") for k, v in value.items()}
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, dict):
            raise ValueError(f"{where}: expected an object")
        hints = typing.get_type_hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name not in value:
                if (
                    f.default is not dataclasses.MISSING
                    or f.default_factory is not dataclasses.MISSING
                ):
                    continue
                raise ValueError(f"{where}: missing {f.name}")
            kwargs[f.name] = _load(hints[f.name], value[f.name], f"{where}.{f.name}")
        return tp(**kwargs)
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise ValueError(f"{where}: expected true or false")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ValueError(f"{where}: expected a whole number")
    if tp is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value) if not isinstance(value, int) else value
        raise ValueError(f"{where}: expected a number")
    if tp is str:
        if isinstance(value, str):
            return value
        raise ValueError(f"{where}: expected text")
    if tp is Any:
        return value
    raise ValueError(f"{where}: cannot read type {tp}")
