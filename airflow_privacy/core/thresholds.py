"""Every verdict's comparison of a value with its limit, in one place, erring towards unsafe.

A criterion is a comparison: (c,k)-safety, negation-safety, the skyline (Chen et al. 2007,
"Basic 3D Privacy Criterion"), recursive (c,l)-diversity and the MaxEnt gate require a value
*below* a limit (Martin et al. 2007, Definition 13: disclosure ``< c``); t-closeness and the
composition gate a value *at most* a limit (Li et al. 2007, Definition 2; Ganta et al. 2008,
section 2.1: ``PVP_C <= P``); k-anonymity and l-diversity a value *at least* a limit. Near
the limit, how the comparison is computed decides the verdict, so it is decided here, by
the rules below, for every engine.

**Exact values** (``int`` or :class:`~fractions.Fraction`: a group size, a count of distinct
values, ``r_1 / (r_l + ... + r_m)``, an EMD, ``PVP = 100 VP / |P|``, a disclosure or breach
recomputed with rationals) are compared exactly, with no tolerance, against the limit's
*exact reading* (:func:`exact_limit`). The limit arrives as a float the user wrote as a
decimal (``--c 0.1``, ``t: 0.3`` in a DAG). Its binary value differs from that decimal in
the 17th digit, on either side: ``Fraction(0.1)`` is ``0.1000000000000000055...`` and
``Fraction(0.3)`` is ``0.2999999999999999888...``. Read as binary, a recursive (c,l) ratio of
exactly ``1/10`` would pass ``c = 0.1`` (``1/10 < 0.1000...055``), against the strict
inequality the user asked for, and an EMD of exactly ``3/10`` would fail ``t = 0.3``. So a
float limit is read as the decimal it prints as, ``Fraction(repr(limit))`` (the shortest
decimal that reads back as the same float: what was typed, for any limit typed with at most
15 significant digits); ``int`` and ``Fraction`` limits are used as they are. A value equal to
the limit is then decided as the definition says for equality: ``1/10`` is not below
``c = 0.1``, an EMD of ``3/10`` is at most ``t = 0.3``, a group whose entropy is exactly
``log l`` is entropy l-diverse.

**Float values** (an entropy, a MaxEnt posterior, a frequency-aware posterior, a disclosure
whose maximality is known only up to floating-point noise) carry rounding error: a value
that is mathematically exactly ``c`` can come out as ``c`` minus one ulp. Such a value is
decided with :data:`TOLERANCE`: the relation holds only if it holds with a margin of
``TOLERANCE * max(1, |limit|)`` (absolute for probabilities, relative for limits above 1,
such as an entropy l or a recursive c); inside that band the verdict is **unsafe**. So a
float at most ``1e-9`` below ``c`` is not "below c", and one at most ``1e-9`` above ``l``
is not "at least l".

**Exact near the limit.** Engines whose exact value is costly compute it in floats and
call :func:`near` first: outside the band the float comparison is decisive (its error is
far below the band), inside it they settle the comparison exactly. Every
:class:`~airflow_privacy.core.criteria.result.CriterionResult` states how its verdict was
taken in ``details["tolerance"]`` (this module's :data:`TOLERANCE`) and
``details["decision"]`` (:data:`EXACT`, :data:`EXACT_NEAR_LIMIT`, :data:`EXACT_WITH_BAND`
or :data:`FLOAT`).

This module imports nothing heavy (no numpy): the criterion registry uses it at import time.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Final, Literal

__all__ = [
    "DECISIONS",
    "EXACT",
    "EXACT_NEAR_LIMIT",
    "EXACT_WITH_BAND",
    "FLOAT",
    "TOLERANCE",
    "at_least",
    "at_most",
    "band",
    "below",
    "decision_details",
    "exact_limit",
    "maxent_safe",
    "near",
    "smallest_size_at_most",
]

#: The stated tolerance of every float comparison: a float value within
#: ``TOLERANCE * max(1, |limit|)`` of its limit is decided unsafe. Floating-point values of
#: the engines carry relative errors of a few ulps (about ``1e-15``) to ``1e-12`` at worst
#: (sums of thousands of logarithms); ``1e-9`` is far above that and far below any privacy
#: meaning (no one sets ``c`` to nine decimals).
TOLERANCE: Final[float] = 1e-9

Decision = Literal["exact", "exact near the limit", "exact value, float band", "float"]

#: the value is exact (integers, rationals) and compared exactly with :func:`exact_limit`
EXACT: Final[Decision] = "exact"
#: the value is computed in floats and settled exactly whenever it is :func:`near` the limit
EXACT_NEAR_LIMIT: Final[Decision] = "exact near the limit"
#: the value is exact, but its maximality only up to float noise (a float search picked it):
#: exact comparison, and unsafe inside the band as well
EXACT_WITH_BAND: Final[Decision] = "exact value, float band"
#: a float value compared with the tolerance band, unsafe inside it
FLOAT: Final[Decision] = "float"
DECISIONS: Final[tuple[Decision, ...]] = (EXACT, EXACT_NEAR_LIMIT, EXACT_WITH_BAND, FLOAT)

Exact = int | Fraction
Limit = float | int | Fraction


def _is_exact(x: object) -> bool:
    return isinstance(x, Fraction | numbers.Integral) and not isinstance(x, bool)


def exact_limit(limit: Limit) -> Fraction:
    """The rational a limit stands for (module doc): ``int`` and ``Fraction`` as they are, a
    float as the decimal it prints as, ``Fraction(repr(limit))`` (``0.1`` is ``1/10``, not
    ``Fraction(0.1)``)."""
    if isinstance(limit, Fraction):
        return limit
    if isinstance(limit, numbers.Integral) and not isinstance(limit, bool):
        return Fraction(int(limit))
    x = float(limit)
    if not math.isfinite(x):
        raise ValueError(f"a limit must be finite, got {limit!r}")
    return Fraction(repr(x))


def smallest_size_at_most(limit: Limit) -> int:
    """The smallest whole size ``n >= 1`` whose inverse ``1/n`` is at most ``limit`` read as
    written (``at_most(Fraction(1, n), limit)``): ``ceil(q/p)`` for ``exact_limit(limit) =
    p/q``. A re-identification risk ``1/n`` of a group of ``n`` is above the limit exactly
    for the smaller groups. Exact for any limit, ``1e-320`` included (no float inverse)."""
    x = exact_limit(limit)
    if x <= 0:
        raise ValueError(f"a risk limit must be positive, got {limit!r}")
    return max(1, -(-x.denominator // x.numerator))


def band(limit: float, tolerance: float = TOLERANCE) -> float:
    """Half-width of the band around ``limit`` inside which a float is decided unsafe:
    ``tolerance * max(1, |limit|)``."""
    return tolerance * max(1.0, abs(float(limit)))


def near(value: float, limit: float, tolerance: float = TOLERANCE) -> bool:
    """Whether the float ``value`` is inside the band around ``limit``: too close to call
    in floats (an engine that can compute the value exactly must do so here)."""
    v = float(value)
    return math.isfinite(v) and abs(v - float(limit)) <= band(limit, tolerance)


def below(value: float | Exact, limit: Limit, tolerance: float = TOLERANCE) -> bool:
    """``value < limit``, erring towards "no" (unsafe).

    Exact ``value``: ``value < exact_limit(limit)``. Float ``value``:
    ``value < limit - band(limit)`` (a value inside the band is not below the limit).
    """
    if _is_exact(value):
        return Fraction(value) < exact_limit(limit)
    return float(value) < float(limit) - band(float(limit), tolerance)


def at_most(value: float | Exact, limit: Limit, tolerance: float = TOLERANCE) -> bool:
    """``value <= limit``, erring towards "no" (unsafe).

    Exact ``value``: ``value <= exact_limit(limit)`` (equality holds). Float ``value``:
    ``value <= limit - band(limit)`` (a float equal to the limit is inside the band).
    """
    if _is_exact(value):
        return Fraction(value) <= exact_limit(limit)
    return float(value) <= float(limit) - band(float(limit), tolerance)


def at_least(value: float | Exact, limit: Limit, tolerance: float = TOLERANCE) -> bool:
    """``value >= limit``, erring towards "no" (unsafe).

    Exact ``value``: ``value >= exact_limit(limit)`` (equality holds). Float ``value``:
    ``value >= limit + band(limit)``.
    """
    if _is_exact(value):
        return Fraction(value) >= exact_limit(limit)
    return float(value) >= float(limit) + band(float(limit), tolerance)


def maxent_safe(max_posterior: float, c: float, residual: float = 0.0) -> bool:
    """The Privacy-MaxEnt gate (Du et al. 2008, section 3.1: the adversary's estimate
    ``P*(s | q)``; the release passes when every counted posterior is below ``c``).

    Safe iff ``max_posterior < c - max(TOLERANCE, residual)``: the posterior is a float
    computed by an iterative solver, so it must be below ``c`` by more than both the
    tolerance and the solver's error allowance ``residual`` (in probability units; see
    :attr:`airflow_privacy.core.maxent.result.MaxEntResult.posterior_error_bound`). A
    posterior that is mathematically ``c`` but computed one ulp below it is unsafe.
    """
    p, cf, r = float(max_posterior), float(c), float(residual)
    if not (math.isfinite(p) and math.isfinite(cf)) or math.isnan(r) or r < 0:
        raise ValueError(f"maxent_safe needs finite numbers, got {max_posterior!r}, {c!r}, {r!r}")
    return p < cf - max(TOLERANCE, r)


def decision_details(decision: Decision, tolerance: float = TOLERANCE) -> dict[str, object]:
    """The keys every criterion result adds to its ``details``: ``tolerance`` and
    ``decision`` (how the verdict compared the value with its limit; module doc)."""
    if decision not in DECISIONS:
        raise ValueError(f"unknown decision {decision!r}")
    return {"tolerance": tolerance, "decision": decision}
