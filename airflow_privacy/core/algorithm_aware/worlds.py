"""The worlds of one block: exact enumeration and uniform sampling.

The block of candidate ``T`` with per-group multisets ``M`` (a ``G x V`` count matrix) is
the set of worlds in which every group ``g`` of ``T`` holds exactly the multiset ``M[g]``:
the product over groups of the distinct arrangements of ``M[g]`` over the group's people.
Its size is the product of the multinomial coefficients ``n_g! / prod_v M[g, v]!``.

Uniform prior (the project's random-worlds assumption, Martin et al. (ICDE 2007), section 2.2):
every world of ``D`` is equally likely a priori, so conditioned on any set of worlds the
posterior is uniform on that set. Arranging each group's multiset by a uniform random
permutation gives every distinct arrangement with the same probability (each one arises
from ``prod_v M[g, v]!`` permutations), so :func:`sample_block` is uniform on the block.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.algorithm_aware.model import Candidate

IntArray = npt.NDArray[np.int64]


def multinomial(counts: Sequence[int]) -> int:
    """``(sum c)! / prod c!`` as an exact integer."""
    total = 0
    out = 1
    for c in counts:
        c = int(c)
        total += c
        out *= math.comb(total, c)
    return out


def block_size(counts: IntArray) -> int:
    """Number of worlds in the block with per-group multisets ``counts`` (``G x V``)."""
    out = 1
    for row in np.asarray(counts):
        out *= multinomial(row.tolist())
    return out


#: Counts above this are reported as ``log10`` only: JSON readers (JavaScript) lose precision
#: past 2**53, and Python refuses to print integers of more than 4,300 digits (a block of the
#: full Adult table has about 10^29,000 worlds).
EXACT_COUNT_LIMIT = 2**53


def log10_count(n: int) -> float:
    """``log10(n)`` of a non-negative integer of any size (``-inf`` for 0)."""
    return math.log10(n) if n > 0 else float("-inf")


def json_count(n: int) -> int | None:
    """``n`` when it is exactly representable in JSON readers, else ``None``."""
    return n if n <= EXACT_COUNT_LIMIT else None


def format_count(n: int) -> str:
    """``1,234`` for counts a reader can take in, ``~10^29,178.4`` for astronomically large
    ones (never converts a huge integer to decimal)."""
    if n <= EXACT_COUNT_LIMIT:
        return f"{n:,}"
    return format_log10_count(log10_count(n))


def format_log10_count(log10: float) -> str:
    """A count known by its ``log10`` only, as ``~10^29,178.4``."""
    return f"~10^{log10:,.1f}"


def arrangements(counts: Sequence[int]) -> IntArray:
    """Every distinct sequence holding ``counts[v]`` copies of value ``v`` (one per row),
    in lexicographic order of the position sets chosen for values 0, 1, ..."""
    n = int(sum(counts))
    rows = np.full((1, n), -1, dtype=np.int64)
    free = n
    for v, c in enumerate(int(x) for x in counts):
        if c == 0:
            continue
        combos = np.asarray(list(itertools.combinations(range(free), c)), dtype=np.int64)
        slots = np.nonzero(rows == -1)[1].reshape(rows.shape[0], free)
        new = np.repeat(rows, combos.shape[0], axis=0)
        target = slots[:, combos].reshape(-1, c)
        new[np.arange(new.shape[0])[:, None], target] = v
        rows = new
        free -= c
    return rows


class BlockEnumerator:
    """All worlds of one block of ``candidate``, in chunks (mixed-radix order over the
    groups' arrangements)."""

    def __init__(self, candidate: Candidate, counts: IntArray, n_people: int) -> None:
        self.members = candidate.members()
        self.per_group = [arrangements(row.tolist()) for row in np.asarray(counts)]
        self.radix = [a.shape[0] for a in self.per_group]
        self.size = math.prod(self.radix)
        self.n = n_people

    def chunks(self, chunk: int = 65_536) -> Iterator[IntArray]:
        for start in range(0, self.size, chunk):
            idx = np.arange(start, min(start + chunk, self.size), dtype=np.int64)
            out = np.empty((idx.shape[0], self.n), dtype=np.int64)
            rest = idx
            for people, arr, r in zip(
                reversed(self.members),
                reversed(self.per_group),
                reversed(self.radix),
                strict=True,
            ):
                out[:, people] = arr[rest % r]
                rest = rest // r
            yield out


def sample_block(
    candidate: Candidate, world: IntArray, size: int, rng: np.random.Generator
) -> IntArray:
    """``size`` worlds drawn uniformly from the block of ``world`` (a uniform permutation of
    every group's values)."""
    out = np.empty((size, world.shape[0]), dtype=np.int64)
    for people in candidate.members():
        vals = np.broadcast_to(world[people], (size, people.shape[0]))
        out[:, people] = rng.permuted(vals, axis=1)
    return out
