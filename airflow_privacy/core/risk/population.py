"""Population uniqueness estimated from a sample, as ARX's ``RiskModelPopulationUniqueness``
computes it.

The input is the sample's equivalence-class size histogram (``c_k`` classes of size ``k``;
``u = sum c_k`` classes, ``n = sum k c_k`` records) and the sampling fraction ``pi`` in
``(0, 1]``. As ARX's ``ARXPopulationModel`` does, the population size is ``N = n / pi``. Each
model estimates the number of population-unique records; ARX's "fraction of unique tuples" is
that number divided by ``N`` (``getFractionOfUniqueTuples``: ``getNumUniqueTuples(model) /
super.getPopulationSize()``), reported here as ``*_fraction``.

* **Zayatz** (Zayatz 1991): the probability that a sample unique is a population unique is
  estimated from the sample histogram with hypergeometric terms
  ``h_k = P(X = 1)``, ``X ~ Hypergeometric(N, k, n)`` (population ``N``, ``k`` successes,
  ``n`` draws): ``P = (c_1/u) h_1 / sum_k (c_k/u) h_k``; uniques ``= c_1 P / pi``
  (ARX ``ModelZayatz``).
* **Pitman** (Pitman 1996; the estimator of Hoshino 2001): the sample is a draw from the
  Pitman (two-parameter Poisson-Dirichlet) partition with parameters ``theta``, ``alpha``
  fitted by maximum likelihood on the model's parameter space ``0 <= alpha < 1``,
  ``theta > -alpha`` (ARX ``ModelPitman``); uniques ``= Gamma(theta+1)/Gamma(theta+alpha)
  N^alpha`` (``theta`` on the edge ``alpha = 0``), kept only if in ``[0, N]``.
* **SNB** (Chen & McNulty 1998): population class sizes are ``1 + NegBin(a, b)`` over ``K``
  non-empty population classes, ``K`` estimated by Haas et al.'s Shlosser-type estimator;
  ``a``, ``b`` solve the two equations matching the expected numbers of sample classes of
  sizes 1 and 2; uniques ``= K b^a`` (ARX ``ModelSNB``).
* **Dankar rule** (Dankar et al. 2012), ARX's ``getNumUniqueTuplesDankar``: with no sample
  uniques everything is 0; if ``pi <= 0.1`` use Pitman, or Zayatz when Pitman has no valid
  estimate; otherwise use the smaller of Zayatz and SNB (Zayatz when SNB has no valid
  estimate). ARX's rule tests only the sampling fraction: there is no threshold on the
  number of classes in ARX's code.

An estimate is "not applicable" (``None`` here) exactly when ARX's ``isValid`` fails: NaN or
0 (ARX then reports 0 and ``isAvailableEstimate*`` false).

Discrepancies with ARX, all deliberate and small:

* **Pitman fit.** ARX solves the likelihood equations with the linearbits
  ``NewtonRaphson2D`` solver (accuracy ``1e-6``, 1000 iterations per try, up to 10 tries,
  constraint ``theta >= 0``) and accepts any root: roots with ``alpha < 0`` (or
  ``alpha >= 1``) lie outside Pitman's model, where the estimate collapses (``1.2e-57``
  uniques for the histogram ``{1:20, 2:3, 3:3, 4:1, 5:1, 10:1, 29:1, 200:1}`` at
  ``pi = 0.1``; the maximum on the parameter space gives 117.8). Here the fit is the maximum
  of the likelihood on ``0 <= alpha < 1``, ``theta > -alpha``: Newton-Raphson steps
  (accuracy ``1e-6``, 1000 iterations), each halved until it stays in the space and does
  not lower the likelihood, from ARX's starting point and six others, and the maximum on the
  edge ``alpha = 0`` (Ewens's formula); the highest wins. The estimate is not applicable
  only when no maximum exists (fewer than two classes, or every sampled record unique).
* **SNB equations.** ARX's object function for the size-2 equation multiplies by
  ``(1 - d)^(a+2)`` where Chen & McNulty's expectation (and ARX's own Jacobian, whose
  denominator is ``2 (1 - d)^(a+2)``) divides by it: an operator-precedence slip. Here the
  published form ``E[c_2] = K a b^a f^2 (1-b) (2 - (1-a) d) / (2 (1-d)^(a+2))``,
  ``d = (1-f)(1-b)``. ARX's Shlosser-type ``K`` subtracts 1 once per histogram entry in its
  second sum (``var2 += val2 * Math.pow(1 + f, val0) - 1``); Haas et al.'s estimator has
  ``sum_k c_k (1-f)^k ((1+f)^k - 1)``, used here, computed as ``sum_k c_k ((1-f^2)^k -
  (1-f)^k)`` (``(1+f)^k`` alone overflows a float for a class of 1,100 records at
  ``f = 0.9``). The equations are solved by Newton's method kept inside the parameter
  space from a grid of 25 starting points, then, only if none gives a solution, by
  MINPACK's hybrid method (``scipy.optimize.root``) from the same points, instead of ARX's
  solver.
* **No SciPy on the way.** Digamma, trigamma, log-gamma and Brent's root finder come from
  :mod:`airflow_privacy.core.risk.special` (importing ``scipy.special`` and
  ``scipy.optimize`` costs about 0.3 s, more than the whole risk analysis of Adult).
* **Population size.** ARX passes ``(int) populationSize`` to commons-math's
  hypergeometric distribution (truncation); here ``N`` is ``n / pi`` rounded to the nearest
  integer when within ``1e-6`` of it (so ``3 / 0.1 = 30.000000000000004`` is 30), else
  truncated as ARX does.

References: L. V. Zayatz, "Estimation of the percent of unique population elements on a
microdata file using the sample", Statistical Research Division Report RR-91/08, U.S. Bureau
of the Census, 1991; J. Pitman, "Some developments of the Blackwell-MacQueen urn scheme", in
*Statistics, Probability and Game Theory*, IMS Lecture Notes 30:245-267, 1996; N. Hoshino,
"Applying Pitman's sampling formula to microdata disclosure risk assessment", *Journal of
Official Statistics* 17(4):499-520, 2001; G. Chen and S. Keller-McNulty, "Estimation of
identification disclosure risk in microdata", *Journal of Official Statistics*
14(1):79-95, 1998; P. J. Haas, J. F. Naughton, S. Seshadri and L. Stokes, "Sampling-based
estimation of the number of distinct values of an attribute", VLDB 1995; F. K. Dankar,
K. El Emam, A. Neisa and T. Roffey, "Estimating the re-identification risk of clinical data
sets", *BMC Medical Informatics and Decision Making* 12:66, 2012. ARX: F. Prasser et al.,
``org.deidentifier.arx.risk.RiskModelPopulationUniqueness``, ``ModelZayatz``,
``ModelPitman``, ``ModelSNB`` (github.com/arx-deidentifier/arx).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from airflow_privacy.core.risk import special
from airflow_privacy.errors import InputError, opt

__all__ = [
    "PitmanFit",
    "PopulationUniqueness",
    "pitman_equations",
    "population_uniqueness",
]

#: ARX's default solver accuracy (``ARXSolverConfiguration``: ``accuracy(1e-6)``).
ACCURACY = 1e-6
#: ARX's iterations per try (``iterationsPerTry(1000)``).
MAX_ITERATIONS = 1000
#: the relative rounding of the log-likelihood (a few ulps of its sums of ~u terms): a step
#: that lowers it by less is not a worse point (:func:`_ascend`)
_ROUNDING = 64 * 2.0**-52
#: ARX's Dankar rule: Pitman at or below this sampling fraction.
DANKAR_PITMAN_MAX_FRACTION = 0.1


@dataclass(frozen=True)
class PitmanFit:
    """Maximum-likelihood Pitman parameters; ``converged`` False means no valid root."""

    theta: float
    alpha: float
    iterations: int
    converged: bool
    method: str


@dataclass(frozen=True)
class PopulationUniqueness:
    """Population-uniqueness estimates. ``*_uniques`` is ARX's ``getNumUniqueTuples*`` (the
    estimated number of population-unique records), ``*_fraction`` that over ``N`` (ARX's
    ``getFractionOfUniqueTuples*``); ``None`` marks an estimate ARX reports as not available
    (NaN or 0). ``dankar_model`` is the model Dankar's rule picked: ``"pitman"``,
    ``"zayatz"``, ``"snb"``, or ``"none"`` when the sample has no uniques (ARX's ``DANKAR``)
    or the fallback had no estimate either."""

    sampling_fraction: float
    n_records: int
    n_classes: int
    n_sample_uniques: int
    population_size: float
    sample_uniqueness: float
    zayatz_uniques: float | None
    zayatz_fraction: float | None
    pitman_uniques: float | None
    pitman_fraction: float | None
    pitman_theta: float | None
    pitman_alpha: float | None
    snb_uniques: float | None
    snb_fraction: float | None
    dankar_model: str
    dankar_uniques: float
    dankar_fraction: float

    def to_dict(self) -> dict[str, Any]:
        return {"model": "population_uniqueness", **asdict(self)}


# -- input -----------------------------------------------------------------------------------


def _histogram(classes: Iterable[int] | Mapping[int, int]) -> dict[int, int]:
    hist: dict[int, int] = {}
    if isinstance(classes, Mapping):
        for k, c in classes.items():
            for v, what in ((k, "size"), (c, "count")):
                if not isinstance(v, numbers.Integral) or isinstance(v, bool):
                    raise InputError(f"{opt('class_sizes')} {what} must be an integer, got {v!r}")
            if int(k) < 1:
                raise InputError(f"{opt('class_sizes')} has a class size {int(k)} below 1")
            if int(c) < 0:
                raise InputError(f"{opt('class_sizes')} has a negative count {int(c)}")
            if int(c):
                hist[int(k)] = hist.get(int(k), 0) + int(c)
    else:
        if isinstance(classes, (str, bytes)):
            raise InputError(f"{opt('class_sizes')} must be a sequence of positive integers")
        values = list(classes)
        if all(type(v) is int for v in values) and (not values or min(values) >= 1):
            # the usual input, plain integers: counted without a check per value (the
            # abstract-class test cost 25 ms on 12,458 classes)
            for v in values:
                hist[v] = hist.get(v, 0) + 1
        else:
            for v in values:
                if not isinstance(v, numbers.Integral) or isinstance(v, bool):
                    raise InputError(f"{opt('class_sizes')} must hold integers, got {v!r}")
                if int(v) < 1:
                    raise InputError(f"{opt('class_sizes')} must hold positive sizes, got {int(v)}")
                hist[int(v)] = hist.get(int(v), 0) + 1
    if not hist:
        raise InputError(f"{opt('class_sizes')} is empty: the sample has no records")
    return dict(sorted(hist.items()))


def _fraction(pi: object) -> float:
    if not isinstance(pi, numbers.Real) or isinstance(pi, bool):
        raise InputError(f"{opt('sampling_fraction')} must be a number in (0, 1], got {pi!r}")
    p = float(pi)
    if not (math.isfinite(p) and 0.0 < p <= 1.0):
        raise InputError(f"{opt('sampling_fraction')} must be in (0, 1], got {pi!r}")
    return p


def _integer_population(n: int, pi: float) -> int:
    big_n = n / pi
    near = round(big_n)
    return max(n, int(near) if abs(big_n - near) <= 1e-6 else int(big_n))


def _valid(x: float) -> bool:
    """ARX's ``isValid``: neither NaN nor 0."""
    return not math.isnan(x) and x != 0.0


# -- Zayatz ----------------------------------------------------------------------------------


def hypergeom_one(big_n: int, k: int, n: int) -> float:
    """``P(X = 1)`` for ``X ~ Hypergeometric(N, k, n)`` (Zayatz's ``h_k``): ``k C(N-k, n-1)
    / C(N, n) = k n / (N-k+1) * prod_{j<k-1} (1 - n / (N-j))``, in ``O(k)`` steps of
    ``log1p`` (scipy's ``hypergeom.pmf`` takes time proportional to ``N``: seconds for a
    population of ten billion, and it overflows far below the float range)."""
    if k < 1 or n < 1 or k > big_n or n > big_n or big_n - k < n - 1:
        return 0.0  # C(N-k, n-1) = 0: no draw of n holds exactly one of the k
    j = np.arange(k - 1, dtype=np.float64)
    log_p = math.log(k) + math.log(n) - math.log(big_n - k + 1)
    log_p += float(np.log1p(-n / (float(big_n) - j)).sum())
    return math.exp(log_p)


def zayatz_uniques(hist: Mapping[int, int], pi: float) -> float:
    """Zayatz's (1991) estimate of the number of population uniques (ARX ``ModelZayatz``)."""
    n = sum(k * c for k, c in hist.items())
    u = sum(hist.values())
    big_n = _integer_population(n, pi)
    c1 = hist.get(1, 0)
    temp = 0.0
    for k, c in hist.items():
        temp += (c / u) * hypergeom_one(big_n, k, n)
    p_cond = (c1 / u) * hypergeom_one(big_n, 1, n) / temp
    return c1 * p_cond / pi


# -- Pitman ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Sample:
    """A histogram as the Pitman likelihood reads it: ``n``, ``u``, the sizes ``k`` and
    counts ``c_k`` as arrays, and ``i = 1 .. u-1``."""

    n: int
    u: int
    ks: np.ndarray
    cs: np.ndarray
    i: np.ndarray

    @classmethod
    def of(cls, hist: Mapping[int, int]) -> _Sample:
        ks = np.fromiter(hist.keys(), dtype=float, count=len(hist))
        cs = np.fromiter(hist.values(), dtype=float, count=len(hist))
        u = int(cs.sum())
        return cls(int((ks * cs).sum()), u, ks, cs, np.arange(1, u, dtype=float))


def pitman_equations(
    theta: float, alpha: float, hist: Mapping[int, int]
) -> tuple[tuple[float, float], tuple[tuple[float, float], tuple[float, float]]]:
    """The Pitman likelihood equations and their Jacobian (ARX's
    ``getMasterFunctionIterative``): ``o1 = sum_{i<u} 1/(theta+i alpha) - sum_{i<n}
    1/(theta+i)`` (``dL/dtheta``) and ``o2 = sum_{i<u} i/(theta+i alpha) - sum_k c_k
    sum_{j<k} 1/(j-alpha)`` (``dL/dalpha``). The sums over ``i < u`` are added term by term
    (``alpha`` may be 0); the sums of ``1/(theta+i)`` over ``i < n`` and of ``1/(j-alpha)``
    over ``j < k`` are digamma differences (``psi(theta+n) - psi(theta+1)``), so a sample of
    ``10^8`` records costs no ``10^8``-element array."""
    return _equations(theta, alpha, _Sample.of(hist))


def _equations(
    theta: float, alpha: float, d: _Sample
) -> tuple[tuple[float, float], tuple[tuple[float, float], tuple[float, float]]]:
    i = d.i
    v = 1.0 / (theta + i * alpha)
    iv = i * v
    o1 = float(v.sum())
    o3 = float(iv.sum())
    d1 = float((v * v).sum())
    d5 = float((iv * v).sum())
    d3 = float((iv * iv).sum())
    # psi and psi' at theta + n, theta + 1, 1 - alpha and every k - alpha, in one call
    at = np.concatenate(([theta + d.n, theta + 1.0, 1.0 - alpha], d.ks - alpha))
    psi, tri = special.digamma_trigamma(at)
    o2 = float(psi[0] - psi[1])
    d2 = float(tri[1] - tri[0])
    o4 = float((d.cs * (psi[3:] - psi[2])).sum())
    d4 = float((d.cs * (tri[2] - tri[3:])).sum())
    return (o1 - o2, o3 - o4), ((d2 - d1, -d5), (-d5, -d3 - d4))


def pitman_loglik(theta: float, alpha: float, hist: Mapping[int, int]) -> float:
    """Log of Pitman's (1996) sampling formula up to its combinatorial constant,
    ``sum_{i<u} log(theta + i alpha) - sum_{i<n} log(theta + i) + sum_k c_k sum_{j<k}
    log(j - alpha)``; ``-inf`` outside the model's parameter space ``0 <= alpha < 1``,
    ``theta > -alpha``."""
    return _loglik(theta, alpha, _Sample.of(hist))


def _loglik(theta: float, alpha: float, d: _Sample) -> float:
    if not (0.0 <= alpha < 1.0 and theta + alpha > 0.0):
        return -math.inf
    first = float(np.log(theta + d.i * alpha).sum())
    second = math.lgamma(theta + d.n) - math.lgamma(theta + 1.0)
    third = float((d.cs * special.lgamma(d.ks - alpha)).sum()) - d.u * math.lgamma(1.0 - alpha)
    return first - second + third


def pitman_start(hist: Mapping[int, int]) -> tuple[float, float]:
    """ARX's initial guess for ``(theta, alpha)`` (``ModelPitman``'s constructor)."""
    c1 = float(hist.get(1, 0))
    c2 = float(hist.get(2, 0)) or 1.0  # ARX: "Overestimate"
    u = float(sum(hist.values()))
    n = float(sum(k * c for k, c in hist.items()))
    c = (c1 * (c1 - 1)) / c2
    den = (2 * c1 * u) + (c1 * c) - (n * c)
    t = ((n * u * c) - (c1 * (n - 1) * ((2 * u) + c))) / den if den != 0 else math.nan
    a = ((t * (c1 - n)) + ((n - 1) * c1)) / (n * u)
    return t, a


def _ewens_theta(hist: Mapping[int, int]) -> float:
    """The maximum-likelihood ``theta`` on the edge ``alpha = 0`` (Ewens's sampling formula):
    the one root of ``(u-1)/theta = psi(theta+n) - psi(theta+1)``; the left side minus the
    right is positive near 0 and negative for large ``theta`` when ``1 < u < n``."""
    n, u = sum(k * c for k, c in hist.items()), sum(hist.values())

    def g(t: float) -> float:
        psi = special.digamma([t + n, t + 1.0])
        return (u - 1) / t - float(psi[0] - psi[1])

    hi = max(1.0, float(u))
    while g(hi) > 0:
        hi *= 4.0
    return special.brent_root(g, 1e-300, hi, xtol=1e-300, rtol=1e-15, maxiter=1000)


def _pitman_starts(hist: Mapping[int, int]) -> list[tuple[float, float]]:
    """ARX's starting point when it lies in the parameter space, then a spread of others:
    ARX's solver retries from other points when a try fails (up to 10 tries)."""
    t0, a0 = pitman_start(hist)
    u = float(sum(hist.values()))
    starts = [(t0, a0)] if (0.0 <= a0 < 1.0 and t0 + a0 > 0.0) else []
    return starts + [(t, a) for a in (0.5, 0.2, 0.8) for t in (1.0, u / 4.0)]


def _ascend(t: float, a: float, d: _Sample) -> tuple[float, float, int] | None:
    """Newton-Raphson on the likelihood equations, each step kept inside the parameter space
    (at most 90% of the way to its edge) and halved until it does not lower the likelihood;
    a gradient step, at most 0.05 in ``alpha`` and half of ``theta + alpha`` in ``theta``,
    where the Hessian is not negative definite. Returns a local maximum, or None when the run
    stalls against the edge ``alpha = 0`` or ends at a saddle point."""
    here = _loglik(t, a, d)
    for it in range(MAX_ITERATIONS):
        (f1, f2), ((h11, h12), (_, h22)) = _equations(t, a, d)
        if not all(math.isfinite(x) for x in (f1, f2, h11, h12, h22)):
            return None
        det = h11 * h22 - h12 * h12
        concave = h11 < 0 and det > 0
        if abs(f1) <= ACCURACY and abs(f2) <= ACCURACY:
            return (t, a, it) if concave else None
        if concave:
            dt, da = -(f1 * h22 - f2 * h12) / det, -(h11 * f2 - h12 * f1) / det
            lam = 1.0
        else:
            dt, da = f1, f2
            lam = min(0.05 / max(abs(da), 1e-300), 0.5 * (t + a) / max(abs(dt), 1e-300))
        if da < 0:
            if a < 1e-6:
                return None  # against the edge: its maximum is the Ewens candidate
            lam = min(lam, 0.9 * a / -da)
        elif da > 0:
            lam = min(lam, 0.9 * (1.0 - a) / da)
        if dt + da < 0:
            lam = min(lam, 0.9 * (t + a) / -(dt + da))
        # a step is kept unless it lowers the likelihood by more than its rounding: near the
        # maximum a Newton step gains less than the last bits of L (about 1e-11 at
        # L = -1.6e5), and comparing rounding noise halved such steps to nothing (Adult's
        # 1,408 classes: 1,000 iterations, 27,585 evaluations, no fit from that start)
        noise = _ROUNDING * max(abs(here), 1.0)
        while True:
            if lam < 1e-12:
                return None
            nt, na = t + lam * dt, a + lam * da
            there = _loglik(nt, na, d)
            if there >= here - noise:
                break
            lam /= 2.0
        t, a, here = nt, na, there
    return None


def fit_pitman(hist: Mapping[int, int]) -> PitmanFit:
    """The maximum-likelihood ``(theta, alpha)`` of Pitman's sampling formula on the
    model's parameter space ``0 <= alpha < 1``, ``theta > -alpha`` (Pitman 1996; Hoshino
    2001, section 3): the best of the local maxima that Newton-Raphson reaches from ARX's
    starting point and from a spread of other points, and of the maximum on the edge
    ``alpha = 0`` (Ewens's formula). Not converged when the likelihood has no maximum there:
    fewer than two classes, or every class a single record (the likelihood then grows
    towards ``alpha = 1``). A root of the equations outside the parameter space (ARX accepts
    any with ``theta >= 0``, even ``alpha < 0``) is never the fit."""
    d = _Sample.of(hist)
    if d.u < 2 or d.n == d.u:
        return PitmanFit(math.nan, math.nan, 0, False, "none")
    with np.errstate(all="ignore"):
        te = _ewens_theta(hist)
        best_ll = _loglik(te, 0.0, d)
        best = PitmanFit(te, 0.0, 0, True, "ewens-edge")
        for t0, a0 in _pitman_starts(hist):
            got = _ascend(t0, a0, d)
            if got is not None:
                ll = _loglik(got[0], got[1], d)
                if ll > best_ll:
                    best_ll, best = ll, PitmanFit(got[0], got[1], got[2], True, "newton-raphson")
    return best


def pitman_uniques(theta: float, alpha: float, population_size: float) -> float:
    """Hoshino's (2001) Pitman estimate ``Gamma(theta+1)/Gamma(theta+alpha) N^alpha``
    (``theta`` itself on the edge ``alpha = 0``), computed with log-gamma; NaN outside the
    parameter space ``0 <= alpha < 1``, ``theta > -alpha``, or when not in ``[0, N]`` (ARX
    ``ModelPitman.getResult`` keeps only estimates in range)."""
    t, a, p = theta, alpha, population_size
    if not (math.isfinite(t) and 0.0 <= a < 1.0 and t + a > 0.0):
        return math.nan
    try:
        v = math.exp(math.lgamma(t + 1.0) - math.lgamma(t + a) + a * math.log(p))
    except (ValueError, OverflowError):
        return math.nan
    return v if 0.0 <= v <= p else math.nan


# -- SNB -------------------------------------------------------------------------------------


def snb_classes(hist: Mapping[int, int], f: float) -> float:
    """Haas et al.'s (1995) Shlosser-type estimate of the number ``K`` of non-empty
    population classes (ARX ``ModelSNB.estimateNonEmptyEquivalenceClasses``, with the
    published second sum; see the module notes)."""
    u = float(sum(hist.values()))
    c1 = float(hist.get(1, 0))
    var1 = var2 = var3 = var4 = 0.0
    f2 = f * f
    for k, c in hist.items():
        q = (1 - f) ** k * c
        var1 += k * f2 * (1 - f2) ** (k - 1) * c
        # c (1-f)^k ((1+f)^k - 1), written so that no power passes 1: (1+f)^k overflowed
        # for a class of 1,100 records at f = 0.9 (OverflowError instead of an estimate)
        var2 += c * ((1 - f2) ** k - (1 - f) ** k)
        var3 += q
        var4 += k * f * (1 - f) ** (k - 1) * c
    if var2 == 0 or var4 == 0:
        return u
    return u + c1 * (var1 / var2) * (var3 / var4) ** 2


def snb_expected(a: float, b: float, k: float, f: float) -> tuple[float, float]:
    """Chen & McNulty's (1998) expected numbers of sample classes of sizes 1 and 2 when the
    ``K`` population class sizes are ``1 + NegBin(a, b)`` and records are sampled with
    fraction ``f``."""
    d = (1 - f) * (1 - b)
    e1 = k * f * (b / (1 - d)) ** a * ((a * d) / (1 - d) + 1)
    e2 = k * a * b**a * f * f * (1 - b) * (2 - (1 - a) * d) / (2 * (1 - d) ** (a + 2))
    return e1, e2


#: SNB's starting points ``(a, b)``, tried in this order
SNB_STARTS = tuple((a, b) for a in (0.5, 0.1, 1.0, 2.0, 5.0) for b in (0.5, 0.1, 0.9, 0.01, 0.99))


def snb_uniques(hist: Mapping[int, int], f: float) -> float:
    """The SNB estimate ``K b^a`` (ARX ``ModelSNB``) at :func:`snb_parameters`; NaN when
    the equations have no solution."""
    got = snb_parameters(hist, f)
    if got is None:
        return math.nan
    a, b, k = got
    return float(k * b**a)


def snb_parameters(hist: Mapping[int, int], f: float) -> tuple[float, float, float] | None:
    """``(a, b, K)``: the number ``K`` of population classes (:func:`snb_classes`) and an
    ``a > 0``, ``0 < b < 1`` that solves the two equations (:func:`snb_expected` equal to
    ``c_1``, ``c_2``) to within ``1e-6`` relative to them; None when none is found.

    The equations are solved by Newton's method kept inside ``a > 0``, ``0 < b < 1`` from
    each of :data:`SNB_STARTS`; only when no start gives a solution is MINPACK's hybrid
    method (``scipy.optimize.root``, imported then: 0.3 s) tried from the same starts, so
    a solution either finds is found (module notes)."""
    c1 = float(hist.get(1, 0))
    c2 = float(hist.get(2, 0))
    if f >= 1.0:
        return None  # no unsampled population: the model degenerates (d = 0)
    k = snb_classes(hist, f)
    scale = max(c1, c2, 1.0)

    def residual(a: float, b: float) -> tuple[float, float]:
        e1, e2 = snb_expected(a, b, k, f)
        return e1 - c1, e2 - c2

    def solves(a: float, b: float) -> bool:
        if not (a > 0 and 0 < b < 1):
            return False
        r = residual(a, b)
        return max(abs(r[0]), abs(r[1])) <= ACCURACY * scale

    with np.errstate(all="ignore"):
        for a0, b0 in SNB_STARTS:
            try:
                a, b = _snb_newton(residual, a0, b0, ACCURACY * scale)
            except (ValueError, OverflowError, ZeroDivisionError):
                continue
            if solves(a, b):
                return a, b, k
        got = _snb_hybrid(residual, solves)
    return None if got is None else (got[0], got[1], k)


def _snb_newton(
    residual: Callable[[float, float], tuple[float, float]], a: float, b: float, tol: float
) -> tuple[float, float]:
    """Newton's method on ``residual(a, b) = 0`` from ``(a, b)``, the Jacobian by central
    differences; a step is halved until it stays inside ``a > 0``, ``0 < b < 1`` and lowers
    ``|residual|``. Stops within a thousandth of ``tol``, or when no step lowers it."""
    r = residual(a, b)
    for _ in range(200):
        size = math.hypot(r[0], r[1])
        if max(abs(r[0]), abs(r[1])) <= tol * 1e-3 or not math.isfinite(size):
            break
        ha, hb = 1e-7 * max(a, 1e-3), 1e-7 * min(b, 1.0 - b)
        pa, ma = residual(a + ha, b), residual(a - ha, b)
        pb, mb = residual(a, b + hb), residual(a, b - hb)
        j11, j21 = (pa[0] - ma[0]) / (2 * ha), (pa[1] - ma[1]) / (2 * ha)
        j12, j22 = (pb[0] - mb[0]) / (2 * hb), (pb[1] - mb[1]) / (2 * hb)
        det = j11 * j22 - j12 * j21
        if not math.isfinite(det) or det == 0.0:
            break
        da, db = (j22 * r[0] - j12 * r[1]) / det, (j11 * r[1] - j21 * r[0]) / det
        t = 1.0
        while t >= 1e-12:
            na, nb = a - t * da, b - t * db
            if na > 0 and 0 < nb < 1:
                nr = residual(na, nb)
                if math.hypot(nr[0], nr[1]) < size:
                    a, b, r = na, nb, nr
                    break
            t /= 2.0
        else:
            break
    return a, b


def _snb_hybrid(
    residual: Callable[[float, float], tuple[float, float]],
    solves: Callable[[float, float], bool],
) -> tuple[float, float] | None:
    """The first solution ``(a, b)`` MINPACK's hybrid method finds from
    :data:`SNB_STARTS` (outside the parameter space the residual is a large constant), or
    None."""
    from scipy import optimize

    def fun(x: np.ndarray) -> list[float]:
        a, b = float(x[0]), float(x[1])
        if not (a > 0 and 0 < b < 1):
            return [1e6 * (1 + abs(a)), 1e6 * (1 + abs(b))]
        return list(residual(a, b))

    for a0, b0 in SNB_STARTS:
        try:
            sol = optimize.root(fun, [a0, b0], method="hybr")
        except (ValueError, FloatingPointError, ZeroDivisionError):
            continue
        a, b = float(sol.x[0]), float(sol.x[1])
        if solves(a, b):
            return a, b
    return None


# -- the whole ---------------------------------------------------------------------------------


def population_uniqueness(
    classes: Iterable[int] | Mapping[int, int],
    sampling_fraction: float,
    *,
    with_snb: bool = True,
) -> PopulationUniqueness:
    """Zayatz, Pitman and SNB estimates of population uniqueness and Dankar et al.'s choice
    among them, from the sample's class sizes (or the histogram ``{size: count}``) and the
    sampling fraction (ARX's ``RiskModelPopulationUniqueness``)."""
    hist = _histogram(classes)
    pi = _fraction(sampling_fraction)
    n = sum(k * c for k, c in hist.items())
    u = sum(hist.values())
    c1 = hist.get(1, 0)
    big_n = n / pi
    if not math.isfinite(big_n):
        raise InputError(
            f"{opt('sampling_fraction')} {sampling_fraction!r} makes the population n / pi "
            "beyond the float range"
        )

    def frac(x: float | None) -> float | None:
        return None if x is None else x / big_n

    if c1 == 0:
        # ARX: "Handle cases where there are no sample uniques": every estimate 0, DANKAR.
        return PopulationUniqueness(
            pi, n, u, 0, big_n, 0.0, 0.0, 0.0, 0.0, 0.0, None, None, 0.0, 0.0, "none", 0.0, 0.0
        )
    z = zayatz_uniques(hist, pi)
    fit = fit_pitman(hist)
    pit = pitman_uniques(fit.theta, fit.alpha, big_n) if fit.converged else math.nan
    snb = snb_uniques(hist, pi) if with_snb else math.nan
    zv = z if _valid(z) else None
    pv = pit if _valid(pit) else None
    sv = snb if _valid(snb) else None

    model, chosen = "none", 0.0
    if pi <= DANKAR_PITMAN_MAX_FRACTION:
        if pv is not None:
            model, chosen = "pitman", pv
        elif zv is not None:
            model, chosen = "zayatz", zv
    elif sv is not None:
        # ARX: numUniquesZayatz < numUniquesSNB -> ZAYATZ, else SNB
        model, chosen = ("zayatz", z) if z < sv else ("snb", sv)
    elif zv is not None:
        model, chosen = "zayatz", zv
    if model != "none" and not _valid(chosen):
        model, chosen = "none", 0.0
    return PopulationUniqueness(
        sampling_fraction=pi,
        n_records=n,
        n_classes=u,
        n_sample_uniques=c1,
        population_size=big_n,
        sample_uniqueness=c1 / n,
        zayatz_uniques=zv,
        zayatz_fraction=frac(zv),
        pitman_uniques=pv,
        pitman_fraction=frac(pv),
        pitman_theta=fit.theta if fit.converged else None,
        pitman_alpha=fit.alpha if fit.converged else None,
        snb_uniques=sv,
        snb_fraction=frac(sv),
        dankar_model=model,
        dankar_uniques=chosen,
        dankar_fraction=chosen / big_n,
    )
