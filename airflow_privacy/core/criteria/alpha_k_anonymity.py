"""(alpha,k)-anonymity: k-anonymity plus a cap ``alpha`` on every group's share of a value.

Wong, Li, Fu, Wang, "(alpha, k)-anonymity: an enhanced k-anonymity model for privacy
preserving data publishing" (KDD 2006), the problem definition: a view is (alpha,k)-anonymous
when it is k-anonymous (every equivalence class has at least ``k`` records) and satisfies
the alpha-deassociation requirement: in every equivalence class ``E`` the
relative frequency ``|(E, s)| / |E|`` of the sensitive value ``s`` is at most ``alpha``.
The paper states the requirement for one designated sensitive value and, in its general
form, for every value of the sensitive attribute (each value is then protected): here
``sensitive_value=None`` (the default) caps every value, and ``sensitive_value="..."`` caps
that one value only (for example the one harmful value of a survey where the other answers
are benign).

``value`` is the largest share that occurs (the smallest ``alpha`` the release achieves,
for the capped value(s)); ``details["k_achieved"]`` is the smallest group size. The verdict
compares integers: sizes exactly, shares ``c / n`` as exact fractions against ``alpha`` as
written (:mod:`airflow_privacy.core.thresholds`), so a share of exactly ``alpha`` passes.

Facts for the anonymizers (checked by brute force in
``tests/core/criteria/test_criteria_alpha_k.py``):
monotone under merging groups (sizes add up; the share of a merged group is the mediant of
its parts' shares, at most the larger one); local (the release passes iff every group does);
not monotone with a suppression budget (a passing group merged with a homogeneous one can
exceed ``alpha``; the test gives a lattice).

Benign values (``Bucketization.benign``, docs/distribution-criteria.md, "Benign values"):
a value whose disclosure is not a breach is exempt from the cap, so in the every-value form
the cap applies to the non-benign values only (a group that is all "none" passes the alpha
part); the k part is unchanged. A designated ``sensitive_value`` that is also declared
benign is bad input naming both parameters (the cap would protect nothing).

Reasons and witnesses name the group by its published label and never the value (module
doc of :mod:`airflow_privacy.core.criteria.classic`): in the every-value form the value is
"its most frequent value". In the designated form the user's parameter names the value, so
a named group's share of it would disclose it: the reason only counts the groups above
``alpha`` and the witness names the smallest group (the k part) with that count.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core import thresholds
from airflow_privacy.core.criteria._distribution import ratio_at_most
from airflow_privacy.core.criteria.classic import _as_given, _fmt, _plural
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError, opt

__all__ = ["NAME", "alpha_k_anonymity", "alpha_k_groups_pass", "validate_alpha_k"]

NAME = "alpha-k-anonymity"
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def validate_alpha_k(alpha: object, k: object) -> tuple[float, int]:
    """``alpha`` in ``(0, 1]`` and ``k`` an integer ``>= 1`` (integral floats accepted)."""
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, numbers.Real)
        or not 0.0 < float(alpha) <= 1.0
    ):
        raise InputError(f"{NAME}: alpha must be a number in (0, 1], got {alpha!r}")
    if (
        isinstance(k, bool)
        or not isinstance(k, numbers.Real)
        or not float(k).is_integer()
        or float(k) < 1
    ):
        raise InputError(f"{NAME}: k must be an integer >= 1, got {k!r}")
    return float(alpha), int(float(k))


def _capped(counts: IntArray, column: int | None, benign: BoolArray | None = None) -> IntArray:
    """Per group, the count of the capped value: the designated column, or the largest
    non-benign one (``benign``: a mask over the columns; 0 when every value is benign)."""
    if column is None:
        if benign is not None and benign.any():
            counts = np.where(benign[None, :], 0, counts)
        out: IntArray = counts.max(axis=1)
        return out
    if not 0 <= column < counts.shape[1]:
        raise InputError(f"{NAME}: value column {column} is not a column of the counts")
    out = np.ascontiguousarray(counts[:, column])
    return out


def alpha_k_groups_pass(
    counts: IntArray,
    totals: IntArray,
    alpha: float,
    k: int,
    column: int | None = None,
    benign: BoolArray | None = None,
) -> BoolArray:
    """Per group, whether it has ``>= k`` records and its capped share is ``<= alpha``
    (exactly as :func:`alpha_k_anonymity` decides; ``totals``, the table's distribution, is
    not needed by this criterion and accepted for a uniform signature). ``column`` is the
    designated value's column, ``None`` for every value; ``benign`` masks the columns of
    benign values, exempt from the cap of the every-value form."""
    alpha, k = validate_alpha_k(alpha, k)
    counts = np.asarray(counts, dtype=np.int64)
    sizes = counts.sum(axis=1)
    ok: BoolArray = sizes >= k
    ok &= ratio_at_most(_capped(counts, column, benign), np.maximum(sizes, 1), alpha)
    return ok


def check_designated_not_benign(sensitive_value: str | None, benign: frozenset[str]) -> None:
    """A designated value that is also declared benign is bad input naming both."""
    if sensitive_value is not None and sensitive_value in benign:
        raise InputError(
            f"{NAME}: the designated sensitive_value is also declared benign "
            f"({opt('benign')}): a benign value has no cap; drop it from one of the two"
        )


def alpha_k_anonymity(
    b: Bucketization, alpha: float, k: int, sensitive_value: str | None = None
) -> CriterionResult:
    """(alpha,k)-anonymity (Wong et al. 2006; module doc).

    ``value`` is the largest share of the capped value(s) in any group; ``safe`` iff every
    group has at least ``k`` records and a share ``<= alpha`` (exact). Raises
    :class:`InputError` unless ``0 < alpha <= 1``, ``k`` is an integer ``>= 1`` and
    ``sensitive_value`` is ``None`` or a string.
    """
    if not isinstance(b, Bucketization):
        raise InputError(f"expected a Bucketization, got {type(b).__name__}")
    alpha, k = validate_alpha_k(alpha, k)
    if sensitive_value is not None and not isinstance(sensitive_value, str):
        raise InputError(
            f"{NAME}: sensitive_value must be a value of the sensitive column (a string) or "
            f"omitted, got {type(sensitive_value).__name__}"
        )
    check_designated_not_benign(sensitive_value, b.benign)
    designated = sensitive_value is not None
    column: int | None = None
    present = True
    counts = b.counts
    mask = b.benign_mask
    if designated:
        if sensitive_value in b.values:
            column = b.values.index(sensitive_value)
        else:
            present = False
            counts = np.concatenate([counts, np.zeros((b.n_groups, 1), dtype=np.int64)], axis=1)
            mask = np.append(mask, False)
            column = counts.shape[1] - 1
    sizes = b.sizes
    capped = _capped(counts, column, mask)
    shares = capped / sizes.astype(np.float64)
    passes = alpha_k_groups_pass(counts, counts.sum(axis=0), alpha, k, column, mask)
    failing = np.flatnonzero(~passes)
    value = float(shares.max())
    k_achieved = int(sizes.min())
    n_fail = int(failing.size)
    safe = n_fail == 0
    s = b.sensitive
    name = f"({_fmt(alpha)},{k})-anonymity"
    anon = f"({_fmt(alpha)},{k})-anonymous"
    more = f" ({n_fail} of {_plural(b.n_groups, 'group')} fail)" if n_fail > 1 else ""
    advice = (
        f"generalize the QI columns ({', '.join(b.group_columns)}) further so that groups "
        f"grow and mix"
    )
    witness: dict[str, Any]
    if designated:
        # The parameter names the value, so a named group's share of it would disclose it:
        # the witness names the smallest group (the k part) and only counts the groups
        # above alpha.
        over = int((~ratio_at_most(capped, sizes, alpha)).sum())
        g = int(np.argmin(sizes))
        label = b.group_label(g)
        witness = {"group": g, "label": label, "size": int(sizes[g]), "groups_over_alpha": over}
        if safe and not present:
            reason = (
                f"every group has at least {_plural(k_achieved, 'record')} and the designated "
                f"value of '{s}' does not occur in the release, so it is {anon}"
            )
        elif safe:
            reason = (
                f"every group has at least {_plural(k_achieved, 'record')} and no group's "
                f"share of the designated value of '{s}' exceeds {_fmt(alpha)}, so the "
                f"release is {anon}"
            )
        else:
            problems = []
            if k_achieved < k:
                problems.append(
                    f"group '{label}' has {_plural(k_achieved, 'record')} (k={k} needs at "
                    f"least {k})"
                )
            if over:
                problems.append(
                    f"{over} of {_plural(b.n_groups, 'group')} hold more than {_fmt(alpha)} "
                    f"of the designated value of '{s}' (not named: that would disclose it)"
                )
            reason = f"{' and '.join(problems)}; {name} fails: {advice}"
        return _result(b, alpha, k, sensitive_value, safe, value, reason, witness, n_fail)
    # weakest group: among failing ones the largest share (then the smallest size)
    which = "non-benign value" if b.benign_mask.any() else "value"
    pool = failing if failing.size else np.arange(b.n_groups)
    order = np.lexsort((sizes[pool], -shares[pool]))
    g = int(pool[order[0]])
    label = b.group_label(g)
    if safe:
        reason = (
            f"every group has at least {_plural(k_achieved, 'record')} and no group's share of "
            f"any {which} of '{s}' exceeds {_fmt(alpha)}, so the release is {anon}"
        )
    else:
        size_g = int(sizes[g])
        problems = []
        if size_g < k:
            problems.append(f"it has {_plural(size_g, 'record')} (k={k} needs at least {k})")
        if not bool(ratio_at_most(capped[g : g + 1], sizes[g : g + 1], alpha)[0]):
            problems.append(
                f"its most frequent {which} of '{s}' makes up more than {_fmt(alpha)} of its "
                f"records ({shares[g]:.1%})"
            )
        reason = f"group '{label}': {' and '.join(problems)}; {name} fails{more}: {advice}"
    witness = {
        "group": g,
        "label": label,
        "size": int(sizes[g]),
        "most_frequent_share": float(shares[g]),
    }
    return _result(b, alpha, k, sensitive_value, safe, value, reason, witness, n_fail)


def _result(
    b: Bucketization,
    alpha: float,
    k: int,
    sensitive_value: str | None,
    safe: bool,
    value: float,
    reason: str,
    witness: dict[str, Any],
    n_fail: int,
) -> CriterionResult:
    designated = sensitive_value is not None
    details: dict[str, Any] = {
        "groups": b.n_groups,
        "failing_groups": n_fail,
        "k_achieved": int(b.sizes.min()),
        "alpha_achieved": value,
        "capped_values": "designated"
        if designated
        else ("every non-benign value" if b.benign_mask.any() else "every value"),
        **b.benign_details(),
        **thresholds.decision_details(thresholds.EXACT_NEAR_LIMIT),
    }
    params: dict[str, Any] = {"alpha": _as_given(alpha), "k": k}
    if designated:
        params["sensitive_value"] = sensitive_value
    params.update(b.benign_parameters())
    return CriterionResult(
        criterion=NAME,
        safe=safe,
        parameters=params,
        value=value,
        reason=reason,
        witness=witness,
        details=details,
    )
