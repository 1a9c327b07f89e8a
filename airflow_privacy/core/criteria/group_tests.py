"""Single-group tests: which groups of a ``groups x values`` count matrix pass on their own.

The anonymizers need a verdict on single groups (Mondrian's candidate halves, the groups a
suppression budget removes, the people of an algorithm-aware disclosure set). For the
*local* criteria (:class:`~airflow_privacy.core.criteria.base.Monotonicity`) these are
vectorized tests, and each is the criterion's own per-group verdict: entropy l-diversity,
recursive (c,l)-diversity and t-closeness call the verdict helpers of
:mod:`airflow_privacy.core.criteria.classic` (``entropy_groups_pass``,
``recursive_groups_pass``, the decision of ``t_closeness_groups_pass`` against the table's
totals), negation-safety compares its ratio with :mod:`airflow_privacy.core.thresholds` as
its check does. So near a threshold (a group a hair below ``log l``, a ratio equal to ``c``
as written) the anonymizer decides exactly as the re-check of its release will: it never
publishes a group that the check then refuses. ``tests/core/anonymize/test_anonymize_criteria.py``
checks that the two agree, on random inputs and near ties. For (c,k)-safety a single group's own
maximum disclosure is a necessary condition (the adversary can put all his knowledge in that
group; Martin et al. 2007), computed by the criterion itself once per distinct count row;
the same holds for the skyline criterion (Chen et al. 2007: every placement inside one group
is also open to the adversary when there are more groups).

Benign values (docs/anonymizers.md, "Benign values"): :func:`alone` builds its one-group
releases ``.with_benign(...)`` and :func:`negation` uses the benign-aware closed form of
docs/worst-case-engine.md, so with declared benign values too the anonymizer decides as the
re-check with them does (``tests/core/criteria/test_criteria_benign.py``).

Each criterion class picks its test here (``Criterion.group_test``); the classes import
this module only when an anonymizer asks, so the registry stays cheap to import.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core import thresholds
from airflow_privacy.core.criteria.classic import (
    _exact_emd,
    entropy_groups_pass,
    recursive_groups_pass,
    t_closeness_ground,
)
from airflow_privacy.core.model import Bucketization

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.base import Criterion, GroupTest

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def _sizes(counts: IntArray) -> IntArray:
    out: IntArray = counts.sum(axis=1)
    return out


def _sorted_desc(counts: IntArray) -> IntArray:
    out: IntArray = -np.sort(-counts, axis=1)
    return out


def _counted(counts: npt.NDArray[Any]) -> bool:
    """Whole counts (groups of records, or of worlds), which the criteria's verdict helpers
    decide exactly near a threshold. The algorithm-aware audit also asks about distributions
    (floats summing to 1, ``Predicate.within_error``): those are compared in floats, with
    the tolerance band of :mod:`airflow_privacy.core.thresholds` counted as failing."""
    return bool(np.issubdtype(counts.dtype, np.integer))


def _float_verdicts(
    values: npt.NDArray[np.float64], limit: float, compare: Callable[[float, float], bool]
) -> BoolArray:
    out: BoolArray = np.fromiter(
        (compare(float(v), limit) for v in values), dtype=bool, count=values.shape[0]
    )
    return out


def k_anonymity(k: int) -> GroupTest:
    """A group passes k-anonymity alone iff it holds at least ``k`` records."""

    def test(counts: IntArray, totals: IntArray) -> BoolArray:
        out: BoolArray = _sizes(counts) >= int(k)
        return out

    return test


def distinct(l: float) -> GroupTest:  # noqa: E741
    """At least ``l`` distinct values in the group."""

    def test(counts: IntArray, totals: IntArray) -> BoolArray:
        out: BoolArray = (counts > 0).sum(axis=1) >= float(l)
        return out

    return test


def entropy(l: float) -> GroupTest:  # noqa: E741
    """The verdict per group of ``classic.entropy_l_diversity``: ``H >= log l``, exact for a
    whole ``l`` inside the tolerance band, unsafe inside it for a fractional ``l``."""
    limit = float(l)

    def test(counts: IntArray, totals: IntArray) -> BoolArray:
        if _counted(counts):
            return entropy_groups_pass(counts, limit)
        c = counts.astype(np.float64)
        n = c.sum(axis=1)
        clogc = c * np.log(np.where(c > 0, c, 1.0))
        h = np.maximum(np.log(n) - clogc.sum(axis=1) / n, 0.0)
        return _float_verdicts(np.exp(h), limit, thresholds.at_least)

    return test


def recursive(c: float, l: int) -> GroupTest:  # noqa: E741
    """The verdict per group of ``classic.recursive_cl_diversity``: ``r1 < c (r_l + ...)``,
    strict, exact near ``c`` (``c`` read as written)."""
    cf, li = float(c), int(l)

    def test(counts: IntArray, totals: IntArray) -> BoolArray:
        if _counted(counts):
            return recursive_groups_pass(counts, cf, li)
        r = _sorted_desc(counts)
        tail = r[:, li - 1 :].sum(axis=1) if li <= r.shape[1] else np.zeros(r.shape[0])
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(tail > 0, r[:, 0] / np.where(tail > 0, tail, 1), np.inf)
        return _float_verdicts(ratio, cf, thresholds.below)

    return test


def _benign_mask(values: Sequence[str], benign: frozenset[str]) -> BoolArray:
    out: BoolArray = np.array([v in benign for v in values], dtype=bool)
    return out


def _negation_terms(counts: npt.NDArray[Any], k: int, benign: BoolArray) -> tuple[Any, Any, Any]:
    """Per group ``(num, den, target)`` of the negation ratio with benign values
    (docs/worst-case-engine.md, "Benign values"): the target ``s*`` is the group's most
    frequent non-benign value, the ``k`` most frequent *other* values (benign included) are
    ruled out, ``num = n(s*)`` and ``den = n - top_k(others)``; ``target`` is false for a
    group whose present values are all benign (never the target)."""
    order = np.argsort(-counts, axis=1, kind="stable")
    sc = np.take_along_axis(counts, order, axis=1)
    eligible = (sc > 0) & ~benign[order]
    target = eligible.any(axis=1)
    rows = np.arange(counts.shape[0])
    num = np.where(target, sc[rows, np.argmax(eligible, axis=1)], 0)
    width = sc.shape[1]
    prefix = np.zeros((counts.shape[0], width + 2), dtype=sc.dtype)
    prefix[:, 1 : width + 1] = np.cumsum(sc, axis=1)
    prefix[:, width + 1] = prefix[:, width]
    # values strictly more frequent than s*; top k of the others is P[k] when s* is not
    # among the k largest, else P[k+1] - n(s*) (a tie with s* is the same multiset)
    rank = (counts > num[:, None]).sum(axis=1)
    others = np.where(
        rank >= k, prefix[:, min(k, width + 1)], prefix[:, min(k + 1, width + 1)] - num
    )
    den = counts.sum(axis=1) - others
    return num, np.where(target, den, 1), target


def negation(
    c: float, k: int, values: Sequence[str] = (), benign: frozenset[str] = frozenset()
) -> GroupTest:
    """The verdict of ``worst_case._negation_result``: the exact fraction
    ``r1 / (n - r2 - ... - r_{k+1})`` below ``c`` read as written; the float ratio decides
    outside the tolerance band, where it cannot differ from the exact comparison.

    With benign values among ``values`` the ratio is the benign-aware one of
    docs/worst-case-engine.md ("Benign values", negations): ``n(s*) / (n - top_k(others))``
    with ``s*`` the most frequent non-benign value; a group holding only benign values
    passes (it never holds the target)."""
    cf, ki = float(c), int(k)
    mask = _benign_mask(values, benign)

    def test(counts: IntArray, totals: IntArray) -> BoolArray:
        if mask.any():
            num, den, target = _negation_terms(counts, ki, mask)
        else:
            r = _sorted_desc(counts)
            num = r[:, 0]
            den = _sizes(counts) - r[:, 1 : ki + 1].sum(axis=1)
            target = np.ones(counts.shape[0], dtype=bool)
        ratio = np.where(target, num / den, 0.0)
        if not _counted(counts):
            return _float_verdicts(ratio, cf, thresholds.below)
        out: BoolArray = ratio < cf
        near = target & (np.abs(ratio - cf) <= thresholds.band(cf))
        for g in np.flatnonzero(near).tolist():
            out[g] = thresholds.below(Fraction(int(num[g]), int(den[g])), cf)
        return out

    return test


def t_closeness(values: Sequence[str], t: float, ordered: bool | None) -> GroupTest:
    """EMD of each group to the table distribution ``totals`` (classic.t_closeness), decided
    as :func:`~airflow_privacy.core.criteria.classic.t_closeness_groups_pass` decides it: the
    float EMD outside the tolerance band around ``t``, the exact EMD compared with
    :func:`~airflow_privacy.core.thresholds.at_most` (``t`` as written) inside it. (That
    helper takes the table to be the rows it is given; here the rows may be part of the
    table, Mondrian's candidate halves, so the table's ``totals`` are passed in.)"""

    def test(counts: IntArray, totals: IntArray) -> BoolArray:
        present = np.flatnonzero(totals > 0)
        labels = [values[int(v)] for v in present]
        use_ordered, order = t_closeness_ground(labels, ordered, None)
        cols = present if order is None else present[order]
        sub = counts[:, cols]
        tot = totals[cols]
        m = sub.shape[1]
        if m <= 1:
            return np.ones(counts.shape[0], dtype=bool)
        sizes = sub.sum(axis=1)
        n_total = int(tot.sum())
        if m * n_total * n_total < 2**62:
            diff = sub * n_total - sizes[:, None] * tot[None, :]
            if use_ordered:
                emd = np.abs(np.cumsum(diff, axis=1)).sum(axis=1) / (sizes * n_total * (m - 1))
            else:
                emd = np.abs(diff).sum(axis=1) / (2 * sizes * n_total)
        else:
            d = sub / sizes[:, None].astype(np.float64) - tot / float(n_total)
            if use_ordered:
                emd = np.abs(np.cumsum(d, axis=1)).sum(axis=1) / (m - 1)
            else:
                emd = 0.5 * np.abs(d).sum(axis=1)
        tf = float(t)
        if not _counted(counts):
            return _float_verdicts(emd, tf, thresholds.at_most)
        out: BoolArray = emd <= tf
        for g in np.flatnonzero(np.abs(emd - tf) <= thresholds.band(tf)).tolist():
            out[g] = thresholds.at_most(_exact_emd(sub[g], tot, use_ordered), tf)
        return out

    return test


def alone(
    criterion: Criterion,
    values: Sequence[str],
    by_profile: bool,
    benign: frozenset[str] = frozenset(),
) -> GroupTest:
    """A group passes alone: ``criterion`` on a one-group release (``.with_benign(benign)``,
    as the re-check with the benign values sees it), cached per count row (per sorted count
    row when the criterion ignores value labels, ``by_profile``; with benign values per
    sorted row of ``(count, benign)`` pairs, which is all such a criterion depends on)."""
    cache: dict[tuple[int, ...], bool] = {}
    labels = tuple(values)
    mask = _benign_mask(labels, benign)
    marked = frozenset(v for v in labels if v in benign)

    def test(counts: IntArray, totals: IntArray) -> BoolArray:
        out = np.empty(counts.shape[0], dtype=bool)
        if by_profile and mask.any():
            # per row: counts descending, non-benign before benign among equals
            perms = np.lexsort((mask[None, :].repeat(counts.shape[0], 0), -counts), axis=1)
            rows = np.take_along_axis(counts, perms, axis=1)
        else:
            perms = None
            rows = _sorted_desc(counts) if by_profile else counts
        for g, row in enumerate(rows):
            key = tuple(int(x) for x in row)
            names = labels
            if perms is not None:
                names = tuple(labels[int(i)] for i in perms[g])
                key += tuple(int(mask[int(i)]) for i in perms[g])
            hit = cache.get(key)
            if hit is None:
                b = Bucketization.from_group_counts([[int(x) for x in row]], names)
                hit = cache[key] = bool(criterion.evaluate(b.with_benign(marked)).safe)
            out[g] = hit
        return out

    return test
