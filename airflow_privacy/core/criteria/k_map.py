"""k-map estimated from the sample, as a criterion a release must meet (and the anonymizers
can target).

Sweeney (2002) defines k-map: every record of the release maps to at least ``k`` people of
the population. Without a population table the population class sizes are unknown; ARX's
``KMap`` with a cell-size estimator (El Emam & Dankar 2008: the Poisson estimator D3 after
Pannekoek 1999, and the zero-truncated Poisson D4) decides it as k-anonymity of the sample
with a derived threshold ``k'``: a group of ``f_j`` records passes iff ``f_j >= k'``, where
``k'`` comes from ``lambda = pi * k``, the sampling fraction ``pi`` and the significance level
``alpha`` (:func:`airflow_privacy.core.risk.kmap.arx_derived_k` reproduces ARX's loops and
documents them). This module wraps that engine into a criterion result.

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

References: L. Sweeney, "k-anonymity: a model for protecting privacy", *International Journal
of Uncertainty, Fuzziness and Knowledge-Based Systems* 10(5):557-570, 2002, section 4; K. El
Emam and F. K. Dankar, "Protecting privacy using k-anonymity", *JAMIA* 15(5):627-637, 2008;
J. Pannekoek, "Statistical methods for some simple disclosure limitation rules", *Statistica
Neerlandica* 53(1):55-67, 1999; ARX, ``org.deidentifier.arx.criteria.KMap``.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np

from airflow_privacy.core import thresholds
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError

__all__ = [
    "DEFAULT_SIGNIFICANCE",
    "ESTIMATORS",
    "derived_k",
    "k_map_estimated",
    "k_map_population",
    "missing_population",
]

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
    from airflow_privacy.core.risk.kmap import arx_derived_k

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
    from airflow_privacy.errors import opt

    return InputError(
        f"criterion {criterion} is decided against a population table: give {opt('population')}"
    )


def k_map_population(b: Bucketization, k: int) -> CriterionResult:
    """k-map against a population table: every group's population class ``F_j >= k``
    (module doc; :func:`airflow_privacy.core.risk.kmap.kmap_population` is the engine).

    ``value`` is the smallest ``F_j``; the witness names its group and counts only."""
    from airflow_privacy.core.risk.kmap import kmap_population

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
