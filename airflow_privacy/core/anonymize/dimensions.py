"""Quasi-identifiers as dimensions: numeric values, or leaves of a hierarchy.

Mondrian splits along them and publishes each partition's extent on them; the bucketizer
orders records by them and reports how far a bucket spreads over them. A QI whose values
are all numbers is *numeric* (its extent is the interval of the values present, ``lo-hi``);
any other QI is *categorical*. A categorical QI is split one of two ways
(``categorical_split``):

* ``"hierarchy"``: along its hierarchy (the implicit value / ``*`` one when none is given);
  its extent is the lowest common ancestor of the values present;
* ``"halving"``: its present values, in a fixed order, are cut into two halves (the first
  ``m // 2`` of the ``m`` values present, then the rest), as anonypy 0.2.1 does
  (``anonypy/mondrian.py``, ``Mondrian.split``; it takes the values in their order of
  appearance in the data, which a histogram does not have, so the order here is the
  hierarchy's leaf order when one is given, else the values' text order); its extent is
  the *set* of values present, published as :func:`set_label`.

Input built from a histogram has one row per distinct tuple and a weight (its records,
:class:`~airflow_privacy.core.anonymize.encoding.Encoded`); every statistic here is a
statistic of records (medians, covered records), so a table and its histogram give the
same splits and the same costs.
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
from airflow_privacy.core.set_labels import set_label

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
    weights: IntArray | None = None  # per row: its records (None: one record per row)
    position: IntArray | None = None  # halving split: place of each value of ``text``

    @property
    def halving(self) -> bool:
        """Whether this categorical QI is split into halves of its present values."""
        return self.position is not None

    def row_weights(self, rows: IntArray) -> IntArray:
        """The records of each of ``rows``."""
        if self.weights is None:
            return np.ones(rows.shape[0], dtype=np.int64)
        out: IntArray = self.weights[rows]
        return out

    def present(self, rows: IntArray) -> IntArray:
        """Halving: the codes of the values present in ``rows``, in the fixed order."""
        assert self.position is not None
        codes = np.unique(self.codes[rows])
        ordered: IntArray = codes[np.argsort(self.position[codes], kind="stable")]
        return ordered

    def width(self, rows: IntArray) -> float:
        """Width of ``rows`` on this QI relative to the whole table's (0: one value)."""
        if self.scale <= 0:
            return 0.0
        if self.numbers is not None:
            vals = self.numbers[rows]
            return float(vals.max() - vals.min()) / self.scale
        if self.halving:  # the values present, as the hierarchy's leaves under the LCA
            return (int(np.unique(self.codes[rows]).shape[0]) - 1) / self.scale
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
            distinct, inverse = np.unique(vals, return_inverse=True)
            if distinct.shape[0] < 2:
                return []
            # records per distinct value (a histogram row weighs its records)
            counts = np.bincount(inverse.reshape(-1), weights=self.row_weights(rows))
            total = round(float(counts.sum()))
            # the (lower) median record's value; "<= median" goes left, unless that is
            # every record, then the cut moves down to the next value boundary
            median = int(np.searchsorted(np.cumsum(counts), (total - 1) // 2, "right"))
            cut = min(median, distinct.shape[0] - 2)
            left = vals <= distinct[cut]
            return [rows[left], rows[~left]]
        if self.halving:
            present = self.present(rows)
            if present.shape[0] < 2:
                return []
            first = np.zeros(len(self.text), dtype=bool)
            first[present[: present.shape[0] // 2]] = True
            left = first[self.codes[rows]]
            return [rows[left], rows[~left]]
        assert self.tree is not None and self.leaves is not None
        t = self.tree
        leaves = self.leaves[rows]
        level = t.lca_level(np.unique(leaves))
        if level == 0:
            return []
        below = min(level, t.height) - 1
        child = t.leaf_codes[below][leaves]
        if t.implicit:
            # the implicit hierarchy lists the values as the input happens to hold them:
            # the parts go in the values' text order instead, so a table and its histogram
            # (any backend's) split alike (the order matters to whole-release criteria)
            names = t.labels[below]
            rank = np.empty(len(names), dtype=np.int64)
            rank[sorted(range(len(names)), key=lambda i: names[i])] = np.arange(len(names))
            child = rank[child]
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
        if self.halving:
            return set_label([self.text[int(c)] for c in self.present(rows)])
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
        w = None if self.weights is None else self.weights.astype(np.float64)
        if self.numbers is not None:
            nums = self.numbers
            low = np.full(n_groups, np.inf)
            high = np.full(n_groups, -np.inf)
            np.minimum.at(low, group, nums)
            np.maximum.at(high, group, nums)
            order = np.argsort(nums, kind="stable")
            ordered = nums[order]
            # records up to each sorted row (weighted), so covered = records in [low, high]
            per_row = np.ones_like(ordered) if w is None else w[order]
            upto = np.concatenate(([0.0], np.cumsum(per_row)))
            covered = (
                upto[np.searchsorted(ordered, high, "right")]
                - upto[np.searchsorted(ordered, low, "left")]
            )
            loss = numeric_loss(low, high, float(ordered[0]), float(ordered[-1]))
            return loss, np.asarray(covered, dtype=np.float64)
        if self.halving:
            n_values = len(self.text)
            per_value = np.bincount(self.codes, weights=w, minlength=n_values).astype(np.float64)
            pairs = np.unique(group * n_values + self.codes)
            pair_group, pair_code = pairs // n_values, pairs % n_values
            present = np.bincount(pair_group, minlength=n_groups)
            total = int((per_value > 0).sum())
            cov = np.bincount(pair_group, weights=per_value[pair_code], minlength=n_groups)
            return categorical_loss(present, total), np.asarray(cov, dtype=np.float64)
        assert self.tree is not None and self.leaves is not None
        t = self.tree
        per_leaf = np.bincount(self.leaves, weights=w, minlength=len(t.leaves)).astype(np.float64)
        cat_loss: FloatArray = np.ones(n_groups, dtype=np.float64)
        cat_cov: FloatArray = np.full(n_groups, float(per_leaf.sum()), dtype=np.float64)
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


#: ``auto`` (Mondrian only): both partitionings, the one with more classes published
#: (:func:`airflow_privacy.core.anonymize.mondrian.mondrian_anonymize`)
CATEGORICAL_SPLITS = ("auto", "hierarchy", "halving")


def dimensions(
    enc: Encoded,
    hierarchies: Mapping[str, Hierarchy] | None,
    categorical_split: str = "hierarchy",
    weights: IntArray | None = None,
) -> list[Dimension]:
    """Numeric QIs (every value a number) and categorical ones (with their hierarchy, or the
    implicit value / ``*`` one), split as ``categorical_split`` says (module doc).
    ``weights``: the records of each row (default: ``enc.weights``)."""
    given = dict(hierarchies or {})
    w = enc.weights if weights is None else weights
    out = []
    for col in enc.qis:
        nums = col.numbers()
        if nums is not None:
            per_record = nums[col.codes]
            scale = float(per_record.max() - per_record.min())
            out.append(Dimension(col.name, per_record, col.values, col.codes, None, None, scale, w))
            continue
        h = given.get(col.name)
        t = tree(h, col.name) if h is not None else flat(col.name, col.values)
        bound = t.bind(col.values)
        leaves = bound[col.codes]
        if categorical_split == "halving":
            position = _fixed_order(col.values, bound if h is not None else None, t)
            present = int(np.unique(col.codes).shape[0])
            out.append(
                Dimension(
                    col.name, None, col.values, col.codes, t, leaves, float(present - 1), w,
                    position,
                )
            )  # fmt: skip
            continue
        scale = float(len(t.leaves) - 1)
        out.append(Dimension(col.name, None, col.values, col.codes, t, leaves, scale, w))
    return out


def _fixed_order(values: Sequence[str], leaves: IntArray | None, t: QITree) -> IntArray:
    """The place of each value in the halving split's fixed order: the hierarchy's
    subtree-contiguous leaf order when one is given (siblings stay together), else the
    values' text order (code points), which no backend's row order changes."""
    if leaves is not None:
        place = np.empty(len(t.leaves), dtype=np.int64)
        place[t.leaf_order()] = np.arange(len(t.leaves), dtype=np.int64)
        out: IntArray = place[leaves]
        return out
    order = sorted(range(len(values)), key=lambda i: values[i])
    by_text = np.empty(len(values), dtype=np.int64)
    by_text[np.asarray(order, dtype=np.int64)] = np.arange(len(values), dtype=np.int64)
    return by_text


def group_costs(
    dims: Sequence[Dimension], group: IntArray, n_groups: int
) -> tuple[FloatArray, FloatArray]:
    """``(loss, log2 covered)``, each ``(n_groups, q)``: the utility inputs of groups
    published as their extents (utility.summarize); ``group[r]``: the group of row ``r``
    (covered records count each row's weight)."""
    loss = np.zeros((n_groups, len(dims)))
    log2_cov = np.zeros((n_groups, len(dims)))
    for i, d in enumerate(dims):
        lo, cov = d.extents(group, n_groups)
        loss[:, i] = lo
        log2_cov[:, i] = np.log2(np.maximum(cov, 1.0))
    return loss, log2_cov


def leaf_counts(dims: Sequence[Dimension]) -> list[IntArray]:
    """Records per distinct value, per QI (utility.nue_constant)."""
    return [
        np.rint(np.bincount(d.codes, weights=d.weights, minlength=len(d.text))).astype(np.int64)
        for d in dims
    ]
