"""Privacy skyline: maximum breach against (l, k, m) knowledge, the skyline criterion and
the skyline explorer.

Implements Chen, LeFevre, Ramakrishnan, "Privacy Skyline: Privacy with Multidimensional
Adversarial Knowledge" (VLDB 2007), from the talk's slides:

* "3D Knowledge Expression": the adversary's knowledge ``L_{t,s}(l, k, m)`` about a target
  person ``t`` and a sensitive value ``s`` is ``l`` values ``t`` does not have, the exact
  values of ``k`` other people, and ``m`` implications ``v_i[S] = s -> t[S] = s`` about ``m``
  other people. The maximum breach is ``max Pr(t[S] = s | D*, L_{t,s}(l, k, m))`` over
  ``t``, ``s`` and the knowledge, under the random-worlds assumption ("Theoretical
  Framework": every reconstruction of the bucketization is equally likely).
* "Basic 3D Privacy Criterion" / "Skyline Privacy Criterion": a release is safe for
  ``(l, k, m, c)`` iff the maximum breach is below ``c``, and safe for a skyline iff it is
  safe for every point.
* "Skyline Exploratory Tool" (SkylineFind): the maximal safe ``(l, k, m)`` for a ``c``.
* "Check Safety for a Single Point" / "Congregation Property" / "SkylineCheck Algorithm":
  the breach in closed form from per-group statistics, in one scan
  (:mod:`airflow_privacy.core.criteria.skyline_scan`).

Conventions (docs/skyline.md): ``t``, the ``u``'s and the ``v``'s are distinct people;
"``l`` values" means at most ``l`` (a value absent from the target's group rules nothing
out), and likewise for ``k`` and ``m``, which makes the breach monotone in each. The closed
form was re-derived and checked against an exhaustive possible-worlds enumerator
(tests/core/criteria/test_skyline_oracle.py); the witness's probability is recomputed with exact
rationals, so the reported number is exactly the breach of the reported knowledge, and the
verdicts ("breach below c") compare that fraction exactly with ``c``
(:func:`airflow_privacy.core.thresholds.below`, ``c`` read as the decimal it was written as),
so a breach equal to ``c`` is unsafe however its float rounds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core import thresholds
from airflow_privacy.core.criteria.base import SkylinePoint, parse_points
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.criteria.skyline_scan import Scanner, TopTwo
from airflow_privacy.core.criteria.wording import ValueNames
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# log-space tolerance under which two float costs are settled with exact rationals
_TIE = 1e-9
# at most this many near-optimal candidates are evaluated exactly per point
_MAX_EXACT = 256


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Placement:
    """Where the knowledge sits: ``k_target`` known people and ``m_target`` implications in
    the target's group, ``k_other`` / ``m_other`` in one other group."""

    k_target: int
    m_target: int
    k_other: int
    m_other: int


@dataclass(frozen=True)
class SkylineWitness:
    """Knowledge that attains the maximum breach (people inside a group are exchangeable,
    so a person is named by its group and a 0-based index).

    * the target is person 0 of ``target_group``, the value is ``value``;
    * ``excluded``: the values the adversary knows the target does not have;
    * ``known_target``: the values of persons ``1 .. len(known_target)`` of the target's
      group; ``implied_target``: the next that many persons ``v`` of the target's group, for
      each of whom the adversary knows ``v[S] = value -> t[S] = value``;
    * ``other_group`` (or ``None``), ``known_other`` (persons ``0 ..``) and
      ``implied_other`` (the next persons) likewise in one other group.

    It uses at most ``(l, k, m)`` pieces; fewer when fewer already reach the maximum.
    """

    target_group: int
    value: str
    excluded: tuple[str, ...]
    known_target: tuple[str, ...]
    implied_target: int
    other_group: int | None
    known_other: tuple[str, ...]
    implied_other: int

    @property
    def pieces(self) -> tuple[int, int, int]:
        """``(l, k, m)`` actually used."""
        return (
            len(self.excluded),
            len(self.known_target) + len(self.known_other),
            self.implied_target + self.implied_other,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class BreachResult:
    """Maximum breach ``max Pr(t[S] = s | D*, L_{t,s}(l, k, m))`` with its witness.

    ``numerator / denominator`` is the exact breach (a fraction), ``breach`` its float.
    """

    l: int  # noqa: E741
    k: int
    m: int
    breach: float
    numerator: int
    denominator: int
    witness: SkylineWitness

    @property
    def exact(self) -> Fraction:
        return Fraction(self.numerator, self.denominator)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SkylineResult:
    """The skyline of a release at confidence ``c``: the maximal safe ``(l, k, m)`` within
    the bounds, each with its breach (below ``c``).

    ``staircase[l][k]`` is the largest safe ``m`` for ``(l, k)`` (``-1``: none), the whole
    safe region; ``evaluations`` counts the breach evaluations the search needed.
    """

    c: float
    bounds: tuple[int, int, int]
    points: tuple[tuple[int, int, int], ...]
    breaches: tuple[BreachResult, ...]
    staircase: tuple[tuple[int, ...], ...]
    evaluations: int
    unsafe_example: BreachResult | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------- validation
def _whole(x: object, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int | np.integer):
        raise InputError(f"{name} must be a whole number >= 0, got {x!r}")
    if x < 0:
        raise InputError(f"{name} must be a whole number >= 0, got {x}")
    return int(x)


def _confidence(c: object) -> float:
    if isinstance(c, bool) or not isinstance(c, int | float | np.integer | np.floating):
        raise InputError(f"c must be a number in (0, 1], got {c!r}")
    cf = float(c)
    if not 0.0 < cf <= 1.0:
        raise InputError(f"c must be in (0, 1], got {c}")
    return cf


def _check_release(b: object) -> Bucketization:
    if not isinstance(b, Bucketization):
        raise InputError(f"expected a Bucketization, got {type(b).__name__}")
    return b


# ------------------------------------------------------------------ exact evaluation
def _falling(x: int, m: int) -> int:
    out = 1
    for i in range(m):
        out *= x - i
    return out


def _draw_none(people: int, holders: int, m: int) -> Fraction:
    """``H(people, holders, m)``: the chance that ``m`` people drawn without replacement
    from ``people`` (``holders`` of whom hold the value) include no holder."""
    if m == 0:
        return Fraction(1)
    return Fraction(_falling(people - holders, m), _falling(people, m))


def _excluded(row: Sequence[int], s: int, l: int) -> list[int]:  # noqa: E741
    """The ``l`` most frequent values other than ``s`` present in the row (ties: index)."""
    order = sorted((v for v in range(len(row)) if v != s and row[v] > 0), key=lambda v: -row[v])
    return order[:l]


@dataclass(frozen=True)
class _Exact:
    value: Fraction
    excluded: tuple[int, ...]
    placement: Placement
    other: int | None


def _exact(
    counts: IntArray,
    s: int,
    target: int,
    other: int | None,
    l: int,  # noqa: E741
    p: Placement,
) -> _Exact:
    """Exact breach of one placement, trimmed to a feasible placement with the same value.

    ``Pr = n_s / (n_s + max(0, R - k_B) H(n - k_B - 1, n_s, m_B) H(N - k_G, c_G, m_G))``
    (docs/skyline.md). Saturated placements (a factor 0: the knowledge leaves the target no
    value but ``s``) are trimmed to the fewest pieces that still saturate, within the
    budget; other-group knowledge that cannot matter (``c_G = 0`` or no implication there)
    is dropped.
    """
    row = [int(x) for x in counts[target]]
    n, ns = sum(row), row[s]
    excl = _excluded(row, s, l)
    r = n - ns - sum(row[v] for v in excl)
    kb, mb, kg, mg = p.k_target, p.m_target, p.k_other, p.m_other
    one = Fraction(1)
    if r <= kb:  # every value but s is excluded or held by a known person
        return _Exact(one, tuple(excl), Placement(r, 0, 0, 0), None)
    left = n - 1 - kb  # people of B besides t and the known ones
    if mb > left - ns:  # the implications cover every non-s person left: t must be s
        return _Exact(one, (), Placement(kb, left - ns + 1, 0, 0), None)
    h_b = _draw_none(left, ns, mb)
    if other is not None and mg > 0 and int(counts[other, s]) > 0:
        big_n = int(counts[other].sum())
        cg = int(counts[other, s])
        kg = min(kg, big_n - cg)  # known people beyond the non-s ones add nothing
        if mg > big_n - kg - cg:  # some v in G surely holds s
            return _Exact(one, (), Placement(0, 0, kg, big_n - kg - cg + 1), other)
        h_g = _draw_none(big_n - kg, cg, mg)
        value = Fraction(ns) / (ns + (r - kb) * h_b * h_g)
        return _Exact(value, tuple(excl), Placement(kb, mb, kg, mg), other)
    value = Fraction(ns) / (ns + (r - kb) * h_b)
    return _Exact(value, tuple(excl), Placement(kb, mb, 0, 0), None)


def _witness(b: Bucketization, s: int, target: int, ex: _Exact) -> SkylineWitness:
    """Name the values of the known people: the most frequent values that are neither
    ``s`` nor excluded (in the other group: not ``s``)."""
    counts = b.counts

    def known(group: int, k: int, skip: set[int]) -> tuple[str, ...]:
        row = [int(x) for x in counts[group]]
        order = sorted((v for v in range(len(row)) if v not in skip), key=lambda v: -row[v])
        out: list[str] = []
        for v in order:
            take = min(row[v], k - len(out))
            out.extend([b.values[v]] * take)
            if len(out) == k:
                break
        return tuple(out)

    p = ex.placement
    return SkylineWitness(
        target_group=target,
        value=b.values[s],
        excluded=tuple(b.values[v] for v in ex.excluded),
        known_target=known(target, p.k_target, {s, *ex.excluded}),
        implied_target=p.m_target,
        other_group=ex.other,
        known_other=known(ex.other, p.k_other, {s}) if ex.other is not None else (),
        implied_other=p.m_other if ex.other is not None else 0,
    )


# ------------------------------------------------------------------------ combination
Split = tuple[int, int, int, int]
"""``(k_B, m_B, k_G, m_G)``: known people and implications in the target's group and in
one other group."""


def _splits(k: int, m: int, all_splits: bool) -> list[Split]:
    """The placements to compare for the point ``(k, m)``.

    The breach is monotone in each budget, so the whole budget is used. For fixed target
    group ``B``, other group ``G`` and value ``s``, the log ratio is concave in ``k_B`` (for
    fixed ``m_B``) and in ``m_B`` (for fixed ``k_B``), so its minimum over the rectangle of
    splits is at a corner (docs/skyline.md, "Congregation"): everything in ``B``; ``t`` and
    the known people in ``B``, the implications in ``G``; ``t`` alone in ``B``, the known
    people and implications in ``G``. (The fourth corner, known people alone in ``G``, is
    never better than everything in ``B``.) ``all_splits`` compares every split instead: the
    reference the tests hold the corners to.
    """
    if all_splits:
        return [(kb, mb, k - kb, m - mb) for kb in range(k + 1) for mb in range(m + 1)]
    return sorted({(k, m, 0, 0), (k, 0, 0, m), (0, 0, k, m)})


@dataclass
class _Tables:
    """The release and the scan tables computed so far (extended on demand, each extension
    one scan over the groups)."""

    b: Bucketization
    all_splits: bool = False
    target: dict[tuple[int, int, int], TopTwo] = field(default_factory=dict)
    other: dict[tuple[int, int], TopTwo] = field(default_factory=dict)
    scanner: Scanner | None = None

    def ensure(self, points: Iterable[tuple[int, int, int]]) -> None:
        want_t: dict[int, set[tuple[int, int]]] = {}
        want_o: set[tuple[int, int]] = set()
        for l, k, m in points:  # noqa: E741
            for kb, mb, kg, mg in _splits(k, m, self.all_splits):
                if (l, kb, mb) not in self.target:
                    want_t.setdefault(l, set()).add((kb, mb))
                if (kg, mg) != (0, 0) and (kg, mg) not in self.other:
                    want_o.add((kg, mg))
        if want_t or want_o:
            if self.scanner is None:
                self.scanner = Scanner(self.b.counts)
            tables = self.scanner.tables(want_t, want_o)
            self.target.update(tables.target)
            self.other.update(tables.other)


@dataclass(frozen=True)
class _Options:
    """Every candidate combination for one point, flattened: float cost (log of the ratio
    ``Pr(t != s, K) / Pr(t = s, K)``), value, target group, other group (-1: none) and the
    split."""

    cost: FloatArray
    value: IntArray
    target: IntArray
    other: IntArray
    split: IntArray  # index into the split list


def _options(t: _Tables, l: int, k: int, m: int) -> tuple[_Options, list[Split]]:  # noqa: E741
    """Combine target and other-group tables for the point ``(l, k, m)``.

    For each value and split, the best pair of *distinct* groups is among (best B, best G),
    (best B, second G), (second B, best G); "no other group" (cost 0) is always allowed.
    """
    t.ensure([(l, k, m)])
    splits = _splits(k, m, t.all_splits)
    n_values = len(t.b.values)
    none = np.full(n_values, -1, dtype=np.int64)
    costs: list[FloatArray] = []
    values: list[IntArray] = []
    targets: list[IntArray] = []
    others: list[IntArray] = []
    split_ids: list[IntArray] = []
    vals = np.arange(n_values, dtype=np.int64)
    for idx, (kb, mb, kg, mg) in enumerate(splits):
        tb = t.target[(l, kb, mb)]
        pairs: list[tuple[FloatArray, IntArray, IntArray]] = []
        for i in (0, 1):  # no other group
            pairs.append((tb.cost[:, i], tb.group[:, i], none))
        if (kg, mg) != (0, 0):
            to = t.other[(kg, mg)]
            for i, j in ((0, 0), (0, 1), (1, 0)):
                bad = (tb.group[:, i] == to.group[:, j]) | (to.group[:, j] < 0)
                bad |= tb.group[:, i] < 0
                with np.errstate(invalid="ignore"):  # inf + -inf where bad: masked
                    c = np.where(bad, np.inf, tb.cost[:, i] + to.cost[:, j])
                pairs.append((c, tb.group[:, i], to.group[:, j]))
        for c, tg, og in pairs:
            costs.append(c)
            values.append(vals)
            targets.append(tg)
            others.append(og)
            split_ids.append(np.full(n_values, idx, dtype=np.int64))
    cost = np.concatenate(costs)
    value = np.concatenate(values)
    if t.b.benign_mask.any():  # a benign value is never the target's (docs/skyline.md)
        cost = np.where(t.b.benign_mask[value], np.inf, cost)
    opt = _Options(
        cost=cost,
        value=value,
        target=np.concatenate(targets),
        other=np.concatenate(others),
        split=np.concatenate(split_ids),
    )
    return opt, splits


def _float_breach(t: _Tables, l: int, k: int, m: int) -> float:  # noqa: E741
    """The maximum breach in floats (no witness): ``1 / (1 + exp(min cost))``."""
    best = float(np.min(_options(t, l, k, m)[0].cost))
    if best == -math.inf:
        return 1.0
    if best == math.inf:
        return 0.0
    return 1.0 / (1.0 + math.exp(best))


def _evaluate(t: _Tables, l: int, k: int, m: int) -> BreachResult:  # noqa: E741
    """The maximum breach at ``(l, k, m)`` with its witness, settled exactly among the
    near-optimal candidates the float costs leave."""
    opt, splits = _options(t, l, k, m)
    best = float(np.min(opt.cost))
    if best == math.inf:  # every value present is benign: nothing to disclose
        return _no_target(t.b, l, k, m)
    limit = best + _TIE if math.isfinite(best) else best
    near = np.flatnonzero(opt.cost <= limit)
    near = near[np.argsort(opt.cost[near], kind="stable")][:_MAX_EXACT]
    chosen: tuple[Fraction, int, int, int, _Exact] | None = None
    for idx in near:
        s, tg, og = int(opt.value[idx]), int(opt.target[idx]), int(opt.other[idx])
        ex = _exact(
            t.b.counts, s, tg, og if og >= 0 else None, l, Placement(*splits[opt.split[idx]])
        )
        p = ex.placement
        size = len(ex.excluded) + p.k_target + p.m_target + p.k_other + p.m_other
        if chosen is None or ex.value > chosen[0] or (ex.value == chosen[0] and size < chosen[1]):
            chosen = (ex.value, size, s, tg, ex)
    assert chosen is not None
    value, _, s, tg, ex = chosen
    witness = _witness(t.b, s, tg, ex)
    return BreachResult(
        l, k, m, float(value), value.numerator, value.denominator, witness
    )  # fmt: skip


def _no_target(b: Bucketization, l: int, k: int, m: int) -> BreachResult:  # noqa: E741
    """Breach 0: every value present in the release is declared benign (docs/skyline.md,
    "Benign values"); the witness names group 0's most frequent value and no knowledge."""
    w = SkylineWitness(0, b.values[int(b.row_order(0)[0])], (), (), 0, None, (), 0)
    return BreachResult(l, k, m, 0.0, 0, 1, w)


# ------------------------------------------------------------------------ public API
def max_breach(b: Bucketization, l: int, k: int, m: int) -> BreachResult:  # noqa: E741
    """``max Pr(t[S] = s | D*, L_{t,s}(l, k, m))`` over every person ``t``, value ``s`` and
    knowledge of that shape, with the knowledge that attains it (slides "3D Knowledge
    Expression" and "Check Safety for a Single Point")."""
    b = _check_release(b)
    point = (_whole(l, "l"), _whole(k, "k"), _whole(m, "m"))
    return _evaluate(_Tables(b), *point)


def max_breaches(b: Bucketization, points: Iterable[tuple[int, int, int]]) -> list[BreachResult]:
    """:func:`max_breach` for several points from one scan over the groups (SkylineCheck)."""
    b = _check_release(b)
    pts = [(_whole(p[0], "l"), _whole(p[1], "k"), _whole(p[2], "m")) for p in points]
    if not pts:
        return []
    t = _Tables(b)
    t.ensure(pts)  # one scan for every point
    return [_evaluate(t, *p) for p in pts]


def breach_cube(b: Bucketization, max_l: int, max_k: int, max_m: int) -> FloatArray:
    """The maximum breach at every point of the box, in floats: ``out[l, k, m]``.

    What :func:`find_skyline` avoids (it evaluates only the staircase); for comparisons,
    plots and tests. One scan over the groups for the whole box.
    """
    b = _check_release(b)
    bounds = (_whole(max_l, "max_l"), _whole(max_k, "max_k"), _whole(max_m, "max_m"))
    t = _Tables(b)
    cube = [
        (l, k, m)
        for l in range(bounds[0] + 1)  # noqa: E741
        for k in range(bounds[1] + 1)
        for m in range(bounds[2] + 1)
    ]
    t.ensure(cube)
    out = np.empty(tuple(x + 1 for x in bounds), dtype=np.float64)
    for p in cube:
        out[p] = _float_breach(t, *p)
    return out


def normalize_points(points: Iterable[Any]) -> list[SkylinePoint]:
    """Skyline points as ``(l, k, m, c)``: from tuples/lists or ``"l,k,m,c"`` strings (the
    CLI's ``--point``), by the one parser of a point (the skyline parameter's kind,
    :func:`airflow_privacy.core.criteria.base.parse_points`). Errors name the criterion and
    the point in neutral words (``skyline: point '1,2,x,0.9': m must be ...``)."""
    return parse_points("skyline", points)


def check_skyline(b: Bucketization, points: Iterable[Any]) -> CriterionResult:
    """Skyline privacy criterion (slide "Skyline Privacy Criterion"): safe iff for every
    point ``(l, k, m, c)`` the maximum breach is below ``c``. One scan serves every point.
    Each point is decided exactly: the breach's fraction against ``c``
    (:func:`airflow_privacy.core.thresholds.below`; ``details["decision"]`` is ``exact``).

    The result's ``value`` / ``max_disclosure`` / ``witness`` are those of the deciding point:
    the first unsafe point, or, when every point is safe, the one closest to its ``c``.
    ``details["points"]`` lists every point's breach and witness.
    """
    b = _check_release(b)
    pts = normalize_points(points)
    results = max_breaches(b, [(p[0], p[1], p[2]) for p in pts])
    per_point = []
    for p, res in zip(pts, results, strict=True):
        per_point.append(
            {
                "point": [p[0], p[1], p[2]],
                "c": p[3],
                "breach": res.breach,
                "safe": thresholds.below(res.exact, p[3]),
                "witness": witness_dict(b, res),
            }
        )
    unsafe = [i for i, d in enumerate(per_point) if not d["safe"]]
    closest = min(range(len(pts)), key=lambda j: pts[j][3] - results[j].breach)
    i = unsafe[0] if unsafe else closest
    p, res = pts[i], results[i]
    safe = not unsafe
    verdict = "below" if per_point[i]["safe"] else "not below"
    if len(pts) == 1:
        lead = ""
    elif unsafe:
        lead = f"{len(unsafe)} of {len(pts)} points unsafe; "
    else:
        lead = f"all {len(pts)} points safe; closest to its c: "
    reason = (
        f"{lead}at (l, k, m) = ({p[0]}, {p[1]}, {p[2]}) the maximum breach is "
        f"{res.breach:.4g}, {verdict} c = {p[3]:g}: {describe_breach(b, res)}"
    )
    return CriterionResult(
        criterion="skyline",
        safe=safe,
        parameters={"points": [list(q) for q in pts], **b.benign_parameters()},
        value=res.breach,
        reason=reason,
        max_disclosure=res.breach,
        witness={"point": [p[0], p[1], p[2]], "c": p[3], **witness_dict(b, res)},
        details={
            "groups": b.n_groups,
            "records": b.n_records,
            "points": per_point,
            **thresholds.decision_details(thresholds.EXACT),
            **b.benign_details(),
        },
    )


def find_skyline(
    b: Bucketization, c: float, max_l: int = 10, max_k: int = 10, max_m: int = 10
) -> SkylineResult:
    """SkylineFind (slide "Skyline Exploratory Tool"): the maximal ``(l, k, m)`` within the
    bounds for which the release is safe at confidence ``c`` (maximum breach ``< c``).

    The breach is monotone in ``l``, ``k`` and ``m``, so the safe region is a staircase:
    for each ``l`` the largest safe ``m`` is non-increasing in ``k`` and bounded by the one
    for ``l - 1``. The search walks that staircase, evaluating ``O(L (K + M))`` points
    instead of the ``O(L K M)`` of the cube, and stops at the first ``l`` with nothing
    safe. A point is maximal iff one more piece of any kind is unsafe or out of bounds.
    Each point is decided in floats when its breach is outside the tolerance band around
    ``c`` and exactly inside it (:mod:`airflow_privacy.core.thresholds`), as
    :func:`check_skyline` decides it.
    """
    b = _check_release(b)
    c = _confidence(c)
    max_l, max_k, max_m = _whole(max_l, "max_l"), _whole(max_k, "max_k"), _whole(max_m, "max_m")
    t = _Tables(b)
    evaluations = 0
    cache: dict[tuple[int, int, int], bool] = {}

    def safe(l: int, k: int, m: int) -> bool:  # noqa: E741
        nonlocal evaluations
        key = (l, k, m)
        if key not in cache:
            evaluations += 1
            value = _float_breach(t, l, k, m)
            if thresholds.near(value, c):  # too close to call in floats: settle exactly
                cache[key] = thresholds.below(_evaluate(t, l, k, m).exact, c)
            else:
                cache[key] = value < c
        return cache[key]

    stairs: list[list[int]] = []
    for l in range(max_l + 1):  # noqa: E741
        row: list[int] = []
        for k in range(max_k + 1):
            top = max_m
            if l > 0:
                top = min(top, stairs[l - 1][k])
            if k > 0:
                top = min(top, row[k - 1])
            m = top
            while m >= 0 and not safe(l, k, m):
                m -= 1
            row.append(m)
        stairs.append(row)
        if row[0] < 0:
            stairs.extend([[-1] * (max_k + 1)] * (max_l - l))
            break
    points: list[tuple[int, int, int]] = []
    for l in range(max_l + 1):  # noqa: E741
        for k in range(max_k + 1):
            m = stairs[l][k]
            if m < 0:
                continue
            up_l = l + 1 <= max_l and stairs[l + 1][k] >= m
            up_k = k + 1 <= max_k and stairs[l][k + 1] >= m
            if not up_l and not up_k:
                points.append((l, k, m))
    breaches = tuple(_evaluate(t, *p) for p in points)
    unsafe_example = None
    if not points:
        unsafe_example = _evaluate(t, 0, 0, 0)
    else:  # the first step beyond the first maximal point that is still within bounds
        for step in ((0, 0, 1), (0, 1, 0), (1, 0, 0)):
            q = (points[0][0] + step[0], points[0][1] + step[1], points[0][2] + step[2])
            if q[0] <= max_l and q[1] <= max_k and q[2] <= max_m:
                unsafe_example = _evaluate(t, *q)
                break
    return SkylineResult(
        c=c,
        bounds=(max_l, max_k, max_m),
        points=tuple(points),
        breaches=breaches,
        staircase=tuple(tuple(r) for r in stairs),
        evaluations=evaluations,
        unsafe_example=unsafe_example,
    )


# ----------------------------------------------------------------------- wording
def _value_names(w: SkylineWitness) -> ValueNames:
    """The witness's values as ``value A`` (the target's), ``value B``, ... in the order
    :func:`describe_breach` and :func:`witness_dict` mention them."""
    names = ValueNames()
    for v in (w.value, *w.excluded, *w.known_target, *w.known_other):
        names(v)
    return names


def _known(vals: Sequence[str], where: str, other: bool, name: ValueNames) -> str:
    if len(vals) == 1:
        who = "a person" if other else "another person"
        return f"the value of {who} in {where} ({name.quoted(vals)})"
    who = "people" if other else "other people"
    return f"the values of {len(vals)} {who} in {where} ({name.quoted(vals)})"


def _implied(count: int, where: str, value: str, other: bool) -> str:
    if count == 1:
        who = "a person" if other else "another person"
        return f"that if {who} of {where} has {value}, so does the target"
    who = "people" if other else "other people"
    return f"that if any of {count} {who} of {where} has {value}, so does the target"


def describe_breach(b: Bucketization, result: BreachResult) -> str:
    """The witness in words a data steward can act on: groups by their published labels,
    sensitive values as ``value A`` (the target's), ``value B``, ...
    (:mod:`airflow_privacy.core.criteria.wording`): never a value itself."""
    w = result.witness
    if result.numerator == 0:
        return "every value present in the release is declared benign: nothing can be disclosed"
    name = _value_names(w)
    target = name(w.value)
    target_group = b.group_label(w.target_group)
    facts: list[str] = []
    if w.excluded:
        facts.append("the target does not have " + " or ".join(name(v) for v in w.excluded))
    if w.known_target:
        facts.append(_known(w.known_target, "the target's group", False, name))
    if w.implied_target:
        facts.append(_implied(w.implied_target, "the target's group", target, other=False))
    if w.other_group is not None:
        where = f"group '{b.group_label(w.other_group)}'"
        if w.known_other:
            facts.append(_known(w.known_other, where, True, name))
        if w.implied_other:
            facts.append(_implied(w.implied_other, where, target, other=True))
    if facts:
        listed = "; ".join(f"({i}) {f}" for i, f in enumerate(facts, start=1))
        prefix = f"an adversary who knows {listed}"
    else:
        prefix = "an adversary with no background knowledge"
    return (
        f"{prefix} concludes that a person in group '{target_group}' has {target} "
        f"with probability {result.breach:.4g}"
    )


def _people(group: int | None, first: int, labels: Sequence[str]) -> list[tuple[int, int, str]]:
    """``(group, person, label)`` for consecutive people of a group, from ``first``."""
    if group is None:
        return []
    return [(group, first + i, v) for i, v in enumerate(labels)]


def witness_dict(b: Bucketization, result: BreachResult) -> dict[str, Any]:
    """JSON-ready witness, the public form: groups with their labels, people by position,
    values as ``value_ref`` (``value A`` is the target's, as in :func:`describe_breach`),
    the pieces used, the explanation; never a sensitive value (``result.witness`` keeps
    them, inside the engine)."""
    w = result.witness
    name = _value_names(w)
    used = w.pieces
    return {
        "target": {
            "group": w.target_group,
            "group_label": b.group_label(w.target_group),
            "person": 0,
            "value_ref": name(w.value),
        },
        "excluded": [name(v) for v in w.excluded],
        "known": [
            {"group": g, "group_label": b.group_label(g), "person": p, "value_ref": name(v)}
            for g, p, v in _people(w.target_group, 1, w.known_target)
            + _people(w.other_group, 0, w.known_other)
        ],
        "implications": [
            {"group": g, "group_label": b.group_label(g), "person": p}
            for g, p, _ in _people(
                w.target_group, 1 + len(w.known_target), ("",) * w.implied_target
            )
            + _people(w.other_group, len(w.known_other), ("",) * w.implied_other)
        ],
        "other_group": (
            None
            if w.other_group is None
            else {"group": w.other_group, "group_label": b.group_label(w.other_group)}
        ),
        "pieces": {"l": used[0], "k": used[1], "m": used[2]},
        "exact": f"{result.numerator}/{result.denominator}",
        "explanation": describe_breach(b, result),
    }
