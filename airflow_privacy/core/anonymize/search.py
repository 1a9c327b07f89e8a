"""Search of a generalization lattice for all minimal passing nodes.

A node gives every quasi-identifier one hierarchy level; node ``a`` is below ``b`` when
every level of ``a`` is at most that of ``b`` (Incognito, LeFevre et al. 2005). The search
takes two predicates on nodes:

* ``check_monotone``: the conjunction of the monotone criteria (merging groups keeps them
  passing, :mod:`airflow_privacy.core.anonymize.monotone`; Theorem 14 of Martin et al. 2007
  for (c,k)-safety). It is searched Flash-style (Kohlmayer et al. 2012, the FLASH algorithm): walk
  upward paths from the bottom, binary-search each path, and tag the whole cone a check
  decides (a passing node makes every coarser node pass, a failing node every finer node
  fail), so most nodes are never checked.
* ``check_rest``: the criteria that are not known to be monotone. Nothing is inferred from
  them. A node is minimal when it passes and no node below it passes, so the search visits
  nodes bottom-up and checks a node only when the monotone part passes there and no node
  below it is already known to pass; every other node either fails or cannot be minimal.

The result lists every minimal node (exactly the ones an exhaustive evaluation finds:
``tests/core/anonymize/test_anonymize_lattice.py``) and what was checked.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from airflow_privacy.errors import InputError

Levels = tuple[int, ...]
UNKNOWN, PASS, FAIL = 0, 1, 2


@dataclass(frozen=True)
class Lattice:
    """The product of the hierarchies' levels: ``heights[i]`` levels for QI ``i``."""

    heights: tuple[int, ...]

    def __post_init__(self) -> None:
        if not self.heights or any(h < 1 for h in self.heights):
            raise InputError("every hierarchy needs at least one level")

    @property
    def size(self) -> int:
        return int(np.prod(self.heights, dtype=np.int64))

    @property
    def top(self) -> Levels:
        return tuple(h - 1 for h in self.heights)

    @property
    def max_height(self) -> int:
        return sum(self.heights) - len(self.heights)

    def strides(self) -> tuple[int, ...]:
        out = []
        acc = 1
        for h in reversed(self.heights):
            out.append(acc)
            acc *= h
        return tuple(reversed(out))

    def index(self, levels: Levels) -> int:
        return int(np.ravel_multi_index(levels, self.heights))

    def levels(self, index: int) -> Levels:
        return tuple(int(x) for x in np.unravel_index(index, self.heights))

    def all_levels(self) -> npt.NDArray[np.int64]:
        """``(size, q)`` array: the levels of every node, in index order."""
        grids = np.indices(self.heights).reshape(len(self.heights), -1).T
        return grids.astype(np.int64)


@dataclass
class SearchResult:
    """Minimal passing nodes and the path the search took."""

    minimal: list[Levels]
    checked: list[tuple[Levels, str, bool]]
    """Every check in order: (node, "monotone" or "rest", passed)."""
    inferred_pass: int
    inferred_fail: int
    lattice_size: int
    status: npt.NDArray[np.int8] = field(repr=False)
    """Per node (index order): PASS / FAIL of the monotone part."""

    @property
    def nodes_checked(self) -> int:
        return len({node for node, _, _ in self.checked})


class _Walker:
    def __init__(self, lattice: Lattice) -> None:
        self.lattice = lattice
        self.levels = lattice.all_levels()
        self.strides = lattice.strides()
        self.heights = lattice.heights
        self.status = np.zeros(lattice.size, dtype=np.int8)
        self.height = self.levels.sum(axis=1)

    def up(self, node: int) -> list[int]:
        lv = self.levels[node]
        return [node + s for i, s in enumerate(self.strides) if lv[i] < self.heights[i] - 1]

    def down(self, node: int) -> list[int]:
        lv = self.levels[node]
        return [node - s for i, s in enumerate(self.strides) if lv[i] > 0]

    def tag(self, node: int, value: int) -> int:
        """Tag ``node`` and its whole cone (upward for PASS, downward for FAIL); returns how
        many nodes were newly tagged besides ``node``."""
        step = self.up if value == PASS else self.down
        self.status[node] = value
        stack = [node]
        count = 0
        while stack:
            x = stack.pop()
            for y in step(x):
                if self.status[y] == UNKNOWN:
                    self.status[y] = value
                    count += 1
                    stack.append(y)
        return count


def search(
    lattice: Lattice,
    check_monotone: Callable[[Levels], bool] | None,
    check_rest: Callable[[Levels], bool] | None,
    progress: Callable[[str], None] | None = None,
) -> SearchResult:
    """All minimal nodes passing ``check_monotone`` (assumed monotone) and ``check_rest``
    (assumed nothing); ``None`` means "always passes"."""
    w = _Walker(lattice)
    checked: list[tuple[Levels, str, bool]] = []
    inferred = {PASS: 0, FAIL: 0}
    report = progress or (lambda _msg: None)

    def run_monotone(node: int) -> bool:
        assert check_monotone is not None
        lv = lattice.levels(node)
        ok = bool(check_monotone(lv))
        checked.append((lv, "monotone", ok))
        if len(checked) % 50 == 0:
            report(f"lattice: {len(checked)} checks, {int((w.status != 0).sum())} of "
                   f"{lattice.size} nodes decided")  # fmt: skip
        return ok

    if check_monotone is None:
        w.status[:] = PASS
    else:
        _flash(w, run_monotone, inferred)

    # Minimal nodes: pass, and no node below passes. Bottom-up by height.
    size = lattice.size
    below = np.zeros(size, dtype=bool)  # some node strictly below passes overall
    passes = np.zeros(size, dtype=bool)
    order = np.lexsort((np.arange(size), w.height))
    rest_checks = 0
    for node in order.tolist():
        preds = w.down(node)
        b = any(passes[p] or below[p] for p in preds)
        below[node] = b
        if w.status[node] != PASS:
            continue
        if check_rest is None:
            passes[node] = True
            continue
        if b:
            continue  # cannot be minimal; its verdict is not needed
        lv = lattice.levels(node)
        ok = bool(check_rest(lv))
        checked.append((lv, "rest", ok))
        rest_checks += 1
        if rest_checks % 50 == 0:
            report(f"lattice: {rest_checks} checks of the non-monotone criteria")
        passes[node] = ok
    minimal = [lattice.levels(int(i)) for i in np.flatnonzero(passes & ~below)]
    return SearchResult(
        minimal=minimal,
        checked=checked,
        inferred_pass=inferred[PASS],
        inferred_fail=inferred[FAIL],
        lattice_size=size,
        status=w.status,
    )


def _flash(w: _Walker, check: Callable[[int], bool], inferred: dict[int, int]) -> None:
    """Kohlmayer et al. 2012, FLASH: binary search on paths
    (CHECKPATH) and predictive tagging; leaves every node tagged PASS or FAIL."""
    heap: list[tuple[int, int]] = []

    def find_path(node: int) -> list[int]:
        path = [node]
        while True:
            nxt = next((y for y in w.up(path[-1]) if w.status[y] == UNKNOWN), None)
            if nxt is None:
                return path
            path.append(nxt)

    def check_path(path: Sequence[int]) -> None:
        low, high = 0, len(path) - 1
        while low <= high:
            mid = (low + high) // 2
            node = path[mid]
            if w.status[node] == UNKNOWN:
                ok = check(node)
                inferred[PASS if ok else FAIL] += w.tag(node, PASS if ok else FAIL)
            if w.status[node] == PASS:
                high = mid - 1
            else:
                heapq.heappush(heap, (int(w.height[node]), node))
                low = mid + 1

    def drain() -> None:
        while heap:
            _, node = heapq.heappop(heap)
            for up in w.up(node):
                if w.status[up] == UNKNOWN:
                    check_path(find_path(up))

    order = np.lexsort((np.arange(w.status.shape[0]), w.height))
    for node in order.tolist():
        if w.status[node] == UNKNOWN:
            check_path(find_path(node))
            drain()


def minimal_nodes(lattice: Lattice, passes: npt.NDArray[np.bool_]) -> list[Levels]:
    """The minimal nodes of a complete verdict (``passes[i]`` for every node index ``i``):
    passing nodes with no passing node below them. Used with every node checked (the
    benchmark's baseline)."""
    w = _Walker(lattice)
    below = np.zeros(lattice.size, dtype=bool)
    for node in np.lexsort((np.arange(lattice.size), w.height)).tolist():
        below[node] = any(passes[p] or below[p] for p in w.down(node))
    return [lattice.levels(int(i)) for i in np.flatnonzero(passes & ~below)]
