"""Reference computations for (alpha,k)-anonymity, beta-likeness and delta-disclosure
privacy, written from the definitions with :class:`~fractions.Fraction` on lists of rows.

They never call the engines. Logarithms are never evaluated: ``x <= ln y`` is decided as
``exp(x) <= y`` with rigorous lower and upper bounds of ``exp(x)`` from its Taylor series
(:func:`exp_sign`), a method independent of the engines' :mod:`decimal` logarithms.

Benign values (``benign``: a set of column indices; docs/distribution-criteria.md, "Benign
values"): the caps and bounds quantify over the non-benign values only, while the table's
distribution ``p`` keeps every value. With ``benign`` empty every function is the plain
definition.
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


NONE: frozenset[int] = frozenset()


def table(rows: Rows) -> list[int]:
    return [sum(col) for col in zip(*rows, strict=True)]


# ------------------------------------------------------------ (alpha,k)-anonymity


def _capped(row: list[int], column: int | None, benign: frozenset[int]) -> int:
    if column is not None:
        return row[column]
    return max((c for i, c in enumerate(row) if i not in benign), default=0)


def alpha_achieved(
    rows: Rows, column: int | None = None, benign: frozenset[int] = NONE
) -> Fraction:
    """Wong et al. 2006, alpha-deassociation: the largest ``|(E, s)| / |E|`` over the capped
    values (the designated one, or every non-benign one)."""
    return max(Fraction(_capped(r, column, benign), sum(r)) for r in rows)


def alpha_k_group_ok(
    row: list[int], alpha: float, k: int, column: int | None, benign: frozenset[int] = NONE
) -> bool:
    n = sum(row)
    return n >= k and Fraction(_capped(row, column, benign), n) <= typed(alpha)


# ----------------------------------------------------------------- beta-likeness


def gains(
    row: list[int], tot: list[int], benign: frozenset[int] = NONE
) -> list[tuple[Fraction, Fraction]]:
    """``(D(p_i, q_i), p_i)`` for every non-benign value the group raises (``q_i > p_i``);
    ``p_i`` over the whole table, benign values included."""
    n, big_n = sum(row), sum(tot)
    out = []
    for i, (c, t) in enumerate(zip(row, tot, strict=True)):
        if t == 0 or i in benign:
            continue
        q, p = Fraction(c, n), Fraction(t, big_n)
        if q > p:
            out.append(((q - p) / p, p))
    return out


def basic_beta(rows: Rows, benign: frozenset[int] = NONE) -> Fraction:
    tot = table(rows)
    return max((d for r in rows for d, _ in gains(r, tot, benign)), default=Fraction(0))


def basic_group_ok(
    row: list[int], tot: list[int], beta: float, benign: frozenset[int] = NONE
) -> bool:
    return all(d <= typed(beta) for d, _ in gains(row, tot, benign))


def enhanced_group_ok(
    row: list[int], tot: list[int], beta: float, benign: frozenset[int] = NONE
) -> bool:
    # D <= min(beta, -ln p)  <=>  D <= beta and exp(D) <= 1/p
    return all(d <= typed(beta) and exp_sign(d, 1 / p) <= 0 for d, p in gains(row, tot, benign))


def enhanced_feasible(rows: Rows, benign: frozenset[int] = NONE) -> bool:
    tot = table(rows)
    return all(exp_sign(d, 1 / p) <= 0 for r in rows for d, p in gains(r, tot, benign))


# ------------------------------------------------------ delta-disclosure privacy


def delta_group_ok(
    row: list[int], tot: list[int], delta: float, benign: frozenset[int] = NONE
) -> bool:
    """Brickell & Shmatikov 2008: ``|ln(q/p)| < delta`` for every non-benign value of the
    table, i.e. ``r < e^delta`` and ``1/r < e^delta`` with ``r = q/p``; an absent value
    fails."""
    n, big_n = sum(row), sum(tot)
    lim = typed(delta)
    for i, (c, t) in enumerate(zip(row, tot, strict=True)):
        if t == 0 or i in benign:
            continue
        if c == 0:
            return False
        r = Fraction(c, n) / Fraction(t, big_n)
        if exp_sign(lim, r) <= 0 or exp_sign(lim, 1 / r) <= 0:
            return False
    return True


def delta_value(rows: Rows, benign: frozenset[int] = NONE) -> float:
    tot = table(rows)
    big_n = sum(tot)
    worst = 0.0
    for row in rows:
        n = sum(row)
        for i, (c, t) in enumerate(zip(row, tot, strict=True)):
            if t == 0 or i in benign:
                continue
            if c == 0:
                return math.inf
            worst = max(worst, abs(math.log(Fraction(c * big_n, n * t))))
    return worst
