"""Basic and enhanced beta-likeness: a cap on the *relative* gain in any value's frequency.

Cao, Karras, "Publishing microdata with a robust privacy guarantee" (PVLDB 5(11), 2012),
the definitions of beta-likeness. With ``P = (p_1, ..., p_m)`` the whole table's
distribution of the sensitive attribute and ``Q = (q_1, ..., q_m)`` a group's, the distance
of a value is the relative difference ``D(p_i, q_i) = (q_i - p_i) / p_i``, counted only for
the values whose frequency the group raises (``q_i > p_i``: a positive information gain).

* **basic beta-likeness**: a group satisfies it iff
  ``max{ D(p_i, q_i) : p_i < q_i } <= beta``; a table iff every group does.
* **enhanced beta-likeness**: the cap is ``min(beta, -ln p_i)`` instead of ``beta``, so
  that frequent values (``p_i > e^-beta``), whose basic cap would allow the group
  frequency to reach 1, are protected too: ``q_i <= p_i (1 - ln p_i) < 1``.

``value`` is the smallest ``beta`` the release achieves: ``max_g max_i D(p_i, q_i)`` over
the raised values (``0`` when every group has the table's distribution). For the enhanced
form the second cap ``-ln p_i`` does not depend on ``beta``: if some group raises a value
beyond it, no ``beta`` makes the release enhanced beta-like, and ``value`` is ``inf``
(``details`` then count the cells that break the ``-ln p_i`` cap). pyCANON's
``enhanced_beta_likeness`` reports ``min(basic beta, -ln min_i p_i)`` instead
(docs/distribution-criteria.md).

Exactness: ``D`` is the ratio of integers ``(c N - n T) / (n T)`` (``c`` of the group's
``n`` records, ``T`` of the table's ``N``), compared with ``beta`` as written; ``-ln p_i``
is transcendental and is compared with the exact ``D`` at a precision that separates them
(:mod:`airflow_privacy.core.criteria._distribution`). Floats decide outside the tolerance
band.

Facts for the anonymizers (``tests/core/criteria/test_criteria_beta_likeness.py``, by brute force):
both forms are monotone under merging groups and local given the table's distribution (each cap
bounds ``q_i`` linearly by a constant, and a merged group's ``q`` is a convex combination
of its parts'), neither is monotone with a suppression budget (suppressing records changes
the table's distribution; the test gives a lattice).

Benign values (``Bucketization.benign``, docs/distribution-criteria.md, "Benign values"):
the gain of a benign value is not a breach, so both caps apply to the non-benign values
only; the table's distribution ``P`` is unchanged (benign values count in it: it is the
table's distribution, only which values are protected changes).

Reasons and witnesses name groups by their published labels and never a sensitive value:
"one value makes up 40% of the group vs 10% in the table".
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core import thresholds
from airflow_privacy.core.criteria._distribution import (
    fractions_at_most,
    log_sign,
    protected,
    table_columns,
)
from airflow_privacy.core.criteria.classic import _as_given, _fmt, _plural
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError

__all__ = [
    "BASIC",
    "ENHANCED",
    "basic_beta_groups_pass",
    "basic_beta_likeness",
    "enhanced_beta_groups_pass",
    "enhanced_beta_likeness",
    "relative_gains",
]

BASIC = "basic-beta-likeness"
ENHANCED = "enhanced-beta-likeness"
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def _validate_beta(name: str, beta: object) -> float:
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real):
        raise InputError(f"{name}: beta must be a number > 0, got {beta!r}")
    x = float(beta)
    if not math.isfinite(x) or x <= 0:
        raise InputError(f"{name}: beta must be a number > 0, got {beta!r}")
    return x


def relative_gains(counts: IntArray, totals: IntArray) -> FloatArray:
    """``D(p_i, q_i) = q_i / p_i - 1`` for every group and every value of the table
    (columns with ``totals == 0`` dropped), as floats (``-1`` for an absent value)."""
    sub, tot, n_total = table_columns(counts, totals)
    sizes = sub.sum(axis=1).astype(np.float64)
    q = sub / sizes[:, None]
    p = tot / float(n_total)
    out: FloatArray = q / p[None, :] - 1.0
    return out


def _exact_gain(c: int, n: int, t: int, n_total: int) -> Fraction:
    return Fraction(c * n_total - n * t, n * t)


def _beta_cells(
    sub: IntArray, tot: IntArray, n_total: int, d: FloatArray, beta: float
) -> BoolArray:
    """Cellwise ``D <= beta`` (a value the group does not raise has ``D <= 0 < beta``)."""
    ok: BoolArray = np.asarray(d <= beta)
    sizes = sub.sum(axis=1)
    rows, cols = np.nonzero(np.abs(d - beta) <= thresholds.band(beta))
    if rows.size:
        # D = (c N - n T) / (n T), compared exactly with beta as written
        c, n, t = sub[rows, cols], sizes[rows], tot[cols]
        if int(sizes.max()) * n_total * 4 < 2**62:
            ok[rows, cols] = fractions_at_most(c * n_total - n * t, n * t, beta)
        else:
            for g, i in zip(rows.tolist(), cols.tolist(), strict=True):
                exact = _exact_gain(int(sub[g, i]), int(sizes[g]), int(tot[i]), n_total)
                ok[g, i] = thresholds.at_most(exact, beta)
    return ok


def _cap_cells(sub: IntArray, tot: IntArray, n_total: int, d: FloatArray) -> BoolArray:
    """Cellwise ``D <= -ln p_i`` where the group raises the value (``q_i > p_i``)."""
    cap = np.log(n_total / tot.astype(np.float64))
    ok: BoolArray = np.asarray(d <= cap[None, :])
    sizes = sub.sum(axis=1)
    width = thresholds.TOLERANCE * np.maximum(1.0, np.abs(cap))
    rows, cols = np.nonzero(np.abs(d - cap[None, :]) <= width[None, :])
    for g, i in zip(rows.tolist(), cols.tolist(), strict=True):
        exact = _exact_gain(int(sub[g, i]), int(sizes[g]), int(tot[i]), n_total)
        # ln(N / T) - D >= 0 (never 0: ln of a rational other than 1 is irrational)
        ok[g, i] = exact <= 0 or log_sign(Fraction(n_total, int(tot[i])), exact) >= 0
    return ok


def basic_beta_groups_pass(
    counts: IntArray, totals: IntArray, beta: float, benign: BoolArray | None = None
) -> BoolArray:
    """Per group, basic beta-likeness against the table distribution ``totals`` (Cao &
    Karras 2012, basic definition), decided exactly as :func:`basic_beta_likeness` decides;
    ``benign`` masks the columns of benign values, whose gains are not breaches."""
    beta = _validate_beta(BASIC, beta)
    sub, tot, n_total = table_columns(counts, totals)
    d = relative_gains(counts, totals)
    ok = _beta_cells(sub, tot, n_total, d, beta) | ~protected(totals, benign)[None, :]
    out: BoolArray = np.all(ok, axis=1)
    return out


def enhanced_beta_groups_pass(
    counts: IntArray, totals: IntArray, beta: float, benign: BoolArray | None = None
) -> BoolArray:
    """Per group, enhanced beta-likeness (Cao & Karras 2012: ``D <= min(beta, -ln p_i)`` for
    every raised value), decided exactly as :func:`enhanced_beta_likeness` decides;
    ``benign`` masks the columns of benign values, exempt from both caps."""
    beta = _validate_beta(ENHANCED, beta)
    sub, tot, n_total = table_columns(counts, totals)
    d = relative_gains(counts, totals)
    ok = _beta_cells(sub, tot, n_total, d, beta) & _cap_cells(sub, tot, n_total, d)
    out: BoolArray = np.all(ok | ~protected(totals, benign)[None, :], axis=1)
    return out


def _result(b: Bucketization, beta: float, enhanced: bool) -> CriterionResult:
    name = ENHANCED if enhanced else BASIC
    if not isinstance(b, Bucketization):
        raise InputError(f"expected a Bucketization, got {type(b).__name__}")
    beta = _validate_beta(name, beta)
    totals = b.counts.sum(axis=0)
    sub, tot, n_total = table_columns(b.counts, totals)
    d = relative_gains(b.counts, totals)
    exempt = ~protected(totals, b.benign_mask)[None, :]
    beta_ok = _beta_cells(sub, tot, n_total, d, beta) | exempt
    cap_ok = (_cap_cells(sub, tot, n_total, d) if enhanced else np.ones_like(beta_ok)) | exempt
    cells_ok = beta_ok & cap_ok
    passes = cells_ok.all(axis=1)
    judged = np.where(exempt, -np.inf, d)  # the gains that count: non-benign values only
    gains = np.maximum(judged.max(axis=1), 0.0)
    basic_value = float(gains.max())
    cap_broken = int((~cap_ok).sum())
    value = math.inf if cap_broken else basic_value
    failing = np.flatnonzero(~passes)
    n_fail = int(failing.size)
    safe = n_fail == 0
    if failing.size:
        # the failing group with the largest gain over a failing cell
        worst = np.where(~cells_ok, d, -np.inf).max(axis=1)
        g = int(failing[np.argmax(worst[failing])])
        j = int(np.argmax(np.where(~cells_ok[g], d[g], -np.inf)))
    else:
        g = int(np.argmax(gains))
        j = int(np.argmax(judged[g]))
    size = int(sub[g].sum())
    q = float(sub[g, j]) / size
    p = float(tot[j]) / n_total
    cap = min(beta, -math.log(p)) if enhanced else beta
    label = b.group_label(g)
    s = b.sensitive
    form = "enhanced" if enhanced else "basic"
    which = "non-benign value" if exempt.any() else "value"
    if safe:
        reason = (
            f"no group raises the frequency of any {which} of '{s}' by more than "
            f"{basic_value:.4g} times its frequency in the whole table (largest: group "
            f"'{label}'), so the release is {form} {_fmt(beta)}-like"
        )
    else:
        bound = f"min({_fmt(beta)}, -ln {p:.4g}) = {cap:.4g}" if enhanced else f"{_fmt(beta)}"
        more = f" ({n_fail} of {_plural(b.n_groups, 'group')} fail)" if n_fail > 1 else ""
        capped = (
            f"; the gain exceeds the -ln p cap, which no beta lifts, for "
            f"{_plural(cap_broken, 'value')} of a group"
            if cap_broken
            else ""
        )
        reason = (
            f"group '{label}': one value of '{s}' makes up {q:.1%} of its "
            f"{_plural(size, 'record')} vs {p:.1%} in the whole table (relative gain "
            f"{float(d[g, j]):.4g}); {form} {_fmt(beta)}-likeness allows at most {bound}"
            f"{more}{capped}: generalize the QI columns further"
        )
    details: dict[str, Any] = {
        "groups": b.n_groups,
        "failing_groups": n_fail,
        "max_relative_gain": basic_value,
        "distinct_values_in_table": int(tot.size),
        **b.benign_details(),
        **thresholds.decision_details(thresholds.EXACT_NEAR_LIMIT),
    }
    if enhanced:
        details["log_cap_violations"] = cap_broken
        details["min_table_share"] = float(tot.min()) / n_total
    return CriterionResult(
        criterion=name,
        safe=safe,
        parameters={"beta": _as_given(beta), **b.benign_parameters()},
        value=value,
        reason=reason,
        witness={
            "group": g,
            "label": label,
            "size": size,
            "relative_gain": float(d[g, j]),
            "group_share": q,
            "table_share": p,
        },
        details=details,
    )


def basic_beta_likeness(b: Bucketization, beta: float) -> CriterionResult:
    """Basic beta-likeness (Cao & Karras 2012; module doc). ``value`` is the
    largest relative gain ``(q_i - p_i) / p_i`` over groups and raised values; ``safe`` iff
    it is ``<= beta`` (exact). Raises :class:`InputError` unless ``beta > 0``."""
    return _result(b, beta, enhanced=False)


def enhanced_beta_likeness(b: Bucketization, beta: float) -> CriterionResult:
    """Enhanced beta-likeness (Cao & Karras 2012; module doc): every raised
    value has ``(q_i - p_i) / p_i <= min(beta, -ln p_i)``. ``value`` is the smallest
    ``beta`` that works (the basic value), ``inf`` when some gain exceeds its ``-ln p_i``
    cap. Raises :class:`InputError` unless ``beta > 0``."""
    return _result(b, beta, enhanced=True)
