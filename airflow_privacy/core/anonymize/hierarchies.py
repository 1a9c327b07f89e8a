"""Hierarchies as the anonymizers use them: checked for consistency, as integer code maps.

A :class:`~airflow_privacy.core.hierarchy.Hierarchy` (ARX CSV file, interval or mask
builder) maps every original value to one label per level. Full-domain generalization
(Incognito, LeFevre et al. 2005) needs it to be a *tree*: every label of level ``i`` has one
parent at level ``i + 1``, and every value has a label at every level. Otherwise "roll the
counts of a node up to a coarser node" is not defined and a coarser node would not be a
union of finer groups. :func:`tree` checks that and raises an :class:`InputError` naming the
label and level at fault.

The result, :class:`QITree`, holds for each level the distinct labels and, for each leaf
(original value) its label index, plus what the utility metrics need (leaves under each
label, their numeric range). :meth:`QITree.bind` maps the values of a data column onto the
leaves, naming a value that is missing from the hierarchy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.hierarchy import Hierarchy
from airflow_privacy.errors import InputError

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class QITree:
    """A checked hierarchy over ``leaves`` with ``height`` levels (level 0 = the leaves)."""

    column: str
    leaves: tuple[str, ...]
    labels: tuple[tuple[str, ...], ...]
    """``labels[level]``: the distinct labels of ``level`` (level 0: the leaves)."""
    leaf_codes: tuple[IntArray, ...]
    """``leaf_codes[level][leaf]``: index in ``labels[level]`` of the leaf's label."""
    implicit: bool = False
    """Built by the anonymizer (two levels, value and ``*``), not given by the user."""

    @property
    def height(self) -> int:
        return len(self.labels)

    def parent_map(self, low: int, high: int) -> IntArray:
        """Label index at ``high`` of every label of ``low`` (``low <= high``)."""
        out = np.zeros(len(self.labels[low]), dtype=np.int64)
        out[self.leaf_codes[low]] = self.leaf_codes[high]
        return out

    @cached_property
    def _under(self) -> tuple[IntArray, ...]:
        return tuple(
            np.bincount(codes, minlength=len(labels)).astype(np.int64)
            for codes, labels in zip(self.leaf_codes, self.labels, strict=True)
        )

    def leaves_under(self, level: int) -> IntArray:
        """Number of leaves under each label of ``level``."""
        return self._under[level]

    def numeric_leaves(self) -> FloatArray | None:
        """The leaves as numbers, if every leaf is a finite number."""
        out = np.empty(len(self.leaves), dtype=np.float64)
        for i, v in enumerate(self.leaves):
            try:
                x = float(v)
            except ValueError:
                return None
            if not math.isfinite(x):
                return None
            out[i] = x
        return out

    def leaf_order(self) -> IntArray:
        """Leaves sorted so that every subtree is contiguous (top-down label path, then the
        file order): the order a categorical QI is ranked in for locality."""
        keys = [
            tuple(int(self.leaf_codes[lv][i]) for lv in range(self.height - 1, -1, -1))
            for i in range(len(self.leaves))
        ]
        return np.asarray(sorted(range(len(self.leaves)), key=lambda i: keys[i]), np.int64)

    def lca_level(self, leaves: IntArray) -> int:
        """The lowest level at which all ``leaves`` share one label."""
        for level in range(self.height):
            codes = self.leaf_codes[level][leaves]
            if codes.size == 0 or (codes == codes[0]).all():
                return level
        return self.height  # several labels even at the top: no common ancestor

    def bind(self, values: Sequence[str]) -> IntArray:
        """Leaf index of every value of a data column; a value missing from the hierarchy is
        an :class:`InputError` that names it."""
        pos = {v: i for i, v in enumerate(self.leaves)}
        out = np.empty(len(values), dtype=np.int64)
        missing: list[str] = []
        for i, v in enumerate(values):
            j = pos.get(v)
            if j is None:
                missing.append(v)
                continue
            out[i] = j
        if missing:
            more = f" ({len(missing)} values are missing)" if len(missing) > 1 else ""
            raise InputError(
                f"value {missing[0]!r} of column {self.column!r} is not in its hierarchy"
                f"{more}: add it to the hierarchy or fix the data"
            )
        return out


def tree(h: Hierarchy, column: str | None = None) -> QITree:
    """Check that ``h`` is a tree of uniform height and convert it.

    Errors name the column, the value or label and the level: a value without a label at
    some level ("ragged levels"), level 0 not being the values themselves, or a label with
    two different parents (it would belong to two subtrees).
    """
    col = column or h.column
    if not h.levels or not h.levels[0]:
        raise InputError(f"hierarchy for column {col!r} is empty")
    leaves = tuple(h.levels[0])
    for v in leaves:
        if h.levels[0][v] != v:
            raise InputError(
                f"hierarchy for column {col!r}: level 0 must hold the original values, "
                f"but {v!r} maps to {h.levels[0][v]!r}"
            )
    leaf_set = set(leaves)
    for level, mapping in enumerate(h.levels[1:], start=1):
        if set(mapping) != leaf_set:
            absent = sorted(leaf_set - set(mapping))
            extra = sorted(set(mapping) - leaf_set)
            what = (
                f"value {absent[0]!r} has no label at level {level}"
                if absent
                else f"level {level} labels {extra[0]!r}, which is not a value of level 0"
            )
            raise InputError(f"hierarchy for column {col!r} has ragged levels: {what}")
    for level in range(1, len(h.levels)):
        parent: dict[str, str] = {}
        for v in leaves:
            child, up = h.levels[level - 1][v], h.levels[level][v]
            seen = parent.setdefault(child, up)
            if seen != up:
                raise InputError(
                    f"hierarchy for column {col!r} is inconsistent: {child!r} at level "
                    f"{level - 1} has two parents at level {level}, {seen!r} and {up!r}"
                )
    labels: list[tuple[str, ...]] = []
    codes: list[IntArray] = []
    for mapping in h.levels:
        distinct = tuple(dict.fromkeys(mapping[v] for v in leaves))
        index = {lab: i for i, lab in enumerate(distinct)}
        labels.append(distinct)
        codes.append(np.asarray([index[mapping[v]] for v in leaves], dtype=np.int64))
    return QITree(col, leaves, tuple(labels), tuple(codes))


def flat(column: str, values: Sequence[str]) -> QITree:
    """The implicit two-level hierarchy of a QI given without one: the value, then ``*``."""
    leaves = tuple(dict.fromkeys(values))
    if not leaves:
        raise InputError(f"column {column!r} has no values")
    codes = (np.arange(len(leaves), dtype=np.int64), np.zeros(len(leaves), dtype=np.int64))
    return QITree(column, leaves, (leaves, ("*",)), codes, implicit=True)
