"""Frequency sets of lattice nodes, rolled up from finer nodes instead of re-read from rows.

The frequency set of a node is the count of every (generalized QI tuple, sensitive value)
cell. A coarser node's frequency set follows from any finer node's by mapping each QI label
to its ancestor and adding up equal cells (Incognito's "rollup", LeFevre et al. 2005): the
cost is the finer node's number of cells, not the number of records. Only the bottom node
(the original values) is counted from the records.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.anonymize.encoding import combine
from airflow_privacy.core.anonymize.hierarchies import QITree

IntArray = npt.NDArray[np.int64]
Levels = tuple[int, ...]


@dataclass(frozen=True)
class FrequencySet:
    """Cells of one node: label codes ``codes[c, i]`` of QI ``i`` at ``levels[i]``,
    sensitive value ``s[c]``, count ``n[c]`` (cells are distinct)."""

    levels: Levels
    codes: IntArray
    s: IntArray
    n: IntArray

    @property
    def cells(self) -> int:
        return int(self.n.shape[0])


@dataclass(frozen=True)
class Groups:
    """The QI-groups of a node: label codes ``codes[g, i]`` and ``counts[g, v]``."""

    codes: IntArray
    counts: IntArray

    @property
    def sizes(self) -> IntArray:
        out: IntArray = self.counts.sum(axis=1)
        return out


class Rollup:
    """Frequency sets on demand, each rolled up from the smallest cached finer one."""

    def __init__(
        self,
        trees: Sequence[QITree],
        leaves: Sequence[IntArray],
        s_codes: IntArray,
        n_values: int,
        cache_size: int = 32,
        weights: IntArray | None = None,
    ) -> None:
        """``leaves[i][r]``, ``s_codes[r]``: row ``r``'s leaf of QI ``i`` and sensitive code;
        ``weights[r]``: its records (``None``: one each), so the bottom node is counted from
        a histogram of distinct tuples as from the records."""
        self.trees = tuple(trees)
        self.n_values = n_values
        self.cache_size = cache_size
        self.rollups = 0
        self.cells_read = 0
        self._maps: dict[tuple[int, int, int], IntArray] = {}
        bottom_levels = tuple(0 for _ in trees)
        self.bottom = self._aggregate(bottom_levels, list(leaves), s_codes, weights)
        self._cache: OrderedDict[Levels, FrequencySet] = OrderedDict()

    def _cards(self, levels: Levels) -> list[int]:
        return [len(t.labels[lv]) for t, lv in zip(self.trees, levels, strict=True)]

    def _aggregate(
        self, levels: Levels, cols: list[IntArray], s: IntArray, n: IntArray | None
    ) -> FrequencySet:
        key, _ = combine([*cols, s], [*self._cards(levels), self.n_values])
        uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        if n is None:
            counts = np.bincount(inverse, minlength=uniq.shape[0]).astype(np.int64)
        else:
            counts = np.bincount(inverse, weights=n, minlength=uniq.shape[0]).astype(np.int64)
        codes = (
            np.column_stack([c[first] for c in cols])
            if cols
            else np.zeros((uniq.shape[0], 0), np.int64)
        )
        return FrequencySet(levels, codes.astype(np.int64), s[first], counts)

    def _map(self, qi: int, low: int, high: int) -> IntArray:
        key = (qi, low, high)
        found = self._maps.get(key)
        if found is None:
            found = self._maps[key] = self.trees[qi].parent_map(low, high)
        return found

    def at(self, levels: Levels) -> FrequencySet:
        """The frequency set of node ``levels``."""
        levels = tuple(int(x) for x in levels)
        if all(x == 0 for x in levels):
            return self.bottom
        hit = self._cache.get(levels)
        if hit is not None:
            self._cache.move_to_end(levels)
            return hit
        source = self.bottom
        for fs in self._cache.values():
            if fs.cells < source.cells and all(
                a <= b for a, b in zip(fs.levels, levels, strict=True)
            ):
                source = fs
        cols = [
            self._map(i, lo, hi)[source.codes[:, i]] if lo != hi else source.codes[:, i]
            for i, (lo, hi) in enumerate(zip(source.levels, levels, strict=True))
        ]
        fs = self._aggregate(levels, cols, source.s, source.n)
        self.rollups += 1
        self.cells_read += source.cells
        self._cache[levels] = fs
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return fs

    def groups(self, fs: FrequencySet) -> Groups:
        """Group the cells of ``fs`` by their QI labels: the node's bucketization."""
        key, _ = combine([fs.codes[:, i] for i in range(fs.codes.shape[1])], self._cards(fs.levels))
        uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        g = uniq.shape[0]
        flat = inverse.reshape(-1) * self.n_values + fs.s
        counts = np.bincount(flat, weights=fs.n, minlength=g * self.n_values)
        return Groups(fs.codes[first], counts.reshape(g, self.n_values).astype(np.int64))
