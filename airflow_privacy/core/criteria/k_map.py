"""k-map estimated from the sample, as a criterion a release must meet (and the anonymizers
can target).

Sweeney (2002) defines k-map: every record of the release maps to at least ``k`` people of
the population. Without a population table the population class sizes are unknown; ARX's
``KMap`` with a cell-size estimator (El Emam & Dankar 2008: the Poisson estimator D3 after
Pannekoek 1999, and the zero-truncated Poisson D4) decides it as k-anonymity of the sample
with a derived threshold ``k'``: a group of ``f_j`` records passes iff ``f_j >= k'``, where
``k'`` comes from ``lambda = pi * k``, the sampling fraction ``pi`` and the significance level
``alpha`` (:func:`arx_derived_k` reproduces ARX's loops, below). Everything about k-map is
here: the engine on class sizes (:func:`kmap_population`, :func:`kmap_estimate`,
:func:`arx_derived_k`; the risk package exports them) and the criterion on a release
(:func:`k_map_population`, :func:`k_map_estimated`); the declaration, which the command
line reads without importing this module, is :mod:`airflow_privacy.core.criteria.models.k_map`.

Parameters: ``k`` (whole, >= 1); exactly one of ``sampling_fraction`` (``pi`` in (0, 1]) and
``population_size`` (``N >= n``; ``pi = n / N``, ``n`` the release's records);
``estimator`` ``poisson`` (default) or ``zero-truncated-poisson``; ``significance`` (ARX's
significance level, default 0.01).

**Against a population table** (neither ``sampling_fraction`` nor ``population_size``;
Sweeney 2002, section 4; ARX ``KMap`` with a research subset): the population class sizes
``F_j`` are counted (``Bucketization.population``) and the release passes iff ``F_j >= k``
for every group (:func:`k_map_population`). Sums of ``F_j`` are kept by merging, and a merged
group fails only if all its parts failed: monotone, also with suppression.

Merging groups keeps ``n`` and so ``k'``, and a merged group is at least as large as its
parts: the criterion is monotone and a per-group test (``f_j >= k'``).

The engine, as ARX evaluates it:

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

References: L. Sweeney, "k-anonymity: a model for protecting privacy", *International Journal
of Uncertainty, Fuzziness and Knowledge-Based Systems* 10(5):557-570, 2002, section 4; K. El
Emam and F. K. Dankar, "Protecting privacy using k-anonymity", *JAMIA* 15(5):627-637, 2008;
J. Pannekoek, "Statistical methods for some simple disclosure limitation rules", *Statistica
Neerlandica* 53(1):55-67, 1999; ARX, ``org.deidentifier.arx.criteria.KMap``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from airflow_privacy.core import thresholds
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError, opt

__all__ = [
    "DEFAULT_SIGNIFICANCE",
    "ENGINE_ESTIMATORS",
    "ESTIMATORS",
    "Estimator",
    "KMapEstimateResult",
    "KMapResult",
    "arx_derived_k",
    "derived_k",
    "k_map_estimated",
    "k_map_population",
    "kmap_estimate",
    "kmap_population",
    "missing_population",
]

# ---------------------------------------------------------------- the engine, on class sizes
Estimator = Literal["poisson", "zero_truncated_poisson"]


ENGINE_ESTIMATORS: tuple[Estimator, ...] = ("poisson", "zero_truncated_poisson")


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


# ---------------------------------------------------------------- validation
def _sizes(values: Iterable[int], name: str, minimum: int) -> tuple[int, ...]:
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
        raise InputError(f"{name} must be a sequence of integers")
    out: list[int] = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise InputError(f"{name} must hold integers, got {v!r}")
        if int(v) < minimum:
            raise InputError(f"{name} must hold class sizes >= {minimum}, got {int(v)}")
        out.append(int(v))
    if not out:
        raise InputError(f"{name} is empty: there are no classes")
    return tuple(out)


def _pair(
    sample_sizes: Iterable[int], population_sizes: Iterable[int], sample_minimum: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    f = _sizes(sample_sizes, "sample_sizes", sample_minimum)
    big_f = _sizes(population_sizes, "population_sizes", 1)
    if len(big_f) != len(f):
        raise InputError(f"population_sizes has {len(big_f)} classes, sample_sizes {len(f)}")
    for j, (a, b) in enumerate(zip(f, big_f, strict=True)):
        if b < a:
            raise InputError(f"population_sizes[{j}] = {b} is smaller than the sample class ({a})")
    return f, big_f


def _k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or int(k) < 1:
        raise InputError(f"k must be an integer >= 1, got {k!r}")
    return int(k)


def _real(x: object, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise InputError(f"{name} must be a number, got {x!r}")
    v = float(x)
    if not math.isfinite(v):
        raise InputError(f"{name} must be finite, got {x!r}")
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
        raise InputError(f"significance_level must be in [0, 1], got {alpha!r}")
    pi = _real(sampling_fraction, "sampling_fraction")
    if not 0.0 < pi <= 1.0:
        raise InputError(f"sampling_fraction must be in (0, 1], got {pi!r}")
    if isinstance(n_records, bool) or not isinstance(n_records, numbers.Integral):
        raise InputError(f"n_records must be an integer, got {n_records!r}")
    lam = pi * float(kk)
    threshold = 1.0 - alpha
    cap = max(int(n_records), 1)
    if estimator not in ENGINE_ESTIMATORS:
        raise InputError(f"estimator must be one of {', '.join(ENGINE_ESTIMATORS)}")
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
        raise InputError("give exactly one of population_size and sampling_fraction")
    if population_size is not None:
        big_n = _real(population_size, "population_size")
        if big_n < n:
            raise InputError(f"population_size = {population_size!r} is below the sample size {n}")
        pi = float(n) / big_n
        pop: float | None = big_n
    else:
        pi = _real(sampling_fraction, "sampling_fraction")
        pop = None
    if estimator not in ENGINE_ESTIMATORS:
        raise InputError(f"estimator must be one of {', '.join(ENGINE_ESTIMATORS)}")
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


# ---------------------------------------------------------------- the criterion, on a release
NAME = "k-map"


#: The spellings users write (the spec grammar's), and the engine's names.
ESTIMATORS = {"poisson": "poisson", "zero-truncated-poisson": "zero_truncated_poisson"}


DEFAULT_SIGNIFICANCE = 0.01


def _number(name: str, x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(float(x)):
        raise InputError(f"{NAME}: {name} must be a number, got {x!r}")
    return float(x)


def derived_k(
    n_records: int,
    k: int,
    sampling_fraction: float | None = None,
    population_size: float | None = None,
    estimator: str = "poisson",
    significance: float = DEFAULT_SIGNIFICANCE,
) -> tuple[int, float, float]:
    """``(k', type I error, pi)`` for a release of ``n_records`` records (module doc)."""
    kf = _number("k", k)
    if not kf.is_integer() or kf < 1:
        raise InputError(f"{NAME}: k must be a whole number >= 1, got {k!r}")
    if (sampling_fraction is None) == (population_size is None):
        raise InputError(
            f"criterion {NAME} needs exactly one of sampling_fraction and population_size"
        )
    if estimator not in ESTIMATORS:
        raise InputError(
            f"{NAME}: estimator must be one of {', '.join(ESTIMATORS)}, got {estimator!r}"
        )
    alpha = _number("significance", significance)
    if not 0.0 <= alpha <= 1.0:
        raise InputError(f"{NAME}: significance must be in [0, 1], got {significance!r}")
    if sampling_fraction is not None:
        pi = _number("sampling_fraction", sampling_fraction)
        if not 0.0 < pi <= 1.0:
            raise InputError(
                f"{NAME}: sampling_fraction must be in (0, 1], got {sampling_fraction!r}"
            )
    else:
        big_n = _number("population_size", population_size)
        if big_n < n_records:
            raise InputError(
                f"{NAME}: population_size = {population_size!r} is below the release's "
                f"{n_records:,} records"
            )
        pi = n_records / big_n
    kk, type1 = arx_derived_k(int(kf), alpha, pi, n_records, ESTIMATORS[estimator])
    # the population holds about n / pi people: k beyond it cannot be met by any release
    # (ARX caps k' at n, which would let one group of every record pass any k)
    population = (
        Fraction(repr(float(population_size))) if population_size is not None
        else Fraction(n_records) / Fraction(repr(pi))
    )  # fmt: skip
    if int(kf) > population:
        return n_records + 1, type1, pi
    return kk, type1, pi


def k_map_estimated(
    b: Bucketization,
    k: int,
    sampling_fraction: float | None = None,
    population_size: float | None = None,
    estimator: str = "poisson",
    significance: float = DEFAULT_SIGNIFICANCE,
) -> CriterionResult:
    """k-map with ARX's estimator: every group has at least ``k'`` records (module doc).

    ``value`` is the smallest group size; ``details["derived_k"]`` the threshold it meets.
    """
    if not isinstance(b, Bucketization):
        raise InputError(f"expected a Bucketization, got {type(b).__name__}")
    n = b.n_records
    need, type1, pi = derived_k(n, k, sampling_fraction, population_size, estimator, significance)
    sizes = b.sizes
    g = int(np.argmin(sizes))
    smallest = int(sizes[g])
    label = b.group_label(g)
    failing = sizes < need
    n_fail = int(failing.sum())
    safe = smallest >= need
    params: dict[str, Any] = {"k": int(k)}
    if sampling_fraction is not None:
        params["sampling_fraction"] = sampling_fraction
    else:
        params["population_size"] = population_size
    params["estimator"] = estimator
    params["significance"] = significance
    how = (
        f"with a sampling fraction of {pi:.4g} the {estimator} estimator needs groups of at "
        f"least {need} sample records for every person to match at least {int(k)} people of "
        f"the population (at significance {significance:g})"
    )
    if need > n:
        reason = (
            f"k = {int(k)} exceeds the population of about {n / pi:,.0f} people (the "
            f"release's {n:,} records at a sampling fraction of {pi:.4g}): no release can "
            "map every record to k people; lower k or check the population"
        )
    elif safe:
        reason = f"{how}; the smallest group, '{label}', has {smallest}"
    else:
        reason = (
            f"group '{label}' has {smallest} record{'s' if smallest != 1 else ''}, but {how}"
            + (f" ({n_fail} groups are smaller)" if n_fail > 1 else "")
            + ": generalize or suppress those groups"
        )
    return CriterionResult(
        criterion=NAME,
        safe=bool(safe),
        parameters=params,
        value=smallest,
        reason=reason,
        witness={"group": g, "label": label, "size": smallest},
        details={
            "derived_k": need,
            "type1_error": type1,
            "sampling_fraction": pi,
            "lambda": pi * int(k),
            "groups": b.n_groups,
            "records": n,
            "failing_groups": n_fail,
            "records_in_failing_groups": int(sizes[failing].sum()),
            **thresholds.decision_details(thresholds.EXACT),
        },
    )


def missing_population(criterion: str) -> InputError:
    """The error of a criterion decided against a population table that has none."""
    return InputError(
        f"criterion {criterion} is decided against a population table: give {opt('population')}"
    )


def k_map_population(b: Bucketization, k: int) -> CriterionResult:
    """k-map against a population table: every group's population class ``F_j >= k``
    (module doc; :func:`kmap_population` is the engine).

    ``value`` is the smallest ``F_j``; the witness names its group and counts only."""
    if not isinstance(b, Bucketization):
        raise InputError(f"expected a Bucketization, got {type(b).__name__}")
    if b.population is None:
        raise missing_population(NAME)
    res = kmap_population(b.sizes.tolist(), b.population.tolist(), k)
    pop = b.population
    g = int(np.argmin(pop))
    label = b.group_label(g)
    smallest = int(pop[g])
    f = int(b.sizes[g])
    n_fail = len(res.violating_classes)
    if res.satisfied:
        reason = (
            f"every record matches at least {res.k} people of the population; the smallest "
            f"population class, of group '{label}', has {smallest} (of which {f} released)"
        )
    else:
        reason = (
            f"group '{label}' matches {smallest} "
            f"{'person' if smallest == 1 else 'people'} of the population ({f} released), "
            f"fewer than k = {res.k}"
            + (f" ({n_fail} groups do)" if n_fail > 1 else "")
            + ": generalize or suppress those groups"
        )
    return CriterionResult(
        criterion=NAME,
        safe=res.satisfied,
        parameters={"k": res.k},
        value=smallest,
        reason=reason,
        witness={"group": g, "label": label, "size": f, "population": smallest},
        details={
            "population_records": b.population_records,
            "groups": b.n_groups,
            "records": b.n_records,
            "failing_groups": n_fail,
            "records_in_failing_groups": res.n_records_violating,
            **thresholds.decision_details(thresholds.EXACT),
        },
    )
