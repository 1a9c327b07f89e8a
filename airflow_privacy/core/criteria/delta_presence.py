"""delta-presence against a population table, as a criterion a release must meet (and the
anonymizers can target).

Nergiz, Atzori & Clifton (2007), Definition 4: a release ``T*`` of a sample ``T`` of a
population ``P`` is (delta_min, delta_max)-present iff for every person ``t`` of ``P``,
``delta_min <= P(t in T | T*) <= delta_max``. With generalized classes (every population
record of class ``j`` equally likely to be one of the ``f_j`` released records of its class)
``P(t in T | T*) = f_j / F_j``, ``F_j`` the size of the population class (sample included).
ARX (``DPresence``) evaluates it over the classes of the *population*: a population class
without a released record has presence 0, so it fails whenever ``delta_min > 0``
(``Bucketization.population_rest``).

Merging two classes gives the presence ``(f_a + f_b) / (F_a + F_b)``, a mediant, which lies
between the two presences: both bounds survive merges (monotone). Under record suppression a
suppressed group's population class stays in the population with no released record:
presence 0 (its people are known to be absent unless the adversary allows for suppression);
the whole-release check counts it so, and suppression never repairs a ``delta_min``
failure. A coarser group that fails ``delta_max`` may hold passing finer groups, so more
records must be suppressed at a coarser node: not monotone with suppression.

Presences are exact :class:`~fractions.Fraction`\\ s compared with the decimal each limit
prints as (:mod:`airflow_privacy.core.thresholds`).

The engine on class sizes (:func:`presence_of_classes`; the risk package exports it as
``delta_presence``), as ARX evaluates it:

(Nergiz, Atzori & Clifton 2007, Definition 4; ARX ``DPresence``). The
probability that a population record of class ``j`` is in the released sample is
``P_j = f_j / F_j``; the release is (delta_min, delta_max)-present iff
``delta_min <= P_j <= delta_max`` for every class. A population class with no sample record
has ``P_j = 0``, as in ARX::

    double delta = entry.count == 0 ? 0d : (double) entry.count / (double) entry.pcount;
    return (delta >= dMin) && (delta <= dMax);

Here ``P_j`` is an exact :class:`~fractions.Fraction`, compared with the decimal each limit
prints as (:func:`airflow_privacy.core.thresholds.at_least`, ``at_most``), where ARX compares
doubles; they differ only for limits typed with about 16 significant digits.

Reference: M. E. Nergiz, M. Atzori and C. Clifton, "Hiding the presence of individuals from
shared databases", *Proceedings of the 2007 ACM SIGMOD International Conference on
Management of Data*, pp. 665-676, 2007, Definition 4; ARX,
``org.deidentifier.arx.criteria.DPresence``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core import thresholds
from airflow_privacy.core.criteria.k_map import _frac, _pair, _real, missing_population
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.model import Bucketization
from airflow_privacy.core.thresholds import at_least, at_most
from airflow_privacy.errors import InputError

__all__ = ["DeltaPresenceResult", "delta_presence", "groups_present", "presence_of_classes"]

NAME = "delta-presence"
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def groups_present(
    sizes: IntArray, population: IntArray, delta_min: float, delta_max: float
) -> BoolArray:
    """Which groups have ``delta_min <= f_j / F_j <= delta_max``, exactly: with the limits as
    the fractions ``a / b`` they print as (:func:`airflow_privacy.core.thresholds.exact_limit`),
    ``f_j / F_j >= a / b`` iff ``f_j b >= a F_j`` in integers (a class with ``F_j = 0``, no
    population record, has presence 0)."""
    f = [int(x) for x in sizes]
    big_f = [int(x) for x in population]
    lo = thresholds.exact_limit(delta_min)
    hi = thresholds.exact_limit(delta_max)
    bound = max([*f, *big_f, 1]) * max(lo.denominator, lo.numerator, hi.denominator, hi.numerator)
    if bound < 2**62:  # int64 products cannot overflow: vectorized
        fa = np.asarray(f, dtype=np.int64)
        ba = np.asarray(big_f, dtype=np.int64)
        zero = ba == 0
        above = fa * lo.denominator >= lo.numerator * ba
        below = fa * hi.denominator <= hi.numerator * ba
        out: BoolArray = np.where(zero, (lo <= 0) & (hi >= 0), above & below)
        return out
    res = np.zeros(len(f), dtype=bool)
    for j, (a, b) in enumerate(zip(f, big_f, strict=True)):
        p = Fraction(a, b) if b > 0 else Fraction(0)
        res[j] = lo <= p <= hi
    return res


def _pct(p: Fraction) -> str:
    return f"{float(p):.4g}"


def _extreme(sizes: IntArray, population: IntArray, largest: bool) -> int:
    """The group with the largest (smallest) presence ``f_j / F_j``, exactly: the float
    candidates within 1e-9 of the extreme, settled with fractions."""
    ratio = sizes / population
    target = ratio.max() if largest else ratio.min()
    near = np.flatnonzero(np.abs(ratio - target) <= 1e-9 * max(1.0, float(target)))
    pick = max if largest else min
    return int(pick(near.tolist(), key=lambda j: Fraction(int(sizes[j]), int(population[j]))))


def delta_presence(b: Bucketization, delta_max: float, delta_min: float = 0.0) -> CriterionResult:
    """(delta_min, delta_max)-presence of release ``b`` against its population counts
    (module doc), over every population class: the groups' (``f_j / F_j``) and those without
    a released record (0), as :func:`presence_of_classes` defines
    it, vectorized with exact integer comparisons (:func:`groups_present`).

    ``value`` is the largest presence ``f_j / F_j``; the witness names a failing group (or
    counts the population classes without a released record) and counts only."""
    if not isinstance(b, Bucketization):
        raise InputError(f"expected a Bucketization, got {type(b).__name__}")
    if b.population is None:
        raise missing_population(NAME)
    for name, x in (("delta_min", delta_min), ("delta_max", delta_max)):
        if isinstance(x, bool) or not isinstance(x, int | float) or not 0.0 <= float(x) <= 1.0:
            raise InputError(f"{NAME}: {name} must be in [0, 1], got {x!r}")
    if float(delta_min) > float(delta_max):
        raise InputError(f"{NAME}: delta_min ({delta_min:g}) exceeds delta_max ({delta_max:g})")
    sizes_a = np.asarray(b.sizes, dtype=np.int64)
    pop_a = np.asarray(b.population, dtype=np.int64)
    rest_a = np.asarray(b.population_rest, dtype=np.int64)
    ok = groups_present(sizes_a, pop_a, delta_min, delta_max)
    ok_rest = groups_present(np.zeros_like(rest_a), rest_a, delta_min, delta_max)
    bad_groups = [int(j) for j in np.flatnonzero(~ok)]
    bad_rest = [int(j) for j in np.flatnonzero(~ok_rest)]
    g_hi = _extreme(sizes_a, pop_a, largest=True)
    g_lo = _extreme(sizes_a, pop_a, largest=False)
    sizes = [int(x) for x in sizes_a]
    pop = [int(x) for x in pop_a]
    rest = [int(x) for x in rest_a]
    max_presence = Fraction(sizes[g_hi], pop[g_hi])
    min_presence = Fraction(0) if rest else Fraction(sizes[g_lo], pop[g_lo])
    safe = not bad_groups and not bad_rest
    params: dict[str, Any] = {"delta_min": delta_min, "delta_max": delta_max}
    bounds = f"[{delta_min:g}, {delta_max:g}]"

    def group_words(j: int) -> str:
        return (
            f"group '{b.group_label(j)}' holds {sizes[j]} of the {pop[j]} people of its "
            f"population class (presence {_pct(Fraction(sizes[j], pop[j]))})"
        )

    witness: dict[str, Any]
    if safe:
        reason = (
            f"every person of the population is in the release with a probability in "
            f"{bounds}: the highest, {group_words(g_hi)}; the lowest, {group_words(g_lo)}"
        )
        witness = {"group": g_hi, "label": b.group_label(g_hi), "size": sizes[g_hi],
                   "population": pop[g_hi]}  # fmt: skip
    elif bad_groups:
        j = bad_groups[0]
        more = len(bad_groups) - 1 + len(bad_rest)
        reason = (
            f"{group_words(j)}, outside {bounds}"
            + (f" ({more} more population classes are)" if more else "")
            + ": generalize or suppress those groups"
        )
        witness = {"group": j, "label": b.group_label(j), "size": sizes[j], "population": pop[j]}
    else:
        n_rest = len(bad_rest)
        people = sum(rest[j] for j in bad_rest)
        reason = (
            f"{n_rest} population class{'es' if n_rest != 1 else ''} of {people} people "
            f"{'have' if n_rest != 1 else 'has'} no record in the release (presence 0, "
            f"below delta_min = {delta_min:g}): their people are known to be absent; "
            "generalize further"
        )
        witness = {"population_classes_without_records": n_rest, "population": people}
    return CriterionResult(
        criterion=NAME,
        safe=safe,
        parameters=params,
        value=float(max_presence),
        reason=reason,
        witness=witness,
        details={
            "min_presence": float(min_presence),
            "max_presence": float(max_presence),
            "max_presence_exact": f"{max_presence.numerator}/{max_presence.denominator}",
            "population_records": b.population_records,
            "population_classes": len(sizes) + len(rest),
            "population_classes_without_records": len(rest),
            "groups": b.n_groups,
            "records": b.n_records,
            "failing_groups": len(bad_groups),
            "failing_population_classes": len(bad_groups) + len(bad_rest),
            **thresholds.decision_details(thresholds.EXACT),
        },
    )


# ---------------------------------------------------------------- the engine, on class sizes
@dataclass(frozen=True)
class DeltaPresenceResult:
    """(delta_min, delta_max)-presence: ``satisfied`` iff every ``P_j = f_j / F_j`` is in
    ``[delta_min, delta_max]``; ``violating_classes`` are the indices of those outside."""

    delta_min: float
    delta_max: float
    satisfied: bool
    n_records: int
    n_population_records: int
    n_classes: int
    min_presence: Fraction
    max_presence: Fraction
    violating_classes: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": "delta-presence",
            "delta_min": self.delta_min,
            "delta_max": self.delta_max,
            "satisfied": self.satisfied,
            "n_records": self.n_records,
            "n_population_records": self.n_population_records,
            "n_classes": self.n_classes,
            "min_presence": _frac(self.min_presence),
            "max_presence": _frac(self.max_presence),
            "violating_classes": list(self.violating_classes),
        }


def presence_of_classes(
    sample_sizes: Iterable[int],
    population_sizes: Iterable[int],
    delta_min: float | Fraction,
    delta_max: float | Fraction,
) -> DeltaPresenceResult:
    """(delta_min, delta_max)-presence: ``delta_min <= f_j / F_j <= delta_max`` for every
    class. ``f_j >= 0`` (a population class may have no sample record), ``F_j >= max(1,
    f_j)``; ``0 <= delta_min <= delta_max <= 1``."""
    lo = _real(delta_min, "delta_min")
    hi = _real(delta_max, "delta_max")
    if not 0.0 <= lo <= 1.0:
        raise InputError(f"delta_min must be in [0, 1], got {delta_min!r}")
    if not 0.0 <= hi <= 1.0:
        raise InputError(f"delta_max must be in [0, 1], got {delta_max!r}")
    if lo > hi:
        raise InputError(f"delta_min = {lo!r} exceeds delta_max = {hi!r}")
    f, big_f = _pair(sample_sizes, population_sizes, 0)
    presence = [Fraction(a, b) for a, b in zip(f, big_f, strict=True)]
    bad = tuple(
        j for j, p in enumerate(presence) if not (at_least(p, delta_min) and at_most(p, delta_max))
    )
    return DeltaPresenceResult(
        delta_min=lo,
        delta_max=hi,
        satisfied=not bad,
        n_records=sum(f),
        n_population_records=sum(big_f),
        n_classes=len(f),
        min_presence=min(presence),
        max_presence=max(presence),
        violating_classes=bad,
    )
