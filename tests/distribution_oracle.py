"""Reference computations for (alpha,k)-anonymity, beta-likeness and delta-disclosure
privacy, written from the definitions with :class:`~fractions.Fraction` on lists of rows.

They never call the engines. Logarithms are never evaluated: ``x <= ln y`` is decided as
``exp(x) <= y`` with rigorous lower and upper bounds of ``exp(x)`` from its Taylor series
(:func:`exp_sign`), a method independent of the engines' :mod:`decimal` logarithms.
"""

from __future__ import annotations

import math
from fractions import Fraction

Rows = list[list[int]]


def typed(limit: float) -> Fraction:
    """The threshold as written (the decimal a float prints as)."""
    return Fraction(repr(float(limit)))


def exp_sign(x: Fraction, y: Fraction) -> int:
    """The sign of ``exp(x) - y`` (``x >= 0``, ``y > 0``), from Taylor bounds of ``exp(x)``:
    ``S_m <= exp(x) <= S_m + x^(m+1)/(m+1)! * (m+2)/(m+2-x)`` for ``m + 2 > x``."""
    assert x >= 0 and y > 0
    if x == 0:
        return int(y < 1) - int(y > 1)
    term, total, m = Fraction(1), Fraction(1), 0
    while m < 5000:
        m += 1
        term = term * x / m
        total += term
        if m + 2 > x:
            rest = term * x / (m + 1) * Fraction(m + 2) / (m + 2 - x)
            if total > y:
                return 1
            if total + rest < y:
                return -1
    raise AssertionError("exp_sign did not converge")


def table(rows: Rows) -> list[int]:
    return [sum(col) for col in zip(*rows, strict=True)]


# ------------------------------------------------------------ (alpha,k)-anonymity


def alpha_achieved(rows: Rows, column: int | None = None) -> Fraction:
    """Wong et al. 2006, alpha-deassociation: the largest ``|(E, s)| / |E|``."""
    if column is None:
        return max(Fraction(max(r), sum(r)) for r in rows)
    return max(Fraction(r[column], sum(r)) for r in rows)


def alpha_k_group_ok(row: list[int], alpha: float, k: int, column: int | None) -> bool:
    n = sum(row)
    capped = max(row) if column is None else row[column]
    return n >= k and Fraction(capped, n) <= typed(alpha)


# ----------------------------------------------------------------- beta-likeness


def gains(row: list[int], tot: list[int]) -> list[tuple[Fraction, Fraction]]:
    """``(D(p_i, q_i), p_i)`` for every value the group raises (``q_i > p_i``)."""
    n, big_n = sum(row), sum(tot)
    out = []
    for c, t in zip(row, tot, strict=True):
        if t == 0:
            continue
        q, p = Fraction(c, n), Fraction(t, big_n)
        if q > p:
            out.append(((q - p) / p, p))
    return out


def basic_beta(rows: Rows) -> Fraction:
    tot = table(rows)
    return max((d for r in rows for d, _ in gains(r, tot)), default=Fraction(0))


def basic_group_ok(row: list[int], tot: list[int], beta: float) -> bool:
    return all(d <= typed(beta) for d, _ in gains(row, tot))


def enhanced_group_ok(row: list[int], tot: list[int], beta: float) -> bool:
    # D <= min(beta, -ln p)  <=>  D <= beta and exp(D) <= 1/p
    return all(d <= typed(beta) and exp_sign(d, 1 / p) <= 0 for d, p in gains(row, tot))


def enhanced_feasible(rows: Rows) -> bool:
    tot = table(rows)
    return all(exp_sign(d, 1 / p) <= 0 for r in rows for d, p in gains(r, tot))


# ------------------------------------------------------ delta-disclosure privacy


def delta_group_ok(row: list[int], tot: list[int], delta: float) -> bool:
    """Brickell & Shmatikov 2008: ``|ln(q/p)| < delta`` for every value of the table, i.e.
    ``r < e^delta`` and ``1/r < e^delta`` with ``r = q/p``; an absent value fails."""
    n, big_n = sum(row), sum(tot)
    lim = typed(delta)
    for c, t in zip(row, tot, strict=True):
        if t == 0:
            continue
        if c == 0:
            return False
        r = Fraction(c, n) / Fraction(t, big_n)
        if exp_sign(lim, r) <= 0 or exp_sign(lim, 1 / r) <= 0:
            return False
    return True


def delta_value(rows: Rows) -> float:
    tot = table(rows)
    big_n = sum(tot)
    worst = 0.0
    for row in rows:
        n = sum(row)
        for c, t in zip(row, tot, strict=True):
            if t == 0:
                continue
            if c == 0:
                return math.inf
            worst = max(worst, abs(math.log(Fraction(c * big_n, n * t))))
    return worst
