"""Shared exact arithmetic of the distribution-based criteria (beta-likeness, delta-disclosure
privacy, (alpha,k)-anonymity): group shares against the table's shares, decided exactly near
a threshold.

Every quantity these criteria compare is a ratio of integers (a share ``c / n``, a relative
gain ``(c N - n T) / (n T)``) or the natural logarithm of one (``ln(c N / (n T))``,
``-ln(T / N)``). Ratios are settled with :class:`~fractions.Fraction` against the threshold as
written (:func:`airflow_privacy.core.thresholds.exact_limit`). A logarithm of a rational other
than 1 is transcendental (Lindemann-Weierstrass), so it never *equals* a rational threshold:
its side of the threshold is settled with :mod:`decimal` logarithms at growing precision,
which always terminates. Floats decide everywhere outside the tolerance band of
:mod:`airflow_privacy.core.thresholds`, where they cannot disagree with the exact value.
"""

from __future__ import annotations

from decimal import Context, Decimal
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from airflow_privacy.core import thresholds
from airflow_privacy.errors import InputError

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

__all__ = ["fractions_at_most", "log_sign", "protected", "ratio_at_most", "table_columns"]

_START_DIGITS = 50
_MAX_DIGITS = 3200


def _dec(x: Fraction, ctx: Context) -> Decimal:
    return ctx.divide(Decimal(x.numerator), Decimal(x.denominator))


def log_sign(ratio: Fraction, limit: Fraction) -> int:
    """The sign of ``ln(ratio) - limit``, exactly (``ratio > 0``).

    ``ln(1) = 0`` is compared with ``limit`` directly. Otherwise ``ln(ratio)`` is
    transcendental and differs from the rational ``limit``; both are evaluated with
    ``digits`` significant decimal digits (each correctly rounded, so the difference is
    known to a few units in the last place of the larger magnitude) and the precision is
    doubled until the difference is clearly resolved.
    """
    if ratio <= 0:
        raise ValueError("log_sign needs a positive ratio")
    if ratio == 1:
        return int(limit < 0) - int(limit > 0)
    digits = _START_DIGITS
    while digits <= _MAX_DIGITS:
        ctx = Context(prec=digits)
        lhs = ctx.ln(_dec(ratio, ctx))
        rhs = _dec(limit, ctx)
        diff = ctx.subtract(lhs, rhs)
        scale = max(abs(lhs), abs(rhs), Decimal(1))
        if abs(diff) > scale * Decimal(10) ** (-(digits - 10)):
            return 1 if diff > 0 else -1
        digits *= 2
    raise ArithmeticError("log_sign: could not separate a logarithm from its limit")


def fractions_at_most(num: IntArray, den: IntArray, limit: float) -> BoolArray:
    """Elementwise, exactly, ``num / den <= limit`` (``den > 0``) with ``limit`` read as
    written (``Fraction(repr(limit))``, :func:`~airflow_privacy.core.thresholds.at_most`):
    ``num * b <= a * den`` for ``limit = a / b``, in int64 when no product can overflow,
    with Python integers otherwise."""
    exact = thresholds.exact_limit(limit)
    a, b = exact.numerator, exact.denominator
    num = np.asarray(num, dtype=np.int64)
    den = np.asarray(den, dtype=np.int64)
    if num.size == 0:
        return np.zeros(num.shape, dtype=bool)
    # a and b themselves must fit too (num may be all 0: a limit of 1e-320 is 1 / 10**320)
    bound = max(max(int(np.abs(num).max()), 1) * b, max(abs(a), 1) * max(int(den.max()), 1))
    if bound < 2**62:
        out: BoolArray = np.asarray(num * b <= a * den)
        return out
    return np.fromiter(
        (int(x) * b <= a * int(y) for x, y in zip(num.tolist(), den.tolist(), strict=True)),
        dtype=bool,
        count=num.size,
    ).reshape(num.shape)


def ratio_at_most(num: IntArray, den: IntArray, limit: float) -> BoolArray:
    """Elementwise ``num / den <= limit`` (``den > 0``), with the limit read as written: the
    float ratio outside the tolerance band, :func:`~airflow_privacy.core.thresholds.at_most`
    on the exact :class:`~fractions.Fraction` inside it (:func:`fractions_at_most`)."""
    ratio = num / den.astype(np.float64)
    out: BoolArray = np.asarray(ratio <= limit)
    close = np.flatnonzero(np.abs(ratio - limit) <= thresholds.band(limit))
    if close.size:
        out[close] = fractions_at_most(num[close], den[close], limit)
    return out


def table_columns(counts: IntArray, totals: IntArray) -> tuple[IntArray, IntArray, int]:
    """``counts`` and ``totals`` restricted to the values the table holds (``totals > 0``),
    and the table's record count ``N``."""
    counts = np.asarray(counts, dtype=np.int64)
    totals = np.asarray(totals, dtype=np.int64)
    if counts.ndim != 2 or totals.ndim != 1 or totals.shape[0] != counts.shape[1]:
        raise InputError("totals must have one entry per column of counts")
    cols = np.flatnonzero(totals > 0)
    return counts[:, cols], totals[cols], int(totals.sum())


def protected(totals: IntArray, benign: BoolArray | None) -> BoolArray:
    """Over the columns :func:`table_columns` keeps (``totals > 0``), the values the bound
    protects: every one but the benign values (``benign``, a mask over all the columns;
    docs/distribution-criteria.md, "Benign values")."""
    present = np.asarray(totals) > 0
    if benign is None:
        return np.ones(int(present.sum()), dtype=bool)
    mask = np.asarray(benign, dtype=bool)
    if mask.shape != present.shape:
        raise InputError("the benign mask must have one entry per column of counts")
    out: BoolArray = ~mask[present]
    return out
