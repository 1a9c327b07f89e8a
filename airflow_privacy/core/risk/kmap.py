"""k-map and delta-presence, the two population-based privacy models, evaluated as ARX does.

The inputs are sufficient statistics: the sizes ``f_j`` of the released sample's equivalence
classes (the records sharing one generalized quasi-identifier combination) and, where a
population table is known, the sizes ``F_j >= f_j`` of the matching classes of the
population (the records of the population, sample included, that fall into the same
generalized class).

**k-map with a population table** (Sweeney 2002, section 4, "k-map"; ARX ``KMap`` with a
research subset). The release satisfies k-map iff every record of the sample maps to at
least ``k`` records of the population, that is iff ``F_j >= k`` for every class; ARX::

    return entry.pcount >= this.k;

**k-map with an estimator** (no population table). ARX estimates the population class sizes
with El Emam & Dankar's (2008) D3 (Poisson, after Pannekoek 1999) and D4 (zero-truncated
Poisson) estimators and turns k-map into k-anonymity with a derived threshold ``k'``: a class
passes iff ``f_j >= k'`` (``return entry.count >= this.derivedK;``). With ``n`` sample
records, a population of ``N`` (``pi = n / N``, ARX: ``(double) n / (double)
populationSize``) and ``lambda = pi * k`` (``samplingFraction * (double) this.k``),
ARX computes ``k'`` by these loops (``threshold = 1d - this.significanceLevel``)::

    // calculateKPoisson
    int counter = 0; double value = 0;
    while (value < threshold) {
        value = distribution.cumulativeProbability(counter);
        counter++;
        if (counter >= this.k) { value = 1d; break; }
    }
    this.type1Error = 1d - value;
    return counter + 1;

    // calculateKZeroPoisson
    final double v2 = 1d - distribution.probability(0);
    int counter = 1; double value = 0d;
    while (value < threshold) {
        value += distribution.probability(counter) / v2;
        counter++;
        if (counter >= this.k) { value = 1d; break; }
    }
    this.type1Error = 1d - value;
    return counter;

followed by ``derivedK = min(derivedK, n)`` and ``derivedK = Math.min(this.k, derivedK)``.
In closed form, with ``q = 1 - alpha``:

* Poisson: ``k' = min(k, n, m + 2)``, ``m`` the smallest integer with
  ``P[X <= m] >= q`` for ``X ~ Poisson(lambda)`` (the ``q``-quantile; ``m = -1`` when
  ``q <= 0``, the loop not being entered). The ``+ 2`` (and not ``+ 1``) is ARX's: the loop
  has already advanced ``counter`` past the quantile before ``return counter + 1``.
* zero-truncated Poisson: ``k' = min(k, n, m + 1)``, ``m >= 0`` the smallest integer with
  ``P[1 <= X <= m] / (1 - P[X = 0]) >= q`` (``m = 0`` when ``q <= 0``).

Both are reproduced literally here (the loops, their early stop at ``k`` and the reported
type I error). The Poisson probabilities are computed in double precision from their
definition (``exp(-lambda + i log lambda - lgamma(i + 1))``, summed with compensation), where
ARX calls Apache Commons Math (a continued fraction converged to ``1e-12``); the two can
disagree only when a cumulative probability lies within about ``1e-12`` of ``1 - alpha``.

**delta-presence** (Nergiz, Atzori & Clifton 2007, Definition 4; ARX ``DPresence``). The
probability that a population record of class ``j`` is in the released sample is
``P_j = f_j / F_j``; the release is (delta_min, delta_max)-present iff
``delta_min <= P_j <= delta_max`` for every class. A population class with no sample record
has ``P_j = 0``, as in ARX::

    double delta = entry.count == 0 ? 0d : (double) entry.count / (double) entry.pcount;
    return (delta >= dMin) && (delta <= dMax);

Here ``P_j`` is an exact :class:`~fractions.Fraction`, compared with the decimal each limit
prints as (:func:`airflow_privacy.core.thresholds.at_least`, ``at_most``), where ARX compares
doubles; they differ only for limits typed with about 16 significant digits.

References: L. Sweeney, "k-anonymity: a model for protecting privacy", *International Journal
of Uncertainty, Fuzziness and Knowledge-Based Systems* 10(5):557-570, 2002; K. El Emam and
F. K. Dankar, "Protecting privacy using k-anonymity", *Journal of the American Medical
Informatics Association* 15(5):627-637, 2008; J. Pannekoek, "Statistical methods for some
simple disclosure limitation rules", *Statistica Neerlandica* 53(1):55-67, 1999; M. E.
Nergiz, M. Atzori and C. Clifton, "Hiding the presence of individuals from shared
databases", *Proceedings of the 2007 ACM SIGMOD International Conference on Management of
Data*, pp. 665-676, 2007; F. Prasser, F. Kohlmayer et al., ARX Data Anonymization Tool,
classes ``org.deidentifier.arx.criteria.KMap`` and ``DPresence``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from airflow_privacy.core.thresholds import at_least, at_most
from airflow_privacy.errors import InputError, opt

__all__ = [
    "ESTIMATORS",
    "DeltaPresenceResult",
    "Estimator",
    "KMapEstimateResult",
    "KMapResult",
    "arx_derived_k",
    "delta_presence",
    "kmap_estimate",
    "kmap_population",
]

Estimator = Literal["poisson", "zero_truncated_poisson"]
ESTIMATORS: tuple[Estimator, ...] = ("poisson", "zero_truncated_poisson")


def _frac(x: Fraction) -> dict[str, Any]:
    return {"value": float(x), "exact": f"{x.numerator}/{x.denominator}"}


@dataclass(frozen=True)
class KMapResult:
    """k-map with a population table: ``satisfied`` iff every ``F_j >= k``.

    ``violating_classes`` are the indices ``j`` (in input order) with ``F_j < k``;
    ``records_violating`` is the share of sample records in them,
    ``n_records_violating / n_records``.
    """

    k: int
    satisfied: bool
    n_records: int
    n_classes: int
    smallest_population_class: int
    violating_classes: tuple[int, ...]
    n_records_violating: int
    records_violating: Fraction

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": "k-map",
            "population_given": True,
            "k": self.k,
            "satisfied": self.satisfied,
            "n_records": self.n_records,
            "n_classes": self.n_classes,
            "smallest_population_class": self.smallest_population_class,
            "violating_classes": list(self.violating_classes),
            "n_records_violating": self.n_records_violating,
            "records_violating": _frac(self.records_violating),
        }


@dataclass(frozen=True)
class KMapEstimateResult:
    """k-map with ARX's estimator: ``satisfied`` iff every ``f_j >= derived_k``.

    ``sampling_fraction`` is ``n / population_size`` when a population size was given;
    ``lam`` is ``sampling_fraction * k``; ``derived_k`` and ``type1_error`` are ARX's
    ``getDerivedK()`` and ``getType1Error()`` (module doc).
    """

    k: int
    estimator: Estimator
    significance_level: float
    population_size: float | None
    sampling_fraction: float
    lam: float
    derived_k: int
    type1_error: float
    satisfied: bool
    n_records: int
    n_classes: int
    smallest_class: int
    violating_classes: tuple[int, ...]
    n_records_violating: int
    records_violating: Fraction

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": "k-map",
            "population_given": False,
            "k": self.k,
            "estimator": self.estimator,
            "significance_level": self.significance_level,
            "population_size": self.population_size,
            "sampling_fraction": self.sampling_fraction,
            "lambda": self.lam,
            "derived_k": self.derived_k,
            "type1_error": self.type1_error,
            "satisfied": self.satisfied,
            "n_records": self.n_records,
            "n_classes": self.n_classes,
            "smallest_class": self.smallest_class,
            "violating_classes": list(self.violating_classes),
            "n_records_violating": self.n_records_violating,
            "records_violating": _frac(self.records_violating),
        }


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


# ---------------------------------------------------------------- validation
def _sizes(values: Iterable[int], name: str, minimum: int) -> tuple[int, ...]:
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
        raise InputError(f"{opt(name)} must be a sequence of integers")
    out: list[int] = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise InputError(f"{opt(name)} must hold integers, got {v!r}")
        if int(v) < minimum:
            raise InputError(f"{opt(name)} must hold class sizes >= {minimum}, got {int(v)}")
        out.append(int(v))
    if not out:
        raise InputError(f"{opt(name)} is empty: there are no classes")
    return tuple(out)


def _pair(
    sample_sizes: Iterable[int], population_sizes: Iterable[int], sample_minimum: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    f = _sizes(sample_sizes, "sample_sizes", sample_minimum)
    big_f = _sizes(population_sizes, "population_sizes", 1)
    if len(big_f) != len(f):
        raise InputError(
            f"{opt('population_sizes')} has {len(big_f)} classes, {opt('sample_sizes')} {len(f)}"
        )
    for j, (a, b) in enumerate(zip(f, big_f, strict=True)):
        if b < a:
            raise InputError(
                f"{opt('population_sizes')}[{j}] = {b} is smaller than the sample class ({a})"
            )
    return f, big_f


def _k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or int(k) < 1:
        raise InputError(f"{opt('k')} must be an integer >= 1, got {k!r}")
    return int(k)


def _real(x: object, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise InputError(f"{opt(name)} must be a number, got {x!r}")
    v = float(x)
    if not math.isfinite(v):
        raise InputError(f"{opt(name)} must be finite, got {x!r}")
    return v


def _violations(
    sizes: tuple[int, ...], f: tuple[int, ...], limit: int
) -> tuple[tuple[int, ...], int]:
    bad = tuple(j for j, s in enumerate(sizes) if s < limit)
    return bad, sum(f[j] for j in bad)


# ---------------------------------------------------------------- k-map, population table
def kmap_population(
    sample_sizes: Iterable[int], population_sizes: Iterable[int], k: int
) -> KMapResult:
    """k-map with a population table: every population class size ``F_j`` at least ``k``.

    ``sample_sizes[j] = f_j >= 1`` and ``population_sizes[j] = F_j >= f_j`` describe the
    same generalized class ``j``.
    """
    kk = _k(k)
    f, big_f = _pair(sample_sizes, population_sizes, 1)
    bad, n_bad = _violations(big_f, f, kk)
    n = sum(f)
    return KMapResult(
        k=kk,
        satisfied=not bad,
        n_records=n,
        n_classes=len(f),
        smallest_population_class=min(big_f),
        violating_classes=bad,
        n_records_violating=n_bad,
        records_violating=Fraction(n_bad, n),
    )


# ---------------------------------------------------------------- k-map, ARX's estimators
def _log_pmf(i: int, lam: float) -> float:
    return -lam + i * math.log(lam) - math.lgamma(i + 1)


def _poisson_k(lam: float, k: int, threshold: float, cap: int) -> tuple[int, float]:
    """ARX ``calculateKPoisson`` (module doc), the cdf summed with Neumaier compensation;
    stopped early once the result can only be capped to ``cap`` (the record count)."""
    counter = 0
    value = 0.0
    total, comp = 0.0, 0.0
    while value < threshold:
        term = math.exp(_log_pmf(counter, lam))
        t = total + term
        comp += (total - t) + term if abs(total) >= abs(term) else (term - t) + total
        total = t
        value = min(1.0, total + comp)
        counter += 1
        if counter >= k:
            value = 1.0
            break
        if counter + 1 >= cap:  # returns counter + 1 or more: min(., n) is n
            break
    return counter + 1, 1.0 - value


def _zero_truncated_k(lam: float, k: int, threshold: float, cap: int) -> tuple[int, float]:
    """ARX ``calculateKZeroPoisson`` (module doc), accumulating as ARX does; stopped early
    once the result can only be capped to ``cap`` (the record count)."""
    v2 = 1.0 - math.exp(-lam)
    counter = 1
    value = 0.0
    while value < threshold:
        value += math.exp(_log_pmf(counter, lam)) / v2
        counter += 1
        if counter >= k:
            value = 1.0
            break
        if counter >= cap:  # returns counter or more: min(., n) is n
            break
    return counter, 1.0 - value


#: Beyond this many steps the loops are replaced by their closed form (scipy's quantile):
#: ARX's loops take ``pi * k`` steps, 5e8 for k = 10^9 at pi = 0.5.
_LOOP_LIMIT = 1_000_000


def _closed_form_k(
    lam: float, k: int, threshold: float, cap: int, estimator: str
) -> tuple[int, float]:
    """What the loops return (module doc, "In closed form"), from scipy's Poisson quantile:
    for a long loop only; equal to the loop except within about 1e-12 of ``1 - alpha``."""
    from scipy import stats

    if threshold <= 0.0:
        return (1, 1.0) if estimator == "poisson" else (2, 1.0)
    if estimator == "poisson":
        m = float(stats.poisson.ppf(threshold, lam))
        stop = min(m + 1, float(k), float(max(cap - 1, 1)))
        if stop >= k:
            return k + 1, 0.0
        return int(stop) + 1, float(stats.poisson.sf(stop - 1, lam))
    # zero-truncated: the smallest m >= 1 with (cdf(m) - p0) / (1 - p0) >= threshold
    p0 = float(stats.poisson.pmf(0, lam))
    target = p0 + threshold * (1.0 - p0)
    m = max(1.0, float(stats.poisson.ppf(min(target, 1.0), lam)))
    stop = min(m + 1, float(k), float(max(cap, 2)))  # the loop runs at least once
    if stop >= k:
        return k, 0.0
    reached = (float(stats.poisson.cdf(stop - 1, lam)) - p0) / (1.0 - p0)
    return int(stop), 1.0 - reached


def arx_derived_k(
    k: int, significance_level: float, sampling_fraction: float, n_records: int, estimator: str
) -> tuple[int, float]:
    """ARX's ``derivedK`` and type I error for ``k``, ``alpha``, ``pi`` and ``n`` records:
    the estimator's loop on ``lambda = pi * k``, then ``min(k, n, .)`` (module doc)."""
    kk = _k(k)
    alpha = _real(significance_level, "significance_level")
    if not 0.0 <= alpha <= 1.0:
        raise InputError(f"{opt('significance_level')} must be in [0, 1], got {alpha!r}")
    pi = _real(sampling_fraction, "sampling_fraction")
    if not 0.0 < pi <= 1.0:
        raise InputError(f"{opt('sampling_fraction')} must be in (0, 1], got {pi!r}")
    if isinstance(n_records, bool) or not isinstance(n_records, numbers.Integral):
        raise InputError(f"{opt('n_records')} must be an integer, got {n_records!r}")
    lam = pi * float(kk)
    threshold = 1.0 - alpha
    cap = max(int(n_records), 1)
    if estimator not in ESTIMATORS:
        raise InputError(f"{opt('estimator')} must be one of {', '.join(ESTIMATORS)}")
    if threshold >= 1.0:
        # significance 0: no cumulative probability below 1 reaches 1, so k' = k (ARX's loop
        # stops wherever its floating-point sum rounds to 1, a smaller, less safe k')
        derived, type1 = kk, 0.0
    elif min(kk, cap) > _LOOP_LIMIT:
        derived, type1 = _closed_form_k(lam, kk, threshold, cap, estimator)
    elif estimator == "poisson":
        derived, type1 = _poisson_k(lam, kk, threshold, cap)
    else:
        derived, type1 = _zero_truncated_k(lam, kk, threshold, cap)
    derived = min(derived, int(n_records))
    return min(kk, derived), type1


def kmap_estimate(
    sample_sizes: Iterable[int],
    k: int,
    significance_level: float,
    *,
    population_size: float | None = None,
    sampling_fraction: float | None = None,
    estimator: Estimator = "poisson",
) -> KMapEstimateResult:
    """k-map without a population table, as ARX decides it: ``f_j >= k'`` for every class,
    ``k'`` from the Poisson or zero-truncated Poisson estimator (module doc).

    Give exactly one of ``population_size`` (``N >= n``; ``pi = n / N``) and
    ``sampling_fraction`` (``pi`` in ``(0, 1]``).
    """
    kk = _k(k)
    f = _sizes(sample_sizes, "sample_sizes", 1)
    n = sum(f)
    if (population_size is None) == (sampling_fraction is None):
        raise InputError(
            f"give exactly one of {opt('population_size')} and {opt('sampling_fraction')}"
        )
    if population_size is not None:
        big_n = _real(population_size, "population_size")
        if big_n < n:
            raise InputError(
                f"{opt('population_size')} = {population_size!r} is below the sample size {n}"
            )
        pi = float(n) / big_n
        pop: float | None = big_n
    else:
        pi = _real(sampling_fraction, "sampling_fraction")
        pop = None
    if estimator not in ESTIMATORS:
        raise InputError(f"{opt('estimator')} must be one of {', '.join(ESTIMATORS)}")
    derived, type1 = arx_derived_k(kk, significance_level, pi, n, estimator)
    bad, n_bad = _violations(f, f, derived)
    return KMapEstimateResult(
        k=kk,
        estimator=estimator,
        significance_level=float(significance_level),
        population_size=pop,
        sampling_fraction=pi,
        lam=pi * float(kk),
        derived_k=derived,
        type1_error=type1,
        satisfied=not bad,
        n_records=n,
        n_classes=len(f),
        smallest_class=min(f),
        violating_classes=bad,
        n_records_violating=n_bad,
        records_violating=Fraction(n_bad, n),
    )


# ---------------------------------------------------------------- delta-presence
def delta_presence(
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
        raise InputError(f"{opt('delta_min')} must be in [0, 1], got {delta_min!r}")
    if not 0.0 <= hi <= 1.0:
        raise InputError(f"{opt('delta_max')} must be in [0, 1], got {delta_max!r}")
    if lo > hi:
        raise InputError(f"{opt('delta_min')} = {lo!r} exceeds {opt('delta_max')} = {hi!r}")
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
