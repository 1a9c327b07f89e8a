"""Prosecutor re-identification risk as a criterion a release must meet (and the anonymizers
can target): "the highest prosecutor risk is at most 0.05".

El Emam & Dankar (2008), the prosecutor scenario: the attacker knows that a person is in
the release and knows the person's quasi-identifiers, so a record of a group of ``f_j``
records is re-identified with probability ``1 / f_j``. Three limits, any of them, all must
hold (ARX's ``AverageReidentificationRisk`` with its relaxed variant, whose parameters are
the average risk, the highest risk and the records allowed above it):

* ``highest`` ``h`` in (0, 1]: every record's risk ``1 / f_j`` is at most ``h``; with
  ``records`` given, the limit may be exceeded by that share of the records instead;
* ``records`` ``r`` in [0, 1] (needs ``highest``): the share of records whose risk is
  strictly above ``h`` (the records "at risk", ARX ``RiskModelSampleSummary``'s strict
  ``1d / groupSize > threshold``) is at most ``r``;
* ``average`` ``a`` in (0, 1]: the average prosecutor risk (ARX's success rate ``J / n``,
  ``J`` groups of ``n`` records) is at most ``a``.

Every comparison is exact: the risks and shares are fractions of integers compared with the
decimal each limit prints as (:mod:`airflow_privacy.core.thresholds`).

Differences with ARX, deliberate (docs/risk.md): ARX turns ``highest`` into a smallest group
size rounded within 1% (``getSizeThreshold``: 0.0999 becomes groups of 10, a risk of 0.1
above the limit) and then counts the records of the groups of *at most* that size as at risk
(so a group whose risk equals ``highest`` counts as at risk, against the class's own
"records with a risk higher than the highest risk"); here ``highest`` is compared exactly and
"at risk" is strictly above it, as in ARX's risk summary.

All three measures fall when groups merge (a merged group is at least as large as each of
its parts, and the number of groups drops), so the criterion is monotone in the
generalization order; ``highest`` alone is a per-group test (``f_j >= 1 / h``), the other two
are shares of the whole release.

References: K. El Emam and F. K. Dankar, "Protecting privacy using k-anonymity", *Journal of
the American Medical Informatics Association* 15(5):627-637, 2008; K. El Emam, *Guide to the
De-Identification of Personal Health Information*, CRC Press, 2013; F. Prasser, F. Kohlmayer
et al., ARX, ``org.deidentifier.arx.criteria.AverageReidentificationRisk``.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core import thresholds
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError

__all__ = ["prosecutor_groups_pass", "prosecutor_risk_criterion", "smallest_safe_size"]

NAME = "prosecutor-risk"

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def _limit(name: str, x: object, low_open: bool) -> float:
    what = f"in {'(' if low_open else '['}0, 1]"
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise InputError(f"{NAME}: {name} must be a number {what}, got {x!r}")
    v = float(x)
    if not math.isfinite(v) or not ((v > 0 if low_open else v >= 0) and v <= 1):
        raise InputError(f"{NAME}: {name} must be {what}, got {x!r}")
    return v


def smallest_safe_size(highest: float) -> int:
    """The smallest group size ``f`` with ``1 / f`` at most ``highest`` (as written), in
    exact arithmetic: ``1 / 1e-320`` is no float, but ``10**320`` is a group size no release
    reaches."""
    return thresholds.smallest_size_at_most(highest)


def prosecutor_groups_pass(counts: IntArray, highest: float) -> BoolArray:
    """Groups (rows of ``counts``) whose records' risk ``1 / f_j`` is at most ``highest``:
    the per-group test of ``highest`` without ``records`` (exact, integers)."""
    out: BoolArray = counts.sum(axis=1) >= smallest_safe_size(highest)
    return out


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def prosecutor_risk_criterion(
    b: Bucketization,
    highest: float | None = None,
    records: float | None = None,
    average: float | None = None,
) -> CriterionResult:
    """Check the prosecutor-risk limits (module doc) on a release.

    ``value`` is the highest risk ``1 / min f_j`` when ``highest`` is given, else the average
    risk ``J / n``. The witness is the smallest group (its published label and size).
    """
    if not isinstance(b, Bucketization):
        raise InputError(f"expected a Bucketization, got {type(b).__name__}")
    if highest is None and average is None:
        raise InputError(f"criterion {NAME} needs highest or average")
    if records is not None and highest is None:
        raise InputError(
            f"{NAME}: records needs highest (the risk above which a record is at risk)"
        )
    h = None if highest is None else _limit("highest", highest, True)
    r = None if records is None else _limit("records", records, False)
    a = None if average is None else _limit("average", average, True)

    sizes = [int(s) for s in b.sizes]
    n, j = sum(sizes), len(sizes)
    g = int(np.argmin(b.sizes))
    smallest = sizes[g]
    label = b.group_label(g)
    top = Fraction(1, smallest)
    mean = Fraction(j, n)
    problems: list[str] = []
    params: dict[str, Any] = {}
    details: dict[str, Any] = {
        "groups": j,
        "records": n,
        "highest_risk": float(top),
        "average_risk": float(mean),
        **thresholds.decision_details(thresholds.EXACT),
    }
    if h is not None:
        params["highest"] = highest
        need = smallest_safe_size(h)
        at_risk = sum(s for s in sizes if s < need)  # risk 1/s above highest
        share = Fraction(at_risk, n)
        details.update(
            records_at_risk=float(share),
            n_records_at_risk=at_risk,
            smallest_safe_group=need,
        )
        if r is None:
            if not thresholds.at_most(top, h):
                n_groups = sum(1 for s in sizes if s < need)
                problems.append(
                    f"group '{label}' has {smallest} record{'s' if smallest != 1 else ''}, so "
                    f"a prosecutor re-identifies its records with probability 1/{smallest} = "
                    f"{_fmt(float(top))}, above highest = {_fmt(h)}"
                    + (f" ({n_groups} groups are below {need} records)" if n_groups > 1 else "")
                    + f": generalize until every group has at least {need} records"
                )
        else:
            params["records"] = records
            if not thresholds.at_most(share, r):
                problems.append(
                    f"{at_risk:,} of {n:,} records ({_fmt(100 * float(share))}%) are in groups "
                    f"of fewer than {need} records, where the prosecutor risk exceeds "
                    f"highest = {_fmt(h)}; at most records = {_fmt(100 * r)}% may be: "
                    f"generalize or suppress those groups (smallest: group '{label}')"
                )
    if a is not None:
        params["average"] = average
        if not thresholds.at_most(mean, a):
            problems.append(
                f"the average prosecutor risk is {j:,} groups / {n:,} records = "
                f"{_fmt(float(mean))}, above average = {_fmt(a)}: generalize until there are "
                f"at most {math.floor(a * n + 1e-12):,} groups"
            )
    safe = not problems
    if safe:
        parts = []
        if h is not None:
            parts.append(f"the highest prosecutor risk is 1/{smallest} = {_fmt(float(top))}")
        parts.append(f"the average is {_fmt(float(mean))}")
        reason = " and ".join(parts) + ": within the limits"
    else:
        reason = "; ".join(problems)
    return CriterionResult(
        criterion=NAME,
        safe=safe,
        parameters=params,
        value=float(top) if h is not None else float(mean),
        reason=reason,
        witness={"group": g, "label": label, "size": smallest},
        details=details,
    )
