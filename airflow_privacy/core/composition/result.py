"""Plain-data results of the composition audit (serialize to JSON) and its gate.

Names follow Ganta et al., "Composition Attacks and Auxiliary Information in Data Privacy"
(KDD 2008), section 2.1: ``EA_ij`` (effective anonymity
of individual ``i`` in release ``j``, Definition 8), ``EA-hat_i`` (effective posterior
anonymity), ``Anon_Drop_i``, ``C_i = 1 / EA-hat_i`` (Definition 9), ``VP``, ``VP_C`` and
``PVP_C`` (the percentage of the overlapping population ``P`` with ``C_i >= C``).

Thresholds (:mod:`airflow_privacy.core.thresholds`): ``C_i = 1 / EA-hat_i`` and
``PVP_C = 100 |VP_C| / |P|`` are ratios of integers and are compared exactly with ``C`` and
the PVP limit (each read as the decimal it was written as); the frequency-aware posterior is
a float and counts as pinned down within the tolerance band below ``C``, erring towards
unsafe.

Redaction: a :class:`Breach` holds one person's exact QI values and the sensitive values
left for them; it stays inside the engine and in files the user asked for explicitly. What
leaves it -- the gate's reason and witness, :meth:`CompositionResult.to_dict` with
``redacted=True`` -- is pseudonymous (:meth:`Breach.public_dict`,
:meth:`Breach.describe_public`): the row number, how many values are left, the confidence
and the published groups that combine.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

import numpy as np
import numpy.typing as npt

from airflow_privacy.core import thresholds
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
Measure = Literal["ganta", "posterior"]
MEASURES: tuple[Measure, ...] = ("ganta", "posterior")


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
    combined, what each allowed, and what is left.

    Confidential: ``qis`` are the person's exact QI values, ``intersection``,
    ``most_likely`` and each release's ``values`` are sensitive values inferred about them.
    :meth:`to_dict` and :meth:`describe` show all of it (for a file the user asked for);
    :meth:`public_dict` and :meth:`describe_public` show none of it.
    """

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
    sensitive_left: bool = True  # a non-benign value is left in the intersection

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """Confidential: names the sensitive values left for this person."""
        parts = [
            f"{r['release']} group {' | '.join(r['groups'])} "
            f"({r['ea']} value{'' if r['ea'] == 1 else 's'})"
            for r in self.releases
        ]
        left = ", ".join(repr(v) for v in self.intersection)
        return f"row {self.row}: {{{left}}} left after intersecting " + " with ".join(parts)

    def public_dict(self) -> dict[str, Any]:
        """The pseudonymous form: ``row``, ``confidence``, ``posterior``, ``ea_hat``,
        ``anon_drop`` and per combined release ``{release, groups, ea}`` (the published
        group labels and how many values each allowed); never the person's QI values nor
        any sensitive value."""
        return {
            "row": self.row,
            "confidence": self.confidence,
            "posterior": self.posterior,
            "ea_hat": self.ea_hat,
            "anon_drop": self.anon_drop,
            "releases": [
                {"release": r["release"], "groups": list(r["groups"]), "ea": r["ea"]}
                for r in self.releases
            ],
        }

    def describe_public(self) -> str:
        """``row 12: 1 value left (confidence 100%, posterior 100%) after intersecting H1
        group 'zip=130**, age=<30' with H2 group 'zip=130**, age=<35'``: the pseudonymous
        row, how many values are left, how sure the attack is and the published groups that
        combine; never a sensitive value nor the person's QI values."""
        parts = [
            f"{r['release']} group " + " | ".join(repr(g) for g in r["groups"])
            for r in self.releases
        ]
        n = self.ea_hat
        left = f"{n} value{'' if n == 1 else 's'} left" if n else "no value left"
        return (
            f"row {self.row}: {left} (confidence {_pct(self.confidence)}, posterior "
            f"{_pct(self.posterior)}) after intersecting " + " with ".join(parts)
        )


def _pct(x: float) -> str:
    return f"{x:.0%}" if abs(x * 100 - round(x * 100)) < 1e-9 else f"{x:.4g}"


T = TypeVar("T")


class _PerPerson(Generic[T]):
    """An array of :attr:`CompositionResult.by_group` of the attribute's name, one entry per
    person: expanded through ``group_of`` when first read and kept (as
    ``functools.cached_property`` keeps a value); ``None`` stays ``None``."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> _PerPerson[T]: ...
    @overload
    def __get__(self, obj: CompositionResult, owner: type) -> T: ...
    def __get__(self, obj: CompositionResult | None, owner: type) -> _PerPerson[T] | T:
        if obj is None:
            return self
        group = obj.by_group.get(self.name)
        value: T = None if group is None else group[obj.group_of]  # type: ignore[assignment]
        obj.__dict__[self.name] = value  # read from the instance from now on
        return value


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
    group_of: IntArray = field(repr=False)
    """The group of each person: people with the same QI values (and releases, when the
    overlap is known) meet the same fate, and the attack ran once per group."""
    group_size: IntArray = field(repr=False)
    by_group: dict[str, Any] = field(repr=False)
    """Per group: ``in_overlap``, ``used``, ``ea``, ``ea_hat``, ``anon_drop``,
    ``confidence``, ``posterior``, ``posterior_value``, ``intersections``,
    ``posterior_alone``, ``sensitive_left``, ``sensitive_left_alone`` (the attributes of the
    same names are these per person, expanded when first read)."""
    benign: tuple[str, ...] = ()

    # the per-person views (Algorithm 1's quantities for every individual)
    in_overlap = _PerPerson[BoolArray]()
    used = _PerPerson[BoolArray]()
    ea = _PerPerson[IntArray]()
    ea_hat = _PerPerson[IntArray]()
    anon_drop = _PerPerson[IntArray]()
    confidence = _PerPerson[FloatArray]()
    posterior = _PerPerson[FloatArray]()
    posterior_value = _PerPerson[IntArray]()
    intersections = _PerPerson[BoolArray]()
    posterior_alone = _PerPerson[FloatArray]()
    sensitive_left = _PerPerson[BoolArray | None]()
    sensitive_left_alone = _PerPerson[BoolArray | None]()

    # ------------------------------------------------------------- totals
    def vp_c(self, c: float, measure: Measure = "ganta", alone: bool = False) -> int:
        """``|VP_C|``: individuals of ``P`` the adversary pins down with confidence ``>= c``
        (``measure="posterior"``: the frequency-aware posterior instead of ``C_i``;
        ``alone=True``: from the candidate alone, before intersecting, for comparison)."""
        return int(self.group_size[self._pinned_groups(c, measure, alone)].sum())

    def pinned_mask(self, c: float, measure: Measure = "ganta", alone: bool = False) -> BoolArray:
        """Who is in ``VP_C`` (:meth:`vp_c` counts them): one flag per individual."""
        out: BoolArray = self._pinned_groups(c, measure, alone)[self.group_of]
        return out

    def _pinned_groups(self, c: float, measure: Measure, alone: bool) -> BoolArray:
        """:meth:`pinned_mask` per group of identical people."""
        g = self.by_group
        c = check_confidence(c)
        if measure == "ganta":
            # C_i >= c, i.e. not (1 / EA-hat < c), exactly for every distinct EA-hat; with
            # benign values only people with a non-benign value left (docs/composition.md)
            ea = g["ea"][:, 0] if alone else g["ea_hat"]
            hit = np.zeros(ea.shape, dtype=bool)
            for e in np.unique(ea[ea > 0]).tolist():
                if pinned(Fraction(1, int(e)), c):
                    hit |= ea == e
            left = g.get("sensitive_left_alone" if alone else "sensitive_left")
            if left is not None:
                hit &= left
        elif measure == "posterior":
            # not thresholds.below(posterior, c): within the band below c counts as pinned
            post = g["posterior_alone"] if alone else g["posterior"]
            hit = post >= c - thresholds.band(c)
        else:
            raise InputError(f"unknown measure {measure!r} (known: {', '.join(MEASURES)})")
        out: BoolArray = hit & g["in_overlap"]
        return out

    def pvp_c(self, c: float, measure: Measure = "ganta", alone: bool = False) -> float:
        """``PVP_C = |VP_C| * 100 / |P|`` (0 when ``P`` is empty)."""
        return float(self.pvp_exact(c, measure, alone))

    def pvp_exact(self, c: float, measure: Measure = "ganta", alone: bool = False) -> Fraction:
        """``PVP_C`` as an exact fraction (what :func:`gate` compares with its limit)."""
        if self.overlap_size == 0:
            return Fraction(0)
        return Fraction(100 * self.vp_c(c, measure, alone), self.overlap_size)

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

    def to_dict(self, redacted: bool = False) -> dict[str, Any]:
        """JSON-ready audit. ``redacted=False`` (confidential, for a file the user asked for):
        the worst individuals in full (:meth:`Breach.to_dict`: QI values, values left) and
        the unlocatable rows with their reason (which quotes the person's QI value).
        ``redacted=True`` (the public form, for logs, XCom, reports and standard output):
        the worst individuals pseudonymous (:meth:`Breach.public_dict`) and the unlocatable
        rows by row number only."""
        return {
            "overlap": self.overlap,
            "population": self.population,
            "overlap_size": self.overlap_size,
            "candidate_only": self.candidate_only,
            "inconsistent": self.inconsistent,
            "inconsistent_dropped": self.inconsistent_dropped,
            "releases": [r.to_dict() for r in self.releases],
            "unlocatable": (
                [{"row": u.get("row")} for u in self.unlocatable] if redacted else self.unlocatable
            ),
            "vp": self.vp,
            "pvp": self.pvp_table(),
            "averages": self.averages,
            "worst": [b.public_dict() if redacted else b.to_dict() for b in self.worst],
            "redacted": redacted,
            **({"benign": list(self.benign)} if self.benign else {}),
        }

    def public_dict(self) -> dict[str, Any]:
        """The public form, :meth:`to_dict` with ``redacted=True``."""
        return self.to_dict(redacted=True)

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


def pinned(confidence: float | Fraction, c: float) -> bool:
    """Whether an individual counts as pinned down at confidence ``c`` (``C_i >= c``, in
    ``VP_C``): ``not thresholds.below(confidence, c)``, so an exact ``C_i = 1 / EA-hat`` is
    compared exactly and a float posterior within the band below ``c`` counts (unsafe)."""
    return not thresholds.below(confidence, c)


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

    ``safe`` iff ``PVP_C <= max_pvp`` with ``PVP_C = 100 |VP_C| / |P|`` an exact fraction
    compared exactly (:func:`airflow_privacy.core.thresholds.at_most`); who is in ``VP_C`` is
    decided by :func:`pinned`. The reason and the witness are pseudonymous
    (:meth:`Breach.describe_public`, :meth:`Breach.public_dict`): the row, how many values
    are left, the confidence and the published groups, never a sensitive value nor the
    person's QI values. ``details["tolerance"]`` and ``details["decision"]`` state how the
    verdict was taken.
    """
    c = check_confidence(confidence)
    limit = check_max_pvp(max_pvp)
    if measure not in MEASURES:
        raise InputError(f"unknown measure {measure!r} (known: {', '.join(MEASURES)})")
    vp = result.vp_c(c, measure)
    pvp_exact = result.pvp_exact(c, measure)
    pvp = float(pvp_exact)
    safe = thresholds.at_most(pvp_exact, limit)
    what = "C_i = 1/|S_i|" if measure == "ganta" else "frequency-aware posterior"
    overlap = "worst-case overlap" if result.overlap == "worst-case" else "known overlap"
    lead = (
        f"{vp:,} of the {result.overlap_size:,} people in the candidate and an earlier release "
        f"({overlap}) are pinned to their sensitive value with confidence >= {_pct(c)} ({what}) "
        f"after intersecting releases: PVP = {pvp:.2f}%, limit {limit:g}%"
    )
    worst = result.worst[0] if result.worst else None
    relevant = False
    if worst is not None:
        if measure == "ganta":
            relevant = (
                worst.ea_hat > 0 and worst.sensitive_left and pinned(Fraction(1, worst.ea_hat), c)
            )
        else:
            relevant = pinned(worst.posterior, c)
    if safe or worst is None or not relevant:
        reason = lead + "."
    else:
        reason = lead + f". Worst: {worst.describe_public()}."
    if result.overlap_size == 0:
        reason = (
            "no individual of the candidate is "
            + ("locatable" if result.overlap == "worst-case" else "known to be")
            + " in an earlier release: nothing to intersect."
        )
    decision = thresholds.EXACT if measure == "ganta" else thresholds.FLOAT
    return CriterionResult(
        criterion="composition",
        safe=safe,
        parameters={
            "confidence": c,
            "max_pvp": limit,
            "measure": measure,
            "overlap": result.overlap,
            **({"benign": list(result.benign)} if result.benign else {}),
        },
        value=pvp,
        reason=reason,
        max_disclosure=float(result.posterior[result.in_overlap].max())
        if result.overlap_size
        else 0.0,
        witness=worst.public_dict() if worst is not None and relevant else None,
        details={
            "vp_c": vp,
            "overlap_size": result.overlap_size,
            "vp": result.vp,
            "pvp_exact": f"{pvp_exact.numerator}/{pvp_exact.denominator}",
            **thresholds.decision_details(decision),
        },
    )
