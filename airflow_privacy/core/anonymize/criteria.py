"""The criteria an anonymizer must meet: validated once, evaluated through the registry.

A criterion is a ``(name, params)`` pair looked up in
:mod:`airflow_privacy.core.criteria.registry`, so every anonymizer works with every
registered criterion, including ones added later. The release passes when every criterion
passes.

Besides the registry's verdict on a whole release, the anonymizers need a verdict on single
groups (Mondrian's candidate halves, the groups a suppression budget removes). For the
*local* criteria of :mod:`airflow_privacy.core.anonymize.monotone` that is a vectorized test
over a ``groups x values`` count matrix, and it is the registry's own per-group verdict:
entropy l-diversity, recursive (c,l)-diversity and t-closeness call the verdict helpers of
:mod:`airflow_privacy.core.criteria.classic` (``entropy_groups_pass``,
``recursive_groups_pass``, the decision of ``t_closeness_groups_pass`` against the table's
totals), negation-safety compares its ratio with :mod:`airflow_privacy.core.thresholds` as the
registry does. So near a threshold (a group a hair below ``log l``, a ratio equal to ``c`` as
written) the anonymizer decides exactly as the re-check of its release will: it never
publishes a group that the check then refuses. ``tests/test_anonymize_criteria.py`` checks
that the two agree, on random inputs and near ties. For (c,k)-safety a single group's own
maximum disclosure is a necessary condition (the adversary can put all his knowledge in that
group), computed through the registry once per distinct count row; the same holds for the
skyline criterion (Chen et al. 2007: every placement inside one group is also open to the
adversary when there are more groups).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core import thresholds
from airflow_privacy.core.anonymize.monotone import Monotonicity, monotonicity
from airflow_privacy.core.criteria.classic import (
    _exact_emd,
    entropy_groups_pass,
    recursive_groups_pass,
)
from airflow_privacy.core.criteria.registry import evaluate, validate
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError, opt

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
GroupTest = Callable[[IntArray, IntArray, Mapping[str, Any]], BoolArray]

# Cheap criteria first, so a failing node is usually rejected before the expensive checks.
_COST = {
    "k-anonymity": 0,
    "distinct-l-diversity": 1,
    "negation-safety": 1,
    "recursive-cl-diversity": 2,
    "entropy-l-diversity": 2,
    "t-closeness": 3,
    "ck-safety": 5,
}


@dataclass(frozen=True)
class Criterion:
    """One validated criterion."""

    name: str
    params: dict[str, Any]
    traits: Monotonicity

    @property
    def label(self) -> str:
        """``ck-safety (c=0.7, k=3)``."""
        shown = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in self.params.items())  # fmt: skip
        return f"{self.name} ({shown})" if shown else self.name

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "parameters": dict(self.params)}


def _sizes(counts: IntArray) -> IntArray:
    out: IntArray = counts.sum(axis=1)
    return out


def _sorted_desc(counts: IntArray) -> IntArray:
    out: IntArray = -np.sort(-counts, axis=1)
    return out


# ------------------------------------------------------------- single-group tests
def _k_anonymity(counts: IntArray, totals: IntArray, p: Mapping[str, Any]) -> BoolArray:
    out: BoolArray = _sizes(counts) >= int(p["k"])
    return out


def _distinct(counts: IntArray, totals: IntArray, p: Mapping[str, Any]) -> BoolArray:
    out: BoolArray = (counts > 0).sum(axis=1) >= float(p["l"])
    return out


def _counted(counts: npt.NDArray[Any]) -> bool:
    """Whole counts (groups of records, or of worlds), which the registry's verdict helpers
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


def _entropy(counts: IntArray, totals: IntArray, p: Mapping[str, Any]) -> BoolArray:
    # the registry's verdict per group (classic.entropy_l_diversity): H >= log l, exact for
    # a whole l inside the tolerance band, unsafe inside it for a fractional l
    l = float(p["l"])  # noqa: E741
    if _counted(counts):
        return entropy_groups_pass(counts, l)
    c = counts.astype(np.float64)
    n = c.sum(axis=1)
    clogc = c * np.log(np.where(c > 0, c, 1.0))
    h = np.maximum(np.log(n) - clogc.sum(axis=1) / n, 0.0)
    return _float_verdicts(np.exp(h), l, thresholds.at_least)


def _recursive(counts: IntArray, totals: IntArray, p: Mapping[str, Any]) -> BoolArray:
    # the registry's verdict per group (classic.recursive_cl_diversity): r1 < c (r_l + ...),
    # strict, exact near c (c read as written)
    c, l = float(p["c"]), int(p["l"])  # noqa: E741
    if _counted(counts):
        return recursive_groups_pass(counts, c, l)
    r = _sorted_desc(counts)
    tail = r[:, l - 1 :].sum(axis=1) if l <= r.shape[1] else np.zeros(r.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(tail > 0, r[:, 0] / np.where(tail > 0, tail, 1), np.inf)
    return _float_verdicts(ratio, c, thresholds.below)


def _negation(counts: IntArray, totals: IntArray, p: Mapping[str, Any]) -> BoolArray:
    # the registry's verdict (worst_case._negation_result, ck_safe): the exact fraction
    # r1 / (n - r2 - ... - r_{k+1}) below c read as written; the float ratio decides outside
    # the tolerance band, where it cannot differ from the exact comparison
    r = _sorted_desc(counts)
    k = int(p["k"])
    c = float(p["c"])
    num = r[:, 0]
    den = _sizes(counts) - r[:, 1 : k + 1].sum(axis=1)
    ratio = num / den
    if not _counted(counts):
        return _float_verdicts(ratio, c, thresholds.below)
    out: BoolArray = ratio < c
    for g in np.flatnonzero(np.abs(ratio - c) <= thresholds.band(c)).tolist():
        out[g] = thresholds.below(Fraction(int(num[g]), int(den[g])), c)
    return out


def _numeric(labels: Sequence[str]) -> list[float] | None:
    out: list[float] = []
    for v in labels:
        try:
            x = float(v)
        except ValueError:
            return None
        if not math.isfinite(x):
            return None
        out.append(x)
    return out


def _t_closeness_test(values: Sequence[str]) -> GroupTest:
    """EMD of each group to the table distribution ``totals`` (classic.t_closeness), decided
    as :func:`~airflow_privacy.core.criteria.classic.t_closeness_groups_pass` decides it: the
    float EMD outside the tolerance band around ``t``, the exact EMD compared with
    :func:`~airflow_privacy.core.thresholds.at_most` (``t`` as written) inside it. (That
    helper takes the table to be the rows it is given; here the rows may be part of the
    table, Mondrian's candidate halves, so the table's ``totals`` are passed in.)"""

    def test(counts: IntArray, totals: IntArray, p: Mapping[str, Any]) -> BoolArray:
        present = np.flatnonzero(totals > 0)
        labels = [values[int(v)] for v in present]
        numeric = _numeric(labels)
        ordered = p.get("ordered")
        if ordered and numeric is None:
            bad = next(v for v in labels if _numeric([v]) is None)
            raise InputError(
                f"ordered=True needs numeric sensitive values, but {bad!r} is not a number"
            )
        use_ordered = numeric is not None if ordered is None else bool(ordered)
        cols = present
        if use_ordered and numeric is not None:
            cols = present[np.argsort(np.asarray(numeric), kind="stable")]
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
        t = float(p["t"])
        if not _counted(counts):
            return _float_verdicts(emd, t, thresholds.at_most)
        out: BoolArray = emd <= t
        for g in np.flatnonzero(np.abs(emd - t) <= thresholds.band(t)).tolist():
            out[g] = thresholds.at_most(_exact_emd(sub[g], tot, use_ordered), t)
        return out

    return test


def _single_group_test(name: str, values: Sequence[str], by_profile: bool) -> GroupTest:
    """A group passes alone: the registry on a one-group release, cached per count row
    (per sorted count row when the criterion ignores value labels)."""
    cache: dict[tuple[int, ...], bool] = {}

    def test(counts: IntArray, totals: IntArray, p: Mapping[str, Any]) -> BoolArray:
        rows = _sorted_desc(counts) if by_profile else counts
        out = np.empty(counts.shape[0], dtype=bool)
        for g, row in enumerate(rows):
            key = tuple(int(x) for x in row)
            hit = cache.get(key)
            if hit is None:
                b = Bucketization.from_group_counts([list(key)], values)
                hit = cache[key] = bool(evaluate(b, name, p).safe)
            out[g] = hit
        return out

    return test


_EXACT: dict[str, GroupTest] = {
    "k-anonymity": _k_anonymity,
    "distinct-l-diversity": _distinct,
    "entropy-l-diversity": _entropy,
    "recursive-cl-diversity": _recursive,
    "negation-safety": _negation,
}


# Background-knowledge criteria: the adversary may put all his knowledge in one group, so a
# group that fails on its own fails every release containing it (a necessary test only).
_NECESSARY = ("ck-safety", "skyline")


@dataclass
class CriteriaSet:
    """Validated criteria (all must pass) and the tests the anonymizers run with them."""

    items: tuple[Criterion, ...]
    values: tuple[str, ...] = ()
    _tests: dict[int, tuple[GroupTest, bool]] = field(default_factory=dict, repr=False)

    @classmethod
    def parse(cls, criteria: Sequence[tuple[str, Mapping[str, Any]]]) -> CriteriaSet:
        """Validate every ``(name, params)`` pair through the registry (errors name the
        criterion and parameter), and run each once on a tiny release so that parameters
        the registry only rejects when checking (``--l 2.5`` for distinct l-diversity)
        fail before any data is read."""
        if isinstance(criteria, str | bytes) or not isinstance(criteria, Sequence):
            raise InputError("criteria must be a list of (name, parameters) pairs")
        if not criteria:
            raise InputError(f"at least one criterion is required ({opt('criterion')})")
        items: list[Criterion] = []
        probe = Bucketization.from_group_counts([[2, 1], [1, 2]], ("1", "2"))
        for entry in criteria:
            if not isinstance(entry, Sequence) or isinstance(entry, str) or len(entry) != 2:
                raise InputError(f"criterion {entry!r} is not a (name, parameters) pair")
            name, params = entry
            if not isinstance(params, Mapping):
                raise InputError(f"parameters of criterion {name!r} must be a mapping")
            valid = validate(str(name), params)
            evaluate(probe, str(name), valid)
            items.append(Criterion(str(name), valid, monotonicity(str(name))))
        return cls(tuple(items))

    def bind(self, values: Sequence[str]) -> CriteriaSet:
        """The same criteria for a table whose sensitive values are ``values``."""
        return CriteriaSet(self.items, tuple(values))

    # ------------------------------------------------------------------ releases
    def by_cost(self, subset: Sequence[int] | None = None) -> list[int]:
        idx = range(len(self.items)) if subset is None else subset
        return sorted(idx, key=lambda i: (_COST.get(self.items[i].name, 10), i))

    def first_failure(
        self, b: Bucketization, subset: Sequence[int] | None = None
    ) -> CriterionResult | None:
        """The first failing criterion's result (cheap criteria first), or ``None``."""
        for i in self.by_cost(subset):
            c = self.items[i]
            result = evaluate(b, c.name, c.params)
            if not result.safe:
                return result
        return None

    def passes(self, b: Bucketization, subset: Sequence[int] | None = None) -> bool:
        return self.first_failure(b, subset) is None

    def evaluate_all(self, b: Bucketization) -> list[CriterionResult]:
        return [evaluate(b, c.name, c.params) for c in self.items]

    # -------------------------------------------------------------------- groups
    def group_test(self, i: int) -> tuple[GroupTest, bool] | None:
        """``(test, exact)`` for criterion ``i``: ``test(counts, totals, params)`` says which
        groups pass on their own; ``exact`` when the release passes iff all groups do.
        ``None`` when there is no single-group test (the criterion is checked whole)."""
        if i in self._tests:
            return self._tests[i]
        c = self.items[i]
        found: tuple[GroupTest, bool] | None
        if c.name in _EXACT:
            found = (_EXACT[c.name], True)
        elif c.name == "t-closeness":
            found = (_t_closeness_test(self.values), True)
        elif c.name in _NECESSARY:
            # (c,k)-safety depends on the sorted counts only (Minimize1 / Minimize2)
            by_profile = c.name == "ck-safety"
            found = (_single_group_test(c.name, self.values, by_profile), False)
        else:
            found = None
        if found is not None:
            self._tests[i] = found
        return found

    def groups_passing(
        self, counts: IntArray, totals: IntArray, subset: Sequence[int] | None = None
    ) -> BoolArray:
        """Groups (rows of ``counts``) that pass every single-group test of ``subset``.

        ``totals`` is the sensitive distribution of the whole table (t-closeness)."""
        ok = np.ones(counts.shape[0], dtype=bool)
        for i in self.by_cost(subset):
            found = self.group_test(i)
            if found is None:
                continue
            ok &= found[0](counts, totals, self.items[i].params)
            if not ok.any():
                break
        return ok

    def local(self, subset: Sequence[int] | None = None) -> bool:
        """Do the single-group tests of ``subset`` decide the whole release?"""
        idx = range(len(self.items)) if subset is None else subset
        for i in idx:
            found = self.group_test(i)
            if found is None or not found[1]:
                return False
        return True

    def global_indices(self) -> list[int]:
        """Criteria that must be checked on the whole release (no exact group test)."""
        out = []
        for i in range(len(self.items)):
            found = self.group_test(i)
            if found is None or not found[1]:
                out.append(i)
        return out

    def to_list(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self.items]
