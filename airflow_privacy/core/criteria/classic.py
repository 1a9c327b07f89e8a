"""Classic syntactic privacy criteria, computed from a :class:`Bucketization` only.

These are the baselines every anonymization tool reports. Each check is a handful of
vectorized numpy operations on the ``groups x values`` count matrix ``counts[g, v]`` (the
``n_b(s)`` of Martin et al. 2007), so it costs ``O(groups x values)`` whatever the number of
records, and the same statistics can come from a file, an Arrow table or a warehouse
``GROUP BY`` (:meth:`Bucketization.from_counts`).

Definitions (docs/classic-criteria.md has the details and the differences with pyCANON):

* **k-anonymity** (Samarati & Sweeney 1998; Sweeney, "k-anonymity: a model for protecting
  privacy", IJUFKS 2002): every QI-group has at least ``k`` records.
* **distinct l-diversity** (Machanavajjhala, Gehrke, Kifer, Venkitasubramaniam,
  "l-Diversity: Privacy Beyond k-Anonymity", ICDE 2006 / TKDD 2007, section 4.1, the
  "distinct" instantiation): every group has at least ``l`` distinct sensitive values.
* **entropy l-diversity** (same paper, Definition 4.1): every group has
  ``-sum_s p(q*, s) log p(q*, s) >= log l``.
* **recursive (c,l)-diversity** (same paper, Definition 4.2): with the group's counts sorted
  ``r_1 >= r_2 >= ... >= r_m``, every group has ``r_1 < c (r_l + r_{l+1} + ... + r_m)``.
* **t-closeness** (Li, Li, Venkatasubramanian, "t-Closeness: Privacy Beyond k-Anonymity and
  l-Diversity", ICDE 2007, Definition 2 and section 4.2): the Earth Mover's Distance between
  every group's sensitive distribution and the whole table's is at most ``t``, with the
  equal ground distance for categorical values and the ordered distance for numerical ones.

Every check returns a :class:`CriterionResult` whose ``witness`` is the weakest group.
Reasons and witnesses name the group (its published label) and shares, never which
sensitive value a group holds: a failing check's reason goes to logs, XCom and the ledger
of a release that is not published, and "group 'zip=130**' has 'HIV' at 100%" would be
the very disclosure the check refused. The value is referred to by its rank in the group
("its most frequent value").

Verdicts at the threshold follow :mod:`airflow_privacy.core.thresholds`: integer values
(group sizes, distinct counts) are compared exactly; ratios of integers (the recursive
(c,l) ratio, the EMD) and the entropy test are computed in floats and settled exactly for
every group whose float value is within the tolerance band of the limit; only entropy
l-diversity with a fractional ``l`` is decided in floats, unsafe inside the band. Each
result states ``details["tolerance"]`` and ``details["decision"]``. The per-group tests
(:func:`entropy_groups_pass`, :func:`recursive_groups_pass`, :func:`t_closeness_groups_pass`)
are public so that the anonymizers can use the very same decisions.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core import thresholds
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError

__all__ = [
    "ENTROPY_REL_TOL",
    "distinct_l_diversity",
    "entropy_at_least",
    "entropy_groups_pass",
    "entropy_l_diversity",
    "k_anonymity",
    "recursive_cl_diversity",
    "recursive_groups_pass",
    "t_closeness",
    "t_closeness_groups_pass",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: Superseded: the relative tolerance the entropy l-diversity check used to *pass* groups
#: whose ``exp(H)`` fell short of ``l`` by less than one part in 10^9. The check now settles
#: such groups exactly (:func:`entropy_at_least`) and errs towards unsafe otherwise
#: (:mod:`airflow_privacy.core.thresholds`); the constant equals
#: :data:`~airflow_privacy.core.thresholds.TOLERANCE` and stays for older callers.
ENTROPY_REL_TOL = thresholds.TOLERANCE

# Above this bound the exact int64 numerators of the EMD could overflow; fall back to floats.
_EXACT_EMD_LIMIT = 2**62


# ---------------------------------------------------------------- validation


def _integer_param(name: str, x: object, minimum: int) -> int:
    """``x`` as an int ``>= minimum`` (integral floats such as ``5.0`` are accepted)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise InputError(f"{name} must be an integer >= {minimum}, got {x!r}")
    xf = float(x)
    if not math.isfinite(xf) or xf != math.floor(xf):
        raise InputError(f"{name} must be an integer >= {minimum}, got {x!r}")
    xi = int(xf) if not isinstance(x, numbers.Integral) else int(x)
    if xi < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {x!r}")
    return xi


def _real_param(name: str, x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise InputError(f"{name} must be a number, got {x!r}")
    xf = float(x)
    if not math.isfinite(xf):
        raise InputError(f"{name} must be a finite number, got {x!r}")
    return xf


def _as_given(x: float) -> float:
    """A parameter for ``parameters``: integral values as ``int`` (``3`` rather than ``3.0``)."""
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def _check_bucketization(b: object) -> Bucketization:
    if not isinstance(b, Bucketization):
        raise InputError(f"expected a Bucketization, got {type(b).__name__}")
    return b


# ------------------------------------------------------------------- helpers


def _fmt(x: float) -> str:
    """Compact number for messages: ``5``, ``0.2``, ``1.5``."""
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _failing_note(n_fail: int, n_groups: int) -> str:
    return f" ({n_fail} of {_plural(n_groups, 'group')} fail)" if n_fail > 1 else ""


# --------------------------------------------------------------- k-anonymity


def k_anonymity(b: Bucketization, k: int) -> CriterionResult:
    """k-anonymity: every QI-group has at least ``k`` records.

    Sweeney, "k-anonymity: a model for protecting privacy" (IJUFKS 10(5), 2002), Definition
    3: a release satisfies k-anonymity iff each sequence of QI values appears with at least
    ``k`` occurrences. ``value`` is the smallest group size (the largest ``k`` the release
    achieves); ``safe`` iff ``value >= k``. Raises :class:`InputError` unless ``k`` is an
    integer ``>= 1``.
    """
    b = _check_bucketization(b)
    k = _integer_param("k", k, 1)
    sizes = b.sizes
    g = int(np.argmin(sizes))
    value = int(sizes[g])
    failing = sizes < k
    n_fail = int(failing.sum())
    safe = thresholds.at_least(value, k)  # integers: exact
    label = b.group_label(g)
    if safe:
        reason = (
            f"every group has at least {_plural(value, 'record')} (smallest: group '{label}'), "
            f"so the release is {k}-anonymous"
        )
    else:
        reason = (
            f"group '{label}' has {_plural(value, 'record')}; {k}-anonymity needs at least {k}"
            f"{_failing_note(n_fail, b.n_groups)}: generalize or suppress the QI columns "
            f"({', '.join(b.group_columns)}) further"
        )
    return CriterionResult(
        criterion="k-anonymity",
        safe=safe,
        parameters={"k": k},
        value=value,
        reason=reason,
        witness={"group": g, "label": label, "size": value},
        details={
            "groups": b.n_groups,
            "records": b.n_records,
            "failing_groups": n_fail,
            "records_in_failing_groups": int(sizes[failing].sum()),
            "mean_group_size": float(b.n_records / b.n_groups),
            **thresholds.decision_details(thresholds.EXACT),
        },
    )


# ------------------------------------------------------- distinct l-diversity


def distinct_l_diversity(b: Bucketization, l: int) -> CriterionResult:  # noqa: E741
    """Distinct l-diversity: every group has at least ``l`` distinct sensitive values.

    Machanavajjhala et al., "l-Diversity: Privacy Beyond k-Anonymity" (ICDE 2006; TKDD 1(1),
    2007), section 4.1: the simplest instantiation of the l-diversity principle ("each
    q*-block contains at least l well-represented values", with well-represented read as
    distinct). ``value`` is the minimum over groups of the number of distinct values;
    ``safe`` iff ``value >= l``. Raises :class:`InputError` unless ``l`` is an integer
    ``>= 1``.
    """
    b = _check_bucketization(b)
    l = _integer_param("l", l, 1)  # noqa: E741
    distinct = (b.counts > 0).sum(axis=1)
    g = int(np.argmin(distinct))
    value = int(distinct[g])
    n_fail = int((distinct < l).sum())
    safe = thresholds.at_least(value, l)  # integers: exact
    label = b.group_label(g)
    s = b.sensitive
    if safe:
        reason = (
            f"every group has at least {value} distinct values of '{s}' (fewest: group "
            f"'{label}'), so the release is distinct {l}-diverse"
        )
    else:
        only = "only " if value > 1 else ""
        reason = (
            f"group '{label}' has {only}{_plural(value, 'distinct value')} of '{s}'; distinct "
            f"{l}-diversity needs at least {l}{_failing_note(n_fail, b.n_groups)}: merge it "
            f"with other groups by generalizing the QI columns further"
        )
    return CriterionResult(
        criterion="distinct-l-diversity",
        safe=safe,
        parameters={"l": l},
        value=value,
        reason=reason,
        witness={
            "group": g,
            "label": label,
            "distinct_values": value,
            "size": int(b.sizes[g]),
        },
        details={
            "groups": b.n_groups,
            "failing_groups": n_fail,
            "distinct_values_in_table": int((b.counts.sum(axis=0) > 0).sum()),
            **thresholds.decision_details(thresholds.EXACT),
        },
    )


# -------------------------------------------------------- entropy l-diversity


def _group_entropies(counts: IntArray) -> FloatArray:
    """Natural-log entropy of each row: ``log n - (1/n) sum_v c_v log c_v`` (``0 log 0 = 0``)."""
    c = counts.astype(np.float64)
    n = c.sum(axis=1)
    clogc = c * np.log(np.where(c > 0, c, 1.0))
    h: FloatArray = np.log(n) - clogc.sum(axis=1) / n
    # A single-valued group is exactly 0; rounding must not make any entropy negative.
    return np.maximum(h, 0.0)


# Reduced group sizes up to this are tested with plain integer powers (M^M has M log2 M
# bits: 22 kbit at 2,000); larger ones first with 80-digit logarithms.
_ENTROPY_BIGINT_MAX = 2000
_ENTROPY_DIGITS = 80


def entropy_at_least(row: Any, l: int) -> bool:  # noqa: E741
    """Exactly whether a group with counts ``row`` has entropy ``H >= log l`` (whole ``l``).

    Machanavajjhala et al. (TKDD 2007), Definition 4.1, in integers: with ``N = sum n_i``,
    ``H = log N - (1/N) sum n_i log n_i``, so ``H >= log l`` iff
    ``N^N >= l^N prod_i n_i^{n_i}``. Dividing every count by their gcd ``g`` leaves ``H``
    unchanged (both sides of the inequality are raised to the power ``g``), so the test runs
    on the reduced counts ``m_i = n_i / g``, ``M = N / g``: ``M^M >= l^M prod m_i^{m_i}``.
    A group of ``l`` equiprobable values gives equality and passes, as it must.

    Small ``M`` compare the integers. For large ``M`` (the integers have ``M log2 M`` bits)
    the sign of ``D = M ln M - M ln l - sum m_i ln m_i`` is first taken from 80-digit
    decimal logarithms (each correctly rounded, so ``D`` is known to about ``1e-65``); only
    when ``|D|`` is below ``1e-50`` (in practice: exact equality) are the integers compared.
    """
    counts = [int(x) for x in row if int(x) > 0]
    if not counts or int(l) < 1:
        raise InputError("entropy_at_least needs a non-empty group and a whole l >= 1")
    g = math.gcd(*counts)
    m = [x // g for x in counts]
    total: int = sum(m)
    if total > _ENTROPY_BIGINT_MAX:
        from decimal import Context, Decimal

        ctx = Context(prec=_ENTROPY_DIGITS)
        d = ctx.multiply(Decimal(total), ctx.ln(Decimal(total)))
        d = ctx.subtract(d, ctx.multiply(Decimal(total), ctx.ln(Decimal(int(l)))))
        for x in m:
            if x > 1:
                d = ctx.subtract(d, ctx.multiply(Decimal(x), ctx.ln(Decimal(x))))
        if abs(d) > Decimal("1e-50"):
            return d > 0
    rhs: int = int(l) ** total
    for x in m:
        if x > 1:
            rhs *= x**x
    lhs: int = total**total
    return lhs >= rhs


def entropy_groups_pass(counts: IntArray, l: float) -> BoolArray:  # noqa: E741
    """Per group, whether ``H_g >= log l`` (Definition 4.1), decided as
    :func:`entropy_l_diversity` decides it.

    The float ``exp(H_g)`` decides wherever it is outside the tolerance band around ``l``
    (:func:`airflow_privacy.core.thresholds.near`); inside it, a whole ``l`` is settled
    exactly with :func:`entropy_at_least`, and a fractional ``l`` fails (the float test of
    :func:`airflow_privacy.core.thresholds.at_least`, erring towards unsafe).
    """
    h = _group_entropies(counts)
    eff = np.exp(h)
    passes: BoolArray = eff >= l
    lim = thresholds.band(l)
    close = np.flatnonzero(np.abs(eff - l) <= lim)
    whole = float(l).is_integer()
    for g in close.tolist():
        passes[g] = (
            entropy_at_least(counts[g], int(l)) if whole else thresholds.at_least(float(eff[g]), l)
        )
    return passes


def entropy_l_diversity(b: Bucketization, l: float) -> CriterionResult:  # noqa: E741
    """Entropy l-diversity: every group's sensitive entropy is at least ``log l``.

    Machanavajjhala et al., "l-Diversity: Privacy Beyond k-Anonymity" (TKDD 2007),
    Definition 4.1: a table is entropy l-diverse iff for every q*-block
    ``-sum_s p(q*, s) log p(q*, s) >= log(l)``, with ``p(q*, s)`` the fraction of the block's
    records with sensitive value ``s`` (natural log; the base does not matter as long as both
    sides use it). ``value`` is ``min_g exp(H_g)``, the largest ``l`` the release achieves (a
    real number, ``1`` for a single-valued group). ``safe`` iff every group passes
    :func:`entropy_groups_pass`: exact (``N^N >= l^N prod n_i^{n_i}``) for a whole ``l``
    wherever the float entropy is within the tolerance band of ``log l`` (so a group with
    exactly ``l`` equiprobable values passes and one a hair below fails), the float test
    with the tolerance band, erring towards unsafe, for a fractional ``l``. Raises
    :class:`InputError` unless ``l`` is a real number ``>= 1``.
    """
    b = _check_bucketization(b)
    l = _real_param("l", l)  # noqa: E741
    if l < 1:
        raise InputError(f"l must be a number >= 1, got {l!r}")
    h = _group_entropies(b.counts)
    passes = entropy_groups_pass(b.counts, l)
    failing = np.flatnonzero(~passes)
    g = int(failing[np.argmin(h[failing])]) if failing.size else int(np.argmin(h))
    h_min = float(h.min())
    value = math.exp(h_min)
    n_fail = int(failing.size)
    safe = n_fail == 0
    label = b.group_label(g)
    s = b.sensitive
    share = float(b.counts[g].max() / b.sizes[g])
    g_value = math.exp(float(h[g]))
    if safe:
        reason = (
            f"every group's '{s}' distribution has entropy at least log({_fmt(value)}) "
            f"(lowest: group '{label}'), so the release is entropy {_fmt(l)}-diverse"
        )
    else:
        shown = f"{g_value:.3g}" if not thresholds.near(g_value, l) else f"{g_value:.12g}"
        reason = (
            f"group '{label}' has entropy log({shown}) < log({_fmt(l)}) in '{s}' "
            f"(its most frequent value is {share:.0%} of its "
            f"{_plural(int(b.sizes[g]), 'record')}); entropy "
            f"{_fmt(l)}-diversity needs its values spread more evenly"
            f"{_failing_note(n_fail, b.n_groups)}: generalize the QI columns further"
        )
    return CriterionResult(
        criterion="entropy-l-diversity",
        safe=safe,
        parameters={"l": _as_given(l)},
        value=value,
        reason=reason,
        witness={
            "group": g,
            "label": label,
            "entropy": float(h[g]),
            "effective_values": g_value,
            "size": int(b.sizes[g]),
            "distinct_values": int((b.counts[g] > 0).sum()),
            "most_frequent_share": share,
        },
        details={
            "groups": b.n_groups,
            "failing_groups": n_fail,
            "min_entropy": h_min,
            "required_entropy": math.log(l),
            **thresholds.decision_details(
                thresholds.EXACT_NEAR_LIMIT if l.is_integer() else thresholds.FLOAT
            ),
        },
    )


# ---------------------------------------------------- recursive (c,l)-diversity


def _recursive_ratio(r: IntArray, l: int) -> tuple[IntArray, IntArray, FloatArray]:  # noqa: E741
    """``r_1``, the tail ``r_l + ... + r_m`` and their ratio (``inf`` for an empty tail) of
    every group, from its sorted counts."""
    r1: IntArray = r[:, 0]
    tail: IntArray = r[:, l - 1 :].sum(axis=1) if l <= r.shape[1] else np.zeros_like(r1)
    with np.errstate(divide="ignore"):
        ratio: FloatArray = np.where(tail > 0, r1 / np.where(tail > 0, tail, 1), np.inf)
    return r1, tail, ratio


def recursive_groups_pass(counts: IntArray, c: float, l: int) -> BoolArray:  # noqa: E741
    """Per group, whether ``r_1 < c (r_l + ... + r_m)`` (Definition 4.2), decided as
    :func:`recursive_cl_diversity` decides it: the float ratio wherever it is outside the
    tolerance band around ``c``, exactly inside it (``r_1 / tail < c`` with
    :func:`airflow_privacy.core.thresholds.below`, ``c`` read as the decimal it was written
    as)."""
    r = -np.sort(-np.asarray(counts, dtype=np.int64), axis=1)
    r1, tail, ratio = _recursive_ratio(r, l)
    passes: BoolArray = ratio < c
    close = np.flatnonzero(np.isfinite(ratio) & (np.abs(ratio - c) <= thresholds.band(c)))
    for g in close.tolist():
        passes[g] = thresholds.below(Fraction(int(r1[g]), int(tail[g])), c)
    return passes


def recursive_cl_diversity(b: Bucketization, c: float, l: int) -> CriterionResult:  # noqa: E741
    """Recursive (c,l)-diversity: in every group ``r_1 < c (r_l + ... + r_m)``.

    Machanavajjhala et al., "l-Diversity: Privacy Beyond k-Anonymity" (TKDD 2007),
    Definition 4.2: with ``r_i`` the number of times the i-th most frequent sensitive value
    appears in a q*-block (``r_1 >= r_2 >= ... >= r_m``), the block is recursive
    (c,l)-diverse iff ``r_1 < c (r_l + r_{l+1} + ... + r_m)``. A block with fewer than ``l``
    distinct values has an empty tail and fails for every ``c``.

    ``value`` is ``max_g r_1 / (r_l + ... + r_m)``: the infimum of the ``c`` that make the
    release recursive (c,l)-diverse for this ``l`` (any ``c`` strictly above it works); it is
    ``inf`` when some group has fewer than ``l`` distinct values. ``safe`` iff every group
    passes :func:`recursive_groups_pass`: the ratio of integers is compared with ``c``
    exactly wherever it is close to ``c`` (``c`` read as the decimal it was written as,
    :func:`airflow_privacy.core.thresholds.exact_limit`), so a ratio equal to ``c``
    written as a decimal (``1/10`` and ``c=0.1``, although ``Fraction(0.1) > 1/10``) fails,
    as the strict inequality says. Raises :class:`InputError` unless ``c > 0`` and ``l`` is
    an integer ``>= 1``.
    """
    b = _check_bucketization(b)
    c = _real_param("c", c)
    if c <= 0:
        raise InputError(f"c must be a number > 0, got {c!r}")
    l = _integer_param("l", l, 1)  # noqa: E741
    r = b.sorted_counts()
    r1, tail, ratio = _recursive_ratio(r, l)
    distinct = (r > 0).sum(axis=1)
    passes = recursive_groups_pass(b.counts, c, l)
    failing = np.flatnonzero(~passes)
    g = int(failing[np.argmax(ratio[failing])]) if failing.size else int(np.argmax(ratio))
    value = float(ratio.max())
    n_fail = int(failing.size)
    n_short = int((distinct < l).sum())
    safe = n_fail == 0
    label = b.group_label(g)
    s = b.sensitive
    r1g, tailg, dg = int(r1[g]), int(tail[g]), int(distinct[g])
    name = f"recursive ({_fmt(c)},{l})-diversity"
    if safe:
        reason = (
            f"in every group the most frequent value of '{s}' is less than {_fmt(c)} times the "
            f"records outside its {l - 1} most frequent values (tightest: group '{label}', "
            f"ratio {value:.4g}), so the release is recursive ({_fmt(c)},{l})-diverse"
        )
    elif tailg == 0:
        only = "only " if dg > 1 else ""
        reason = (
            f"group '{label}' has {only}{_plural(dg, 'distinct value')} of '{s}'; {name} needs "
            f"at least {l}{_failing_note(n_fail, b.n_groups)}: generalize the QI columns further"
        )
    else:
        from_l = f"from the {_ordinal(l)} most frequent on" if l > 1 else "in all"
        reason = (
            f"group '{label}' has its most frequent value {r1g} times but only "
            f"{_plural(tailg, 'record')} {from_l}; "
            f"{name} needs {r1g} < {_fmt(c)} x {tailg}{_failing_note(n_fail, b.n_groups)}: "
            f"generalize the QI columns further or raise c above {value:.4g}"
        )
    return CriterionResult(
        criterion="recursive-cl-diversity",
        safe=safe,
        parameters={"c": _as_given(c), "l": l},
        value=value,
        reason=reason,
        witness={
            "group": g,
            "label": label,
            "r1": r1g,
            "tail": tailg,
            "ratio": float(ratio[g]),
            "distinct_values": dg,
            "size": int(b.sizes[g]),
        },
        details={
            "groups": b.n_groups,
            "failing_groups": n_fail,
            "groups_with_fewer_than_l_values": n_short,
            **thresholds.decision_details(thresholds.EXACT_NEAR_LIMIT),
        },
    )


# -------------------------------------------------------------- t-closeness


def t_closeness_ground(
    labels: Sequence[str], ordered: bool | None, sensitive: str | None
) -> tuple[bool, IntArray | None]:
    """The ground distance of t-closeness over the values present (Li et al. 2007, section
    4.2), decided once for the check and for the anonymizers' group test: ``(ordered, order)``
    where ``ordered`` says whether the ordered distance applies (``None``: iff every label is
    a finite number) and ``order`` sorts the labels numerically (None for the equal
    distance). ``ordered=True`` with a label that is not a number is bad input naming how
    many are not."""
    numeric = _numeric_labels(tuple(labels))
    if ordered and numeric is None:
        bad = sum(_numeric_labels((v,)) is None for v in labels)
        what = repr(sensitive) if sensitive else "the sensitive column"
        raise InputError(
            f"ordered=True needs numeric values of {what}, but {bad} of its "
            f"{len(labels)} values are not numbers"
        )
    use_ordered = numeric is not None if ordered is None else bool(ordered)
    if use_ordered and numeric is not None:
        return True, np.argsort(np.asarray(numeric, dtype=np.float64), kind="stable")
    return use_ordered, None


def _numeric_labels(values: tuple[str, ...]) -> list[float] | None:
    """The labels as finite floats, or ``None`` if any does not parse as one."""
    out: list[float] = []
    for v in values:
        try:
            x = float(v)
        except (TypeError, ValueError):
            return None
        if not math.isfinite(x):
            return None
        out.append(x)
    return out


def _emd_per_group(counts: IntArray, ordered: bool) -> FloatArray:
    """EMD between each row's distribution and the column totals' distribution.

    ``counts`` has only the table's present values, in ground order when ``ordered``. With
    ``n_g`` the group size and ``N``, ``C_v`` the table size and totals, the per-value
    difference ``p_gv - q_v`` is ``(c_gv N - C_v n_g) / (n_g N)``: its numerators are
    integers, so the EMD is one division of exact integers (correctly rounded) whenever they
    fit in int64, and a plain float computation otherwise.
    """
    sizes = counts.sum(axis=1)
    totals = counts.sum(axis=0)
    n_total = int(totals.sum())
    m = counts.shape[1]
    if m <= 1:
        return np.zeros(counts.shape[0], dtype=np.float64)
    exact = m * n_total * n_total < _EXACT_EMD_LIMIT
    if exact:
        diff = counts * n_total - sizes[:, None] * totals[None, :]
        if ordered:
            num = np.abs(np.cumsum(diff, axis=1)).sum(axis=1)
            den = sizes * n_total * (m - 1)
        else:
            num = np.abs(diff).sum(axis=1)
            den = 2 * sizes * n_total
        out: FloatArray = num / den
        return out
    p = counts / sizes[:, None].astype(np.float64)
    q = totals / float(n_total)
    d = p - q[None, :]
    if ordered:
        res: FloatArray = np.abs(np.cumsum(d, axis=1)).sum(axis=1) / (m - 1)
    else:
        res = 0.5 * np.abs(d).sum(axis=1)
    return res


def _exact_emd(row: IntArray, totals: IntArray, ordered: bool) -> Fraction:
    """The EMD of one group to the table, as an exact fraction (Python integers, no overflow):
    ``p_v - q_v = (c_v N - C_v n) / (n N)`` (Li et al. 2007, section 4.2)."""
    cs = [int(x) for x in row]
    ts = [int(x) for x in totals]
    n, big_n, m = sum(cs), sum(ts), len(cs)
    if m <= 1:
        return Fraction(0)
    diff = [cv * big_n - tv * n for cv, tv in zip(cs, ts, strict=True)]
    if ordered:
        run, num = 0, 0
        for d in diff:
            run += d
            num += abs(run)
        return Fraction(num, n * big_n * (m - 1))
    return Fraction(sum(abs(d) for d in diff), 2 * n * big_n)


def t_closeness_groups_pass(counts: IntArray, t: float, ordered: bool) -> BoolArray:
    """Per group, whether its EMD to the table is at most ``t`` (Li et al. 2007, Definition
    2), decided as :func:`t_closeness` decides it.

    ``counts`` holds only the values present in the table, in ground order when ``ordered``.
    The float EMD decides wherever it is outside the tolerance band around ``t``; inside it
    the EMD is recomputed as an exact fraction and compared with
    :func:`airflow_privacy.core.thresholds.at_most` (``t`` read as the decimal it was
    written as), so an EMD equal to ``t`` passes and one a hair above fails.
    """
    emd = _emd_per_group(counts, ordered)
    passes: BoolArray = emd <= t
    totals = counts.sum(axis=0)
    for g in np.flatnonzero(np.abs(emd - t) <= thresholds.band(t)).tolist():
        passes[g] = thresholds.at_most(_exact_emd(counts[g], totals, ordered), t)
    return passes


def t_closeness(b: Bucketization, t: float, ordered: bool | None = None) -> CriterionResult:
    """t-closeness: every group's sensitive distribution is within EMD ``t`` of the table's.

    Li, Li, Venkatasubramanian, "t-Closeness: Privacy Beyond k-Anonymity and l-Diversity"
    (ICDE 2007), Definition 2, with the Earth Mover's Distance of section 4.2 between a
    group's distribution ``P`` and the whole table's ``Q`` over the ``m`` values present in
    the table:

    * equal ground distance (categorical values, ``ordered=False``): every two values are at
      distance 1, and ``EMD = 1/2 sum_i |p_i - q_i|`` (total variation distance);
    * ordered distance (numerical or ordinal values, ``ordered=True``): the i-th and j-th
      smallest values are at distance ``|i - j| / (m - 1)``, and
      ``EMD = 1/(m-1) sum_i |sum_{j<=i} (p_j - q_j)|`` with values sorted numerically.

    ``ordered=None`` (auto) uses the ordered distance iff every value label parses as a
    finite number; ``ordered=True`` requires that. With ``m = 1`` every distribution is the
    table's and the EMD is 0. ``value`` is the largest EMD over groups; ``safe`` iff
    ``value <= t``. The EMD is computed as one correctly rounded division of exact integers,
    so a group whose EMD equals ``t`` written as a decimal passes. Raises
    :class:`InputError` unless ``0 <= t <= 1``.
    """
    b = _check_bucketization(b)
    t = _real_param("t", t)
    if not 0.0 <= t <= 1.0:
        raise InputError(f"t must be a number between 0 and 1, got {t!r}")
    if ordered is not None and not isinstance(ordered, bool | np.bool_):
        raise InputError(f"ordered must be True, False or None (auto), got {ordered!r}")
    present = np.flatnonzero(b.counts.sum(axis=0) > 0)
    labels = tuple(b.values[int(v)] for v in present)
    use_ordered, order = t_closeness_ground(labels, ordered, b.sensitive)
    cols = present if order is None else present[order]
    counts = b.counts[:, cols]
    emd = _emd_per_group(counts, use_ordered)
    passes = t_closeness_groups_pass(counts, t, use_ordered)
    failing = np.flatnonzero(~passes)
    g = int(failing[np.argmax(emd[failing])]) if failing.size else int(np.argmax(emd))
    value = float(emd.max())
    n_fail = int(failing.size)
    safe = n_fail == 0

    # Explain the worst group: the value whose share differs most from the table's (named
    # by nothing but its shares, module doc).
    sizes = b.sizes
    p = counts[g] / float(sizes[g])
    q = counts.sum(axis=0) / float(b.n_records)
    j = int(np.argmax(np.abs(p - q)))
    label = b.group_label(g)
    s = b.sensitive
    distance = "ordered" if use_ordered else "equal"
    if safe:
        reason = (
            f"every group's '{s}' distribution is within EMD {value:.4g} of the whole table's "
            f"({distance} distance; farthest: group '{label}'), so the release is "
            f"{_fmt(t)}-close"
        )
    else:
        reason = (
            f"group '{label}': one sensitive value makes up {p[j]:.1%} of its "
            f"{_plural(int(sizes[g]), 'record')} vs {q[j]:.1%} in the whole table (EMD "
            f"{value:.4g} with the {distance} distance); {_fmt(t)}-closeness needs at most "
            f"{_fmt(t)}{_failing_note(n_fail, b.n_groups)}: generalize the QI columns further"
        )
    witness: dict[str, Any] = {
        "group": g,
        "label": label,
        "emd": float(emd[g]),
        "size": int(sizes[g]),
        "group_share": float(p[j]),
        "table_share": float(q[j]),
    }
    return CriterionResult(
        criterion="t-closeness",
        safe=safe,
        parameters={"t": _as_given(t), "ordered": ordered},
        value=value,
        reason=reason,
        witness=witness,
        details={
            "groups": b.n_groups,
            "failing_groups": n_fail,
            "ground_distance": distance,
            "distinct_values_in_table": len(labels),
            "mean_emd": float(np.average(emd, weights=sizes)),
            **thresholds.decision_details(thresholds.EXACT_NEAR_LIMIT),
        },
    )
