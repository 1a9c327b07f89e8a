"""delta-disclosure privacy: every group's frequency of every value within a factor
``e^delta`` of the table's, both ways.

Brickell, Shmatikov, "The cost of privacy: destruction of data-mining utility in anonymized
data publishing" (KDD 2008), the definition of delta-disclosure privacy: an
equivalence class ``<t>`` is delta-disclosure-private with regard to the sensitive attribute
``S`` iff for every value ``s`` of ``S``, ``|log(p(<t>, s) / p(T, s))| < delta``, with
``p(<t>, s)`` the value's frequency in the class and ``p(T, s)`` in the whole table ``T``; a
table is delta-disclosure-private iff every class is. The inequality is strict, and the
quantifier runs over every value of the table: a value absent from a class has
``log 0 = -inf`` and breaks the bound for every ``delta`` (so a delta-disclosure-private
table has every value in every class). The logarithm is natural, as in pyCANON (ARX uses
base 2: its ``delta`` is ours divided by ``ln 2``).

``value`` is ``max_g max_s |ln(q_s / p_s)|`` (``inf`` when some group lacks a value of the
table): the release is delta-disclosure-private for exactly the ``delta > value``.
pyCANON's ``delta_disclosure`` skips the absent values (``x > 0``), so it reports the
maximum over the values a group holds: ``details["max_over_present_values"]``
(docs/distribution-criteria.md).

Exactness: ``ln(c N / (n T))`` of a rational other than 1 is transcendental and never equals
the rational ``delta`` as written; near the band its side is settled with :mod:`decimal`
logarithms at growing precision (:func:`airflow_privacy.core.criteria._distribution.log_sign`).

Facts for the anonymizers (``tests/core/criteria/test_criteria_delta_disclosure.py``): monotone
under merging groups and local given the table's distribution (each bound is the interval
``p e^-delta < q < p e^delta``, convex in ``q``); not monotone with a suppression budget.

Benign values (``Bucketization.benign``, docs/distribution-criteria.md, "Benign values"):
the bound applies to the non-benign values only (a group may lack "none", or hold more of
it, without a breach); the table's distribution ``p`` is unchanged, benign values included
(it is the table's distribution; only which values are protected changes).

Reasons and witnesses name groups by their published labels, never a sensitive value.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from airflow_privacy.core import thresholds
from airflow_privacy.core.criteria._distribution import log_sign, protected, table_columns
from airflow_privacy.core.criteria.classic import _as_given, _fmt, _plural
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError

__all__ = ["NAME", "delta_disclosure", "delta_disclosure_groups_pass", "log_ratios"]

NAME = "delta-disclosure"
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def _validate_delta(delta: object) -> float:
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise InputError(f"{NAME}: delta must be a number > 0, got {delta!r}")
    x = float(delta)
    if not math.isfinite(x) or x <= 0:
        raise InputError(f"{NAME}: delta must be a number > 0, got {delta!r}")
    return x


def log_ratios(counts: IntArray, totals: IntArray) -> FloatArray:
    """``|ln(q_s / p_s)|`` for every group and every value of the table (columns with
    ``totals == 0`` dropped), ``inf`` where the group lacks the value."""
    sub, tot, n_total = table_columns(counts, totals)
    sizes = sub.sum(axis=1).astype(np.float64)
    ratio = (sub / sizes[:, None]) / (tot / float(n_total))[None, :]
    with np.errstate(divide="ignore"):
        out: FloatArray = np.abs(np.log(ratio))
    return out


def _cells(sub: IntArray, tot: IntArray, n_total: int, lr: FloatArray, delta: float) -> BoolArray:
    ok: BoolArray = np.asarray(lr < delta)
    sizes = sub.sum(axis=1)
    limit = thresholds.exact_limit(delta)
    rows, cols = np.nonzero(np.isfinite(lr) & (np.abs(lr - delta) <= thresholds.band(delta)))
    for g, i in zip(rows.tolist(), cols.tolist(), strict=True):
        r = Fraction(int(sub[g, i]) * n_total, int(sizes[g]) * int(tot[i]))
        # |ln r| < delta  <=>  ln r < delta and ln(1/r) < delta
        ok[g, i] = log_sign(r, limit) < 0 and log_sign(1 / r, limit) < 0
    return ok


def delta_disclosure_groups_pass(
    counts: IntArray, totals: IntArray, delta: float, benign: BoolArray | None = None
) -> BoolArray:
    """Per group, whether ``|ln(q_s / p_s)| < delta`` for every value ``s`` of the table
    distribution ``totals`` (a value the group lacks fails), decided exactly as
    :func:`delta_disclosure` decides; ``benign`` masks the columns of benign values, which
    the bound does not apply to."""
    delta = _validate_delta(delta)
    sub, tot, n_total = table_columns(counts, totals)
    ok = _cells(sub, tot, n_total, log_ratios(counts, totals), delta)
    out: BoolArray = np.all(ok | ~protected(totals, benign)[None, :], axis=1)
    return out


def delta_disclosure(b: Bucketization, delta: float) -> CriterionResult:
    """delta-disclosure privacy (Brickell & Shmatikov 2008; module doc).

    ``value`` is the largest ``|ln(q_s / p_s)|`` over groups and values (``inf`` if a group
    lacks a value of the table); ``safe`` iff every cell is strictly below ``delta``
    (exact). Raises :class:`InputError` unless ``delta > 0``.
    """
    if not isinstance(b, Bucketization):
        raise InputError(f"expected a Bucketization, got {type(b).__name__}")
    delta = _validate_delta(delta)
    totals = b.counts.sum(axis=0)
    sub, tot, n_total = table_columns(b.counts, totals)
    exempt = ~protected(totals, b.benign_mask)[None, :]
    every = log_ratios(b.counts, totals)
    cells_ok = _cells(sub, tot, n_total, every, delta) | exempt
    lr = np.where(exempt, 0.0, every)  # benign values are not bounded
    passes = cells_ok.all(axis=1)
    failing = np.flatnonzero(~passes)
    n_fail = int(failing.size)
    safe = n_fail == 0
    value = float(lr.max())
    finite = np.where(np.isfinite(lr), lr, -np.inf)
    present_max = float(finite.max()) if np.isfinite(finite).any() else 0.0
    n_missing = int(((sub == 0) & ~exempt).sum())
    if failing.size:
        worst = np.where(~cells_ok, lr, -np.inf).max(axis=1)
        g = int(failing[np.argmax(worst[failing])])
        j = int(np.argmax(np.where(~cells_ok[g], lr[g], -np.inf)))
    else:
        g = int(np.argmax(lr.max(axis=1)))
        j = int(np.argmax(lr[g]))
    size = int(sub[g].sum())
    q = float(sub[g, j]) / size
    p = float(tot[j]) / n_total
    label = b.group_label(g)
    s = b.sensitive
    which = "non-benign value" if exempt.any() else "value"
    if safe:
        reason = (
            f"every group holds every {which} of '{s}' at between e^-{value:.4g} and "
            f"e^{value:.4g} times its frequency in the whole table (farthest: group "
            f"'{label}'), so the release is {_fmt(delta)}-disclosure private"
        )
    else:
        more = f" ({n_fail} of {_plural(b.n_groups, 'group')} fail)" if n_fail > 1 else ""
        if sub[g, j] == 0:
            what = (
                f"lacks a value of '{s}' that makes up {p:.1%} of the whole table (|ln 0| is "
                f"infinite)"
            )
        else:
            what = (
                f"has one value of '{s}' at {q:.1%} of its {_plural(size, 'record')} vs "
                f"{p:.1%} in the whole table (|ln ratio| = {float(lr[g, j]):.4g})"
            )
        reason = (
            f"group '{label}' {what}; {_fmt(delta)}-disclosure privacy needs every value in "
            f"every group with |ln ratio| below {_fmt(delta)}{more}: generalize the QI "
            f"columns further"
        )
    return CriterionResult(
        criterion=NAME,
        safe=safe,
        parameters={"delta": _as_given(delta), **b.benign_parameters()},
        value=value,
        reason=reason,
        witness={
            "group": g,
            "label": label,
            "size": size,
            "log_ratio": float(lr[g, j]),
            "group_share": q,
            "table_share": p,
        },
        details={
            "groups": b.n_groups,
            "failing_groups": n_fail,
            "max_over_present_values": present_max,
            "missing_cells": n_missing,
            "distinct_values_in_table": int(tot.size),
            **b.benign_details(),
            **thresholds.decision_details(thresholds.EXACT_NEAR_LIMIT),
        },
    )
