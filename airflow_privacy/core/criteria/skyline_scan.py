"""The single scan behind the privacy skyline: per sensitive value, the two best groups.

Chen, LeFevre, Ramakrishnan, "Privacy Skyline: Privacy with Multidimensional Adversarial
Knowledge" (VLDB 2007), the talk's slides "Five Sufficient Statistics" and "SkylineCheck
Algorithm": the check keeps a few sufficient statistics per skyline point, updated in one
scan over the QI-groups, instead of a dynamic program over groups (Martin et al. 2007). The
statistics, in log space (docs/skyline.md derives them):

* target cost, for the target person ``t`` in group ``B`` with sensitive value ``s``, ``l``
  values ruled out for ``t``, ``k_B`` known people and ``m_B`` implications in ``B``::

      log( max(0, R_l - k_B) * H(n - k_B - 1, n_s, m_B) / n_s )

  with ``R_l = n - n_s - (the l largest counts other than s)``;
* other cost, for ``k_G`` known people and ``m_G`` implications in another group ``G``::

      log H(N - k_G, c_G, m_G)

  where ``H(N, c, m) = C(N - c, m) / C(N, m)`` is the chance that ``m`` people drawn from
  ``N`` (``c`` of whom hold ``s``) hold no ``s``.

Both are kept, for every value ``s`` and every requested budget, for the **two** best groups
(distinct groups), so that the combination step can require ``G != B`` without a second
pass: if the best target group and the best other group coincide, the answer uses one of the
runners-up. A cost of ``-inf`` means a certain disclosure (the knowledge leaves ``t`` no other
value); ``+inf`` means "no such group" (``s`` absent from every group, or a single group).

Placements that need more people than a group has are never required: the costs saturate at
``-inf`` before a group runs out of people (docs/skyline.md, "Feasibility"), so the scan
evaluates the closed forms without bounds checks and the exact evaluation
(:mod:`airflow_privacy.core.criteria.skyline`) trims the witness to a feasible placement.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

Budget = tuple[int, int]
"""``(k, m)``: known people and implications placed in one group."""

# elements (values x groups) per chunk: bounded temporaries whatever the number of groups
_CHUNK_ELEMENTS = 1 << 18


@dataclass(frozen=True)
class TopTwo:
    """The two smallest costs over groups and their groups, for every value.

    ``cost[s]`` holds ``(best, runner-up)`` and ``group[s]`` the group indices (``-1`` with
    cost ``+inf`` when there is no such group). The two groups differ.
    """

    cost: FloatArray  # (S, 2)
    group: IntArray  # (S, 2)


@dataclass(frozen=True)
class ScanTables:
    """Result of one scan: ``target[(l, k_B, m_B)]`` and ``other[(k_G, m_G)]``."""

    target: dict[tuple[int, int, int], TopTwo]
    other: dict[Budget, TopTwo]


def _empty(n_values: int) -> TopTwo:
    return TopTwo(np.full((n_values, 2), np.inf), np.full((n_values, 2), -1, dtype=np.int64))


def _merge(top: TopTwo, cost: FloatArray, offset: int) -> None:
    """Fold a chunk's costs ``cost[s, g]`` (groups ``offset + g``) into ``top``.

    ``cost`` is modified and restored (no copy). Ties go to the smaller group index (earlier
    chunks first, ``argmin`` takes the first minimum), so results do not depend on the chunk
    size.
    """
    rows = np.arange(cost.shape[0])
    i1 = np.argmin(cost, axis=1)
    v1 = cost[rows, i1]
    if cost.shape[1] > 1:
        cost[rows, i1] = np.inf
        i2 = np.argmin(cost, axis=1)
        v2 = cost[rows, i2]
        cost[rows, i1] = v1
    else:
        i2 = np.zeros_like(i1)
        v2 = np.full_like(v1, np.inf)
    g1 = np.where(np.isposinf(v1), -1, i1 + offset)
    g2 = np.where(np.isposinf(v2), -1, i2 + offset)
    costs = np.column_stack([top.cost[:, 0], top.cost[:, 1], v1, v2])
    groups = np.column_stack([top.group[:, 0], top.group[:, 1], g1, g2])
    order = np.argsort(costs, axis=1, kind="stable")[:, :2]
    top.cost[:] = np.take_along_axis(costs, order, axis=1)
    top.group[:] = np.take_along_axis(groups, order, axis=1)


def _log_table(size: int) -> FloatArray:
    """``log x`` for ``x = 0 .. size`` (``log 0 = -inf``): costs are logs of small whole
    numbers, looked up instead of computed."""
    with np.errstate(divide="ignore"):
        out: FloatArray = np.log(np.arange(size + 1, dtype=np.float64))
    return out


def _draw_terms(
    count: IntArray, people: IntArray, size: int, logs: FloatArray, start: int = 0
) -> list[FloatArray]:
    """``f_j = log(1 - count / (people - j))`` for ``j = 0 .. size - 1``: the log chance that
    one more person drawn from the ``people - j`` left does not hold the value (``count``
    copies). ``-inf`` once no person without the value is left; ``0`` where ``count = 0``
    (whatever ``j``). ``people`` is per group (``1 x g``), ``count`` per value and group;
    terms ``j < start`` are not recomputed."""
    out: list[FloatArray] = []
    for j in range(start, size):
        left = np.maximum(people - j, 1)  # 1 x g
        free = left - count
        np.maximum(free, 0, out=free)
        term = np.take(logs, free)
        term -= np.take(logs, left)
        out.append(term)
    return out


def _by_k(budgets: Iterable[Budget]) -> dict[int, list[int]]:
    """Requested budgets grouped by ``k``, each list of ``m`` ascending."""
    out: dict[int, set[int]] = {}
    for k, m in budgets:
        out.setdefault(int(k), set()).add(int(m))
    return {k: sorted(ms) for k, ms in sorted(out.items())}


@dataclass
class _Chunk:
    """One chunk of groups, transposed (``values x groups``), with what every scan of it
    reuses: sizes, the draw terms ``f_j`` and, per ``l``, the remaining counts ``R_l``."""

    offset: int
    block: IntArray  # (S, g)
    n: IntArray  # (1, g)
    terms: list[FloatArray]
    remaining: dict[int, IntArray]
    neg_log_ns: FloatArray | None = None


class Scanner:
    """Scans the groups of one release for requested tables (:meth:`tables`).

    The explorer asks for a few tables at a time as it walks the staircase; per-chunk work
    that does not depend on the request (transposition, draw terms, ``R_l``) is kept between
    scans while it fits in ``cache_bytes``, and recomputed otherwise.
    """

    def __init__(self, counts: IntArray, cache_bytes: int = 256 << 20) -> None:
        self.counts = np.asarray(counts, dtype=np.int64)
        self.n_values = int(self.counts.shape[1])
        self.logs = _log_table(int(self.counts.sum(axis=1).max()) + 1)
        self.chunk = max(1, _CHUNK_ELEMENTS // max(self.n_values, 1))
        self.cache_bytes = cache_bytes
        self._chunks: list[_Chunk] | None = None

    def _cached_bytes(self, chunks: list[_Chunk]) -> int:
        return sum(c.block.nbytes * (1 + len(c.terms) + len(c.remaining)) for c in chunks)

    def _prepare(self, lo: int) -> _Chunk:
        block = np.ascontiguousarray(self.counts[lo : lo + self.chunk].T)  # (S, g)
        return _Chunk(lo, block, block.sum(axis=0)[None, :], [], {})

    def tables(self, target: Mapping[int, Iterable[Budget]], other: Iterable[Budget]) -> ScanTables:
        """One pass over the groups computing the requested tables: ``target`` maps each
        ``l`` to the ``(k_B, m_B)`` budgets wanted, ``other`` lists the ``(k_G, m_G)``."""
        t_req = {int(l): _by_k(b) for l, b in target.items()}  # noqa: E741
        o_req = _by_k(other)
        t_out = {
            (l, k, m): _empty(self.n_values)
            for l, req in t_req.items()  # noqa: E741
            for k, ms in req.items()
            for m in ms
        }
        o_out = {(k, m): _empty(self.n_values) for k, ms in o_req.items() for m in ms}
        reach = max(
            [k + 1 + m for req in t_req.values() for k, ms in req.items() for m in ms]
            + [k + m for k, ms in o_req.items() for m in ms]
            + [0]
        )
        cached = self._chunks
        kept: list[_Chunk] = []
        for lo in range(0, self.counts.shape[0], self.chunk):
            ch = cached[lo // self.chunk] if cached is not None else self._prepare(lo)
            # f_j = log(1 - n_s / (n - j)): B's i-th implication uses j = k_B + 1 + i (t and
            # the known people are not drawn), G's uses j = k_G + i; one list serves both
            if len(ch.terms) < reach:
                ch.terms.extend(_draw_terms(ch.block, ch.n, reach, self.logs, len(ch.terms)))
            for l in t_req:  # noqa: E741
                if l not in ch.remaining:
                    ch.remaining[l] = _remaining(ch.block, ch.n, l)
            _scan_target(ch, t_req, t_out, self.logs)
            for k, ms in o_req.items():
                run = np.zeros(ch.block.shape, dtype=np.float64)
                done = 0
                for m in ms:
                    for j in range(done, m):
                        run = run + ch.terms[k + j]
                    done = m
                    _merge(o_out[(k, m)], run, ch.offset)
            kept.append(ch)
        if cached is None and self._cached_bytes(kept) <= self.cache_bytes:
            self._chunks = kept
        elif cached is not None and self._cached_bytes(kept) > self.cache_bytes:
            self._chunks = None  # grew too large: recompute from now on
        return ScanTables(t_out, o_out)


def scan(
    counts: IntArray,
    target: Mapping[int, Iterable[Budget]],
    other: Iterable[Budget],
) -> ScanTables:
    """One pass over the groups computing the requested tables (see :class:`Scanner`)."""
    return Scanner(counts, cache_bytes=0).tables(target, other)


def _remaining(block: IntArray, n: IntArray, l: int) -> IntArray:  # noqa: E741
    """``R_l = n - n_s - (the l largest counts other than s)`` for every value and group:
    drop ``s`` from the ``l + 1`` largest counts if it is among them."""
    if l == 0:
        out0: IntArray = n - block
        return out0
    cols = block.shape[1]
    srt = -np.sort(-block.T, axis=1)[:, : l + 1].T  # rows are contiguous before .T
    if srt.shape[0] < l + 1:
        srt = np.concatenate([srt, np.zeros((l + 1 - srt.shape[0], cols), np.int64)], axis=0)
    top = srt[:l].sum(axis=0)[None, :]
    top_l = np.where(block >= srt[l : l + 1], top + srt[l : l + 1] - block, top)
    out: IntArray = n - block - top_l
    return out


def _scan_target(
    ch: _Chunk,
    t_req: dict[int, dict[int, list[int]]],
    out: dict[tuple[int, int, int], TopTwo],
    logs: FloatArray,
) -> None:
    if ch.neg_log_ns is None:  # -log n_s, and +inf where n_s = 0 (s cannot be the target's)
        ch.neg_log_ns = np.where(ch.block > 0, -np.take(logs, np.maximum(ch.block, 1)), np.inf)
    neg_log_ns = ch.neg_log_ns
    for l, req in t_req.items():  # noqa: E741
        r = ch.remaining[l]
        for k, ms in req.items():
            run = np.take(logs, np.maximum(r - k, 0))
            with np.errstate(invalid="ignore"):  # -inf + inf where n_s = 0 and R <= k
                run += neg_log_ns
            run[np.isnan(run)] = np.inf
            done = 0
            for m in ms:
                for j in range(done, m):
                    run = run + ch.terms[k + 1 + j]
                done = m
                _merge(out[(l, k, m)], run, ch.offset)
