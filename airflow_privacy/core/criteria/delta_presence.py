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

Reference: M. E. Nergiz, M. Atzori and C. Clifton, "Hiding the presence of individuals from
shared databases", *Proceedings of the 2007 ACM SIGMOD International Conference on
Management of Data*, pp. 665-676, 2007, Definition 4; ARX,
``org.deidentifier.arx.criteria.DPresence``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core import thresholds
from airflow_privacy.core.criteria.k_map import missing_population
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError

__all__ = ["delta_presence", "groups_present"]

NAME = "delta-presence"
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def groups_present(
    sizes: IntArray, population: IntArray, delta_min: float, delta_max: float
) -> BoolArray:
    """Which groups have ``delta_min <= f_j / F_j <= delta_max`` (exact comparisons)."""
    out = np.zeros(sizes.shape[0], dtype=bool)
    for j, (f, big_f) in enumerate(zip(sizes.tolist(), population.tolist(), strict=True)):
        p = Fraction(int(f), int(big_f)) if big_f > 0 else Fraction(0)
        out[j] = thresholds.at_least(p, delta_min) and thresholds.at_most(p, delta_max)
    return out


def _pct(p: Fraction) -> str:
    return f"{float(p):.4g}"


def delta_presence(b: Bucketization, delta_max: float, delta_min: float = 0.0) -> CriterionResult:
    """(delta_min, delta_max)-presence of release ``b`` against its population counts
    (module doc; :func:`airflow_privacy.core.risk.kmap.delta_presence` is the engine).

    ``value`` is the largest presence ``f_j / F_j``; the witness names a failing group (or
    counts the population classes without a released record) and counts only."""
    from airflow_privacy.core.risk.kmap import delta_presence as engine

    if not isinstance(b, Bucketization):
        raise InputError(f"expected a Bucketization, got {type(b).__name__}")
    if b.population is None:
        raise missing_population(NAME)
    pop = [int(x) for x in b.population]
    sizes = [int(x) for x in b.sizes]
    rest = list(b.population_rest)
    res = engine([*sizes, *(0 for _ in rest)], [*pop, *rest], delta_min, delta_max)
    g_hi = max(range(len(sizes)), key=lambda j: Fraction(sizes[j], pop[j]))
    g_lo = min(range(len(sizes)), key=lambda j: Fraction(sizes[j], pop[j]))
    bad_groups = [j for j in res.violating_classes if j < len(sizes)]
    bad_rest = [j for j in res.violating_classes if j >= len(sizes)]
    params: dict[str, Any] = {"delta_min": delta_min, "delta_max": delta_max}
    bounds = f"[{delta_min:g}, {delta_max:g}]"

    def group_words(j: int) -> str:
        return (
            f"group '{b.group_label(j)}' holds {sizes[j]} of the {pop[j]} people of its "
            f"population class (presence {_pct(Fraction(sizes[j], pop[j]))})"
        )

    witness: dict[str, Any]
    if res.satisfied:
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
        people = sum(rest[j - len(sizes)] for j in bad_rest)
        reason = (
            f"{n_rest} population class{'es' if n_rest != 1 else ''} of {people} people "
            f"{'have' if n_rest != 1 else 'has'} no record in the release (presence 0, "
            f"below delta_min = {delta_min:g}): their people are known to be absent; "
            "generalize further"
        )
        witness = {"population_classes_without_records": n_rest, "population": people}
    return CriterionResult(
        criterion=NAME,
        safe=res.satisfied,
        parameters=params,
        value=float(res.max_presence),
        reason=reason,
        witness=witness,
        details={
            "min_presence": float(res.min_presence),
            "max_presence": float(res.max_presence),
            "max_presence_exact": f"{res.max_presence.numerator}/{res.max_presence.denominator}",
            "population_records": res.n_population_records,
            "population_classes": res.n_classes,
            "population_classes_without_records": len(rest),
            "groups": b.n_groups,
            "records": b.n_records,
            "failing_groups": len(bad_groups),
            "failing_population_classes": len(res.violating_classes),
            **thresholds.decision_details(thresholds.EXACT),
        },
    )
