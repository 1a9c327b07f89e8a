"""Quasi-identifiers as dimensions: numeric values, or leaves of a hierarchy.

Mondrian splits along them and publishes each partition's extent on them; the bucketizer
orders records by them and reports how far a bucket spreads over them. A QI whose values
are all numbers is *numeric* (its extent is the interval of the values present, ``lo-hi``);
any other QI is *categorical* (its extent is the lowest common ancestor of the values
present in its hierarchy, or in the implicit hierarchy value / ``*`` when none is given).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.anonymize.encoding import Encoded
from airflow_privacy.core.anonymize.hierarchies import QITree, flat, tree
from airflow_privacy.core.anonymize.utility import categorical_loss, numeric_loss
from airflow_privacy.core.hierarchy import Hierarchy

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Dimension:
    """One QI as Mondrian sees it: numeric values, or leaves of a hierarchy."""

    name: str
    numbers: FloatArray | None  # per record (numeric QIs)
    text: tuple[str, ...]  # distinct values as strings
    codes: IntArray  # per record: index in ``text``
    tree: QITree | None  # categorical QIs
    leaves: IntArray | None  # per record: leaf index in ``tree``
    scale: float  # width of the whole table (normalizes the width of a partition)

    def width(self, rows: IntArray) -> float:
        """Width of ``rows`` on this QI relative to the whole table's (0: one value)."""
        if self.scale <= 0:
            return 0.0
        if self.numbers is not None:
            vals = self.numbers[rows]
            return float(vals.max() - vals.min()) / self.scale
        assert self.tree is not None and self.leaves is not None
        t = self.tree
        level = t.lca_level(np.unique(self.leaves[rows]))
        if level == 0:
            return 0.0
        if level >= t.height:
            under = len(t.leaves)
        else:
            under = int(t.leaves_under(level)[t.leaf_codes[level][self.leaves[rows[0]]]])
        return (under - 1) / self.scale

    def split(self, rows: IntArray) -> list[IntArray]:
        """The candidate parts of ``rows`` (at least two), or ``[]``."""
        if self.numbers is not None:
            vals = self.numbers[rows]
            distinct, counts = np.unique(vals, return_counts=True)
            if distinct.shape[0] < 2:
                return []
            # the (lower) median record's value; "<= median" goes left, unless that is
            # every record, then the cut moves down to the next value boundary
            median = int(np.searchsorted(np.cumsum(counts), (rows.shape[0] - 1) // 2, "right"))
            cut = min(median, distinct.shape[0] - 2)
            left = vals <= distinct[cut]
            return [rows[left], rows[~left]]
        assert self.tree is not None and self.leaves is not None
        t = self.tree
        leaves = self.leaves[rows]
        level = t.lca_level(np.unique(leaves))
        if level == 0:
            return []
        child = t.leaf_codes[min(level, t.height) - 1][leaves]
        order = np.argsort(child, kind="stable")
        bounds = np.flatnonzero(np.diff(child[order])) + 1
        return [rows[part] for part in np.split(order, bounds)]

    def label(self, rows: IntArray) -> str:
        if self.numbers is not None:
            vals = self.numbers[rows]
            lo = int(np.argmin(vals))
            hi = int(np.argmax(vals))
            low_text = self.text[int(self.codes[rows[lo]])]
            high_text = self.text[int(self.codes[rows[hi]])]
            return low_text if vals[lo] == vals[hi] else f"{low_text}-{high_text}"
        assert self.tree is not None and self.leaves is not None
        t = self.tree
        level = t.lca_level(np.unique(self.leaves[rows]))
        if level >= t.height:
            return "*"
        return t.labels[level][int(t.leaf_codes[level][self.leaves[rows[0]]])]

    def rank(self) -> IntArray:
        """Per record, the rank of its value in the QI's order (numeric order, or the
        hierarchy's subtree-contiguous leaf order): for locality-preserving orderings."""
        if self.numbers is not None:
            _, inverse = np.unique(self.numbers, return_inverse=True)
            out: IntArray = inverse.reshape(-1).astype(np.int64)
            return out
        assert self.tree is not None and self.leaves is not None
        position = np.empty(len(self.tree.leaves), dtype=np.int64)
        position[self.tree.leaf_order()] = np.arange(len(self.tree.leaves))
        _, inverse = np.unique(position[self.leaves], return_inverse=True)
        dense: IntArray = inverse.reshape(-1).astype(np.int64)
        return dense

    def extents(self, group: IntArray, n_groups: int) -> tuple[FloatArray, FloatArray]:
        """Per group (``group[r]`` = group of record ``r``): the loss metric of the group's
        extent on this QI, and the number of input records that extent covers."""
        if self.numbers is not None:
            nums = self.numbers
            low = np.full(n_groups, np.inf)
            high = np.full(n_groups, -np.inf)
            np.minimum.at(low, group, nums)
            np.maximum.at(high, group, nums)
            ordered = np.sort(nums)
            covered = np.searchsorted(ordered, high, "right") - np.searchsorted(
                ordered, low, "left"
            )
            loss = numeric_loss(low, high, float(ordered[0]), float(ordered[-1]))
            return loss, np.asarray(covered, dtype=np.float64)
        assert self.tree is not None and self.leaves is not None
        t = self.tree
        per_leaf = np.bincount(self.leaves, minlength=len(t.leaves)).astype(np.float64)
        cat_loss: FloatArray = np.ones(n_groups, dtype=np.float64)
        cat_cov: FloatArray = np.full(n_groups, float(self.leaves.shape[0]), dtype=np.float64)
        todo = np.ones(n_groups, dtype=bool)
        for level in range(t.height):
            codes = t.leaf_codes[level][self.leaves]
            low = np.full(n_groups, np.iinfo(np.int64).max)
            high = np.full(n_groups, -1)
            np.minimum.at(low, group, codes)
            np.maximum.at(high, group, codes)
            hit = todo & (low == high)
            if hit.any():
                labels = low[hit]
                under = t.leaves_under(level)[labels]
                cat_loss[hit] = categorical_loss(under, len(t.leaves))
                per_label = np.bincount(
                    t.leaf_codes[level], weights=per_leaf, minlength=len(t.labels[level])
                )
                cat_cov[hit] = per_label[labels]
                todo &= ~hit
            if not todo.any():
                break
        return cat_loss, cat_cov


def dimensions(enc: Encoded, hierarchies: Mapping[str, Hierarchy] | None) -> list[Dimension]:
    """Numeric QIs (every value a number) and categorical ones (with their hierarchy, or the
    implicit value / ``*`` one)."""
    given = dict(hierarchies or {})
    out = []
    for col in enc.qis:
        nums = col.numbers()
        if nums is not None:
            per_record = nums[col.codes]
            scale = float(per_record.max() - per_record.min())
            out.append(Dimension(col.name, per_record, col.values, col.codes, None, None, scale))
            continue
        h = given.get(col.name)
        t = tree(h, col.name) if h is not None else flat(col.name, col.values)
        leaves = t.bind(col.values)[col.codes]
        scale = float(len(t.leaves) - 1)
        out.append(Dimension(col.name, None, col.values, col.codes, t, leaves, scale))
    return out


def group_costs(
    dims: Sequence[Dimension], group: IntArray, n_groups: int
) -> tuple[FloatArray, FloatArray]:
    """``(loss, log2 covered)``, each ``(n_groups, q)``: the utility inputs of groups
    published as their extents (utility.summarize)."""
    loss = np.zeros((n_groups, len(dims)))
    log2_cov = np.zeros((n_groups, len(dims)))
    for i, d in enumerate(dims):
        lo, cov = d.extents(group, n_groups)
        loss[:, i] = lo
        log2_cov[:, i] = np.log2(np.maximum(cov, 1.0))
    return loss, log2_cov


def leaf_counts(dims: Sequence[Dimension]) -> list[IntArray]:
    """Records per distinct value, per QI (utility.nue_constant)."""
    return [np.bincount(d.codes, minlength=len(d.text)).astype(np.int64) for d in dims]
