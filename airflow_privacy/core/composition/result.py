"""Plain-data results of the composition audit (serialize to JSON) and its gate.

Names follow Ganta et al. 2008 (papers/003_*), section 2.1: ``EA_ij`` (effective anonymity
of individual ``i`` in release ``j``, Definition 8), ``EA-hat_i`` (effective posterior
anonymity), ``Anon_Drop_i``, ``C_i = 1 / EA-hat_i`` (Definition 9), ``VP``, ``VP_C`` and
``PVP_C`` (the percentage of the overlapping population ``P`` with ``C_i >= C``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
Measure = Literal["ganta", "posterior"]
MEASURES: tuple[Measure, ...] = ("ganta", "posterior")
_TOL = 1e-12


@dataclass(frozen=True)
class ReleaseSummary:
    """How the population falls in one release.

    ``located``: individuals consistent with at least one group; ``ambiguous``: with more
    than one; ``present``: in the release (known from identifier hashes, or assumed: the
    located ones); ``present_unlocatable``: known to be in it but consistent with no group.
    ``avg_group_size`` and ``avg_ea`` are averaged over the overlapping population that
    this release is combined for (Figure 3 of the paper).
    """

    name: str
    role: Literal["candidate", "prior"]
    kind: str
    records: int
    groups: int
    located: int
    ambiguous: int
    unlocatable: int
    present: int
    present_unlocatable: int
    combined_for: int
    avg_group_size: float | None
    avg_ea: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Breach:
    """One individual's intersection attack, spelled out: which releases and groups were
    combined, what each allowed, and what is left."""

    row: int
    qis: dict[str, str]
    releases: list[dict[str, Any]]
    intersection: list[str]
    ea_hat: int
    anon_drop: int
    confidence: float
    posterior: float
    most_likely: str
    inconsistent: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        parts = [
            f"{r['release']} group {' | '.join(r['groups'])} "
            f"({r['ea']} value{'' if r['ea'] == 1 else 's'})"
            for r in self.releases
        ]
        left = ", ".join(repr(v) for v in self.intersection)
        return f"row {self.row}: {{{left}}} left after intersecting " + " with ".join(parts)


@dataclass(frozen=True)
class CompositionResult:
    """Outcome of the intersection attack (Algorithm 1) on a candidate and its priors."""

    overlap: Literal["worst-case", "known"]
    releases: tuple[ReleaseSummary, ...]
    values: tuple[str, ...]
    population: int
    overlap_size: int
    candidate_only: int
    inconsistent: int
    inconsistent_dropped: int
    unlocatable: list[dict[str, Any]]
    vp: int
    averages: dict[str, Any]
    worst: tuple[Breach, ...]
    confidences: tuple[float, ...]
    in_overlap: BoolArray = field(repr=False)
    used: BoolArray = field(repr=False)
    ea: IntArray = field(repr=False)
    ea_hat: IntArray = field(repr=False)
    anon_drop: IntArray = field(repr=False)
    confidence: FloatArray = field(repr=False)
    posterior: FloatArray = field(repr=False)
    posterior_value: IntArray = field(repr=False)
    intersections: BoolArray = field(repr=False)
    posterior_alone: FloatArray = field(repr=False)

    # ------------------------------------------------------------- totals
    def vp_c(self, c: float, measure: Measure = "ganta", alone: bool = False) -> int:
        """``|VP_C|``: individuals of ``P`` the adversary pins down with confidence ``>= c``
        (``measure="posterior"``: the frequency-aware posterior instead of ``C_i``;
        ``alone=True``: from the candidate alone, before intersecting, for comparison)."""
        c = check_confidence(c)
        if measure == "ganta":
            # C_i >= c  <=>  1 / EA-hat >= c  <=>  EA-hat * c <= 1 (exact for C = 1/m)
            ea = self.ea[:, 0] if alone else self.ea_hat
            hit = (ea > 0) & (ea * c <= 1 + _TOL)
        elif measure == "posterior":
            hit = (self.posterior_alone if alone else self.posterior) >= c - _TOL
        else:
            raise InputError(f"unknown measure {measure!r} (known: {', '.join(MEASURES)})")
        return int((hit & self.in_overlap).sum())

    def pvp_c(self, c: float, measure: Measure = "ganta", alone: bool = False) -> float:
        """``PVP_C = |VP_C| * 100 / |P|`` (0 when ``P`` is empty)."""
        if self.overlap_size == 0:
            return 0.0
        return self.vp_c(c, measure, alone) * 100.0 / self.overlap_size

    def pvp_table(self) -> list[dict[str, Any]]:
        """``PVP_C`` for every confidence of the audit, with Ganta's ``C_i`` and the posterior,
        after intersecting and (``alone_*``) from the candidate alone."""
        return [
            {
                "confidence": c,
                "vp": self.vp_c(c),
                "pvp": self.pvp_c(c),
                "posterior_vp": self.vp_c(c, "posterior"),
                "posterior_pvp": self.pvp_c(c, "posterior"),
                "alone_pvp": self.pvp_c(c, alone=True),
                "alone_posterior_pvp": self.pvp_c(c, "posterior", alone=True),
            }
            for c in self.confidences
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "overlap": self.overlap,
            "population": self.population,
            "overlap_size": self.overlap_size,
            "candidate_only": self.candidate_only,
            "inconsistent": self.inconsistent,
            "inconsistent_dropped": self.inconsistent_dropped,
            "releases": [r.to_dict() for r in self.releases],
            "unlocatable": self.unlocatable,
            "vp": self.vp,
            "pvp": self.pvp_table(),
            "averages": self.averages,
            "worst": [b.to_dict() for b in self.worst],
        }

    def individuals_table(self) -> pa.Table:
        """One row per individual of the population: ``row``, ``in_overlap``, ``releases``
        (combined), ``ea_<release>`` (0 where not combined), ``ea_hat``, ``anon_drop``,
        ``confidence``, ``posterior``, ``most_likely``, ``intersection``.

        It holds the adversary's inferences about real people: treat it as confidential.
        """
        import pyarrow as pa

        names = [r.name for r in self.releases]
        cols: dict[str, Any] = {
            "row": pa.array(np.arange(self.population, dtype=np.int64)),
            "in_overlap": pa.array(self.in_overlap),
            "releases": pa.array(
                [
                    "; ".join(n for n, u in zip(names, row, strict=True) if u)
                    for row in self.used.tolist()
                ]
            ),
        }
        for j, n in enumerate(names):
            cols[f"ea[{n}]"] = pa.array(self.ea[:, j])
        has = self.ea_hat > 0
        cols["ea_hat"] = pa.array(self.ea_hat)
        cols["anon_drop"] = pa.array(self.anon_drop)
        cols["confidence"] = pa.array(self.confidence)
        cols["posterior"] = pa.array(self.posterior)
        cols["most_likely"] = pa.array(
            [
                self.values[v] if ok else None
                for v, ok in zip(self.posterior_value.tolist(), has.tolist(), strict=True)
            ],
            type=pa.string(),
        )
        cols["intersection"] = pa.array(
            ["; ".join(self.values[v] for v in np.flatnonzero(row)) for row in self.intersections]
        )
        return pa.table(cols)


def check_confidence(c: object) -> float:
    if isinstance(c, bool) or not isinstance(c, int | float) or not 0 < float(c) <= 1:
        raise InputError(f"confidence C must be in (0, 1], got {c!r}")
    return float(c)


def check_max_pvp(p: object) -> float:
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= float(p) <= 100:
        raise InputError(f"the PVP threshold must be a percentage in [0, 100], got {p!r}")
    return float(p)


def gate(
    result: CompositionResult,
    confidence: float = 1.0,
    max_pvp: float = 0.0,
    measure: Measure = "ganta",
) -> CriterionResult:
    """Block when ``PVP_C`` exceeds ``max_pvp`` percent (defaults: any perfect breach, i.e.
    anyone pinned down with confidence 100%, blocks).

    ``measure="posterior"`` gates on the frequency-aware posterior instead of Ganta's
    ``C_i``; it is never smaller, so it blocks at least as often.
    """
    c = check_confidence(confidence)
    limit = check_max_pvp(max_pvp)
    if measure not in MEASURES:
        raise InputError(f"unknown measure {measure!r} (known: {', '.join(MEASURES)})")
    vp = result.vp_c(c, measure)
    pvp = result.pvp_c(c, measure)
    safe = pvp <= limit + _TOL
    what = "C_i = 1/|S_i|" if measure == "ganta" else "frequency-aware posterior"
    overlap = "worst-case overlap" if result.overlap == "worst-case" else "known overlap"
    pct = f"{c:.0%}" if abs(c * 100 - round(c * 100)) < 1e-9 else f"{c:.4g}"
    lead = (
        f"{vp:,} of the {result.overlap_size:,} people in the candidate and an earlier release "
        f"({overlap}) are pinned to their sensitive value with confidence >= {pct} ({what}) "
        f"after intersecting releases: PVP = {pvp:.2f}%, limit {limit:g}%"
    )
    worst = result.worst[0] if result.worst else None
    relevant = worst is not None and (
        (worst.confidence >= c - _TOL) if measure == "ganta" else (worst.posterior >= c - _TOL)
    )
    if safe:
        reason = lead + "."
    else:
        reason = lead + (f". Worst: {worst.describe()}." if worst is not None and relevant else ".")
    if result.overlap_size == 0:
        reason = (
            "no individual of the candidate is "
            + ("locatable" if result.overlap == "worst-case" else "known to be")
            + " in an earlier release: nothing to intersect."
        )
    return CriterionResult(
        criterion="composition",
        safe=safe,
        parameters={
            "confidence": c,
            "max_pvp": limit,
            "measure": measure,
            "overlap": result.overlap,
        },
        value=pvp,
        reason=reason,
        max_disclosure=float(result.posterior[result.in_overlap].max())
        if result.overlap_size
        else 0.0,
        witness=worst.to_dict() if worst is not None and relevant else None,
        details={"vp_c": vp, "overlap_size": result.overlap_size, "vp": result.vp},
    )
