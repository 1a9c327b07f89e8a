"""The special functions and the root finder the population-uniqueness models need, in numpy
and the standard library: digamma, trigamma and log-gamma of positive arguments, and a
bracketing root finder.

Why not ``scipy.special`` and ``scipy.optimize``: importing them costs about 0.3 s (0.18 s
for ``scipy.special``, whose array-API layer imports most of numpy's optional submodules,
and 0.15 s more for ``scipy.optimize``), more than the whole risk analysis of Adult's 30,162
records takes once imported. The tests check every function here against scipy's on a wide
range of arguments.

Digamma and trigamma: the recurrences ``psi(x) = psi(x + 1) - 1/x`` and ``psi'(x) =
psi'(x + 1) + 1/x^2`` move the argument to at least :data:`_ASYMPTOTIC_FROM`, where the
asymptotic (Stirling) series with the Bernoulli numbers ``B_2 .. B_16`` is accurate to
double precision (Abramowitz and Stegun 6.3.18 and 6.4.12; the first omitted term is below
``1e-17`` of the result at ``x >= 10``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

_ASYMPTOTIC_FROM = 10.0
#: ``B_2k / (2k)`` for k = 1..8, the coefficients of ``1/x^(2k)`` in the digamma series
_DIGAMMA = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12, -3617 / 8160)
#: ``B_2k`` for k = 1..8, the coefficients of ``1/x^(2k+1)`` in the trigamma series
_TRIGAMMA = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _shifted(x: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(z, sum of 1/x_j, sum of 1/x_j^2)``: every element moved by the same number of
    steps of the recurrence (``x_j = x + j``), enough to bring the smallest to at least
    :data:`_ASYMPTOTIC_FROM` (at most 10; moving the others further changes nothing but the
    number of terms); NaN where ``x`` is not positive (the models never ask there)."""
    a = np.array(x, dtype=np.float64, ndmin=1)
    bad = ~(a > 0)
    z = np.where(bad, _ASYMPTOTIC_FROM, a)
    low = float(z.min()) if z.size else _ASYMPTOTIC_FROM
    steps = math.ceil(_ASYMPTOTIC_FROM - low) if low < _ASYMPTOTIC_FROM else 0
    if steps:
        r = 1.0 / (z[:, None] + np.arange(steps, dtype=np.float64))
        inv = r.sum(axis=1)
        inv2 = (r * r).sum(axis=1)
        z = z + steps
    else:
        inv = np.zeros_like(z)
        inv2 = np.zeros_like(z)
    inv[bad] = np.nan
    inv2[bad] = np.nan
    return z, inv, inv2


def _series(z: FloatArray, coefficients: tuple[float, ...]) -> tuple[FloatArray, FloatArray]:
    """``(1/z, sum_k coefficients[k] / z^(2k+2))`` by Horner's rule in ``1/z^2``."""
    r = 1.0 / z
    w = r * r
    series = np.zeros_like(z)
    for c in reversed(coefficients):
        series = (series + c) * w
    return r, series


def _digamma(z: FloatArray, inv: FloatArray) -> FloatArray:
    r, series = _series(z, _DIGAMMA)
    out: FloatArray = np.log(z) - 0.5 * r - series - inv
    return out


def _trigamma(z: FloatArray, inv2: FloatArray) -> FloatArray:
    r, series = _series(z, _TRIGAMMA)
    out: FloatArray = r + 0.5 * (r * r) + series * r + inv2
    return out


def digamma(x: npt.ArrayLike) -> FloatArray:
    """``psi(x) = d/dx log Gamma(x)`` for ``x > 0`` (NaN elsewhere), elementwise."""
    z, inv, _ = _shifted(x)
    return _digamma(z, inv)


def trigamma(x: npt.ArrayLike) -> FloatArray:
    """``psi'(x)`` for ``x > 0`` (NaN elsewhere), elementwise."""
    z, _, inv2 = _shifted(x)
    return _trigamma(z, inv2)


def digamma_trigamma(x: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """``(digamma(x), trigamma(x))`` with one pass of the recurrence."""
    z, inv, inv2 = _shifted(x)
    return _digamma(z, inv), _trigamma(z, inv2)


def lgamma(x: npt.ArrayLike) -> FloatArray:
    """``log |Gamma(x)|`` elementwise (``math.lgamma``; the arrays the models pass hold one
    value per distinct class size)."""
    a = np.array(x, dtype=np.float64, ndmin=1)
    return np.array([_lgamma(v) for v in a.tolist()], dtype=np.float64)


def _lgamma(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # a pole: Gamma is infinite there
        return math.inf


def brent_root(
    g: Callable[[float], float],
    lo: float,
    hi: float,
    *,
    xtol: float = 1e-300,
    rtol: float = 1e-15,
    maxiter: int = 1000,
) -> float:
    """A root of ``g`` in ``[lo, hi]``, where ``g(lo)`` and ``g(hi)`` differ in sign: Brent's
    method (R. P. Brent, *Algorithms for Minimization without Derivatives*, 1973, ch. 4,
    procedure ``zero``), ended when half the bracket is below ``(xtol + rtol |b|) / 2``,
    the tolerance of ``scipy.optimize.brentq``. Raises ValueError when the signs agree or it
    does not converge in ``maxiter`` steps."""
    a, b = lo, hi
    fa, fb = g(a), g(b)
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    if (fa > 0) == (fb > 0):
        raise ValueError("brent_root: g(lo) and g(hi) have the same sign")
    c, fc = a, fa
    d = e = b - a
    for _ in range(maxiter):
        if (fb > 0) == (fc > 0):
            c, fc = a, fa
            d = e = b - a
        if abs(fc) < abs(fb):
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol = 0.5 * (xtol + rtol * abs(b))
        m = 0.5 * (c - b)
        if abs(m) <= tol or fb == 0.0:
            return b
        if abs(e) >= tol and abs(fa) > abs(fb):
            s = fb / fa
            if a == c:  # secant
                p, q = 2.0 * m * s, 1.0 - s
            else:  # inverse quadratic interpolation
                q, r = fa / fc, fb / fc
                p = s * (2.0 * m * q * (q - r) - (b - a) * (r - 1.0))
                q = (q - 1.0) * (r - 1.0) * (s - 1.0)
            if p > 0:
                q = -q
            else:
                p = -p
            if 2.0 * p < min(3.0 * m * q - abs(tol * q), abs(e * q)):
                e, d = d, p / q
            else:
                d = e = m  # bisection
        else:
            d = e = m
        a, fa = b, fb
        b += d if abs(d) > tol else (tol if m > 0 else -tol)
        fb = g(b)
    raise ValueError("brent_root: no convergence")
