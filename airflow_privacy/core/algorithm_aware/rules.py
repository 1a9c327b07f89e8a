"""Deterministic disclosure functions (DDFs): when does the algorithm stop?

Zhang et al. 2007, section 2: a DDF maps the true state ``x`` to the block it discloses;
the *disclosure set* of a release is the set of states the DDF maps to the same answer. For
a sequential algorithm over candidates ``T_1 .. T_n`` that stops at the first candidate
whose *stopping test* ``stop(i, s_i(x))`` holds (a test that depends on ``x`` only through
its block ``s_i(x)``), the state ``y`` leads to the release of ``T_r`` with block ``B`` iff
``y`` is in ``B``, ``stop(r, B)`` holds, and ``stop(i, s_i(y))`` fails for every ``i < r``.
So the disclosure set of the release is

    ``DS_r(B) = { y in B : not stop(i, s_i(y)) for every i < r }``.

Two DDFs are implemented:

* :class:`NaiveRule` — ``stop(i, s) = p(T_i(y))``, the predicate on the released table
  (any ``y`` of ``s`` shows the same table). The usual "first safe generalization".
* :class:`SafeRule` — ``stop(i, s) = p(DS_i(s))``: a candidate is released only when the
  predicate holds on the disclosure set the adversary will compute. Each ``DS_i(s)`` is the
  same set for every ``y`` in it, so the adversary who sees the release learns exactly
  ``DS_i(s)``, and ``p`` holds on it by construction: the DDF is *p-safe* in the paper's
  sense (for every true state the disclosure set satisfies ``p``). It is the
  first-p-safe-in-order DDF the paper's section 2 builds its p-optimal DDFs from: a
  candidate is skipped only when no p-safe release of it is possible given what earlier
  candidates already disclose.

  Exactness bound: the rule must enumerate ``s_i(y)``. A block larger than
  ``exact_limit`` worlds is *declined* (``stop`` is false). The size of a block depends on
  the block only, and the bound is part of the published algorithm, so declining keeps the
  rule a function of the block and the DDF stays p-safe; it only costs utility.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.algorithm_aware.model import Candidate, Population
from airflow_privacy.core.algorithm_aware.predicate import Predicate
from airflow_privacy.core.algorithm_aware.worlds import BlockEnumerator, block_size
from airflow_privacy.errors import InputError

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
Progress = Callable[[str], None]

#: Default bound on the worlds enumerated for one block.
EXACT_LIMIT = 200_000
CHUNK = 32_768
#: Cap on the integers one chunk of worlds (and of their block keys) holds.
CELLS = 4_000_000


def chunk_size(n_people: int, cells_per_world: int, cap: int = CHUNK) -> int:
    """Worlds per chunk so that ``chunk x max(people, key cells)`` stays near :data:`CELLS`."""
    return max(1, min(cap, CELLS // max(n_people, cells_per_world, 1)))


def _quiet(_message: str) -> None:
    return None


class Rule:
    """A stopping test ``stop(i, block)`` over a candidate sequence."""

    name = "rule"

    def __init__(
        self, population: Population, candidates: Sequence[Candidate], predicate: Predicate
    ) -> None:
        self.population = population
        self.candidates = list(candidates)
        self.predicate = predicate
        self.v = population.n_values

    def stops(self, i: int, worlds: IntArray) -> BoolArray:
        """For each world (row), does the algorithm stop at candidate ``i``'s block?"""
        raise NotImplementedError

    def survives(self, r: int, worlds: IntArray) -> BoolArray:
        """Worlds for which no candidate before ``r`` stops (the algorithm reaches ``r``)."""
        alive = np.ones(worlds.shape[0], dtype=bool)
        for i in range(r):
            if not alive.any():
                break
            idx = np.flatnonzero(alive)
            alive[idx] = ~self.stops(i, worlds[idx])
        return alive

    def release(self, world: IntArray) -> int | None:
        """Index of the candidate the DDF releases on ``world`` (``None``: nothing)."""
        y = world[None, :]
        for i in range(len(self.candidates)):
            if bool(self.stops(i, y)[0]):
                return i
        return None


class NaiveRule(Rule):
    """Stop at the first candidate whose released table passes the predicate."""

    name = "naive"

    def stops(self, i: int, worlds: IntArray) -> BoolArray:
        return self.predicate.table_passes(self.candidates[i].counts(worlds, self.v))


@dataclass
class Decision:
    """The safe rule's verdict on one block."""

    candidate: int
    released: bool
    block_size: int
    disclosure_set_size: int | None
    declined_too_large: bool = False
    table_fails: bool = False
    failing_people: list[int] = field(default_factory=list)


#: The most worlds a block may have to be enumerated (``exact_limit``): past it the worlds
#: (one row of counts each) no longer fit in memory; a larger block is sampled.
MAX_EXACT_LIMIT = 10_000_000


class SafeRule(Rule):
    """Stop at the first candidate whose disclosure set passes the predicate (p-safe)."""

    name = "safe"

    def __init__(
        self,
        population: Population,
        candidates: Sequence[Candidate],
        predicate: Predicate,
        exact_limit: int = EXACT_LIMIT,
        progress: Progress | None = None,
    ) -> None:
        super().__init__(population, candidates, predicate)
        predicate.check_posterior_form()
        if isinstance(exact_limit, bool) or not isinstance(exact_limit, int) or exact_limit < 1:
            raise InputError(f"exact limit must be a whole number >= 1, got {exact_limit!r}")
        if exact_limit > MAX_EXACT_LIMIT:
            raise InputError(
                f"exact limit must be at most {MAX_EXACT_LIMIT:,} worlds (enumerated in "
                f"memory), got {exact_limit:,}"
            )
        self.exact_limit = exact_limit
        self.progress = progress or _quiet
        self.memo: list[dict[bytes, Decision]] = [{} for _ in self.candidates]
        self.worlds_enumerated = 0

    def stops(self, i: int, worlds: IntArray) -> BoolArray:
        keys = self.candidates[i].counts(worlds, self.v)
        out = np.zeros(keys.shape[0], dtype=bool)
        # shortcut (exact): a block whose table fails can never be released (see decide)
        idx = np.flatnonzero(self.predicate.table_passes(keys))
        if idx.size == 0:
            return out
        flat = keys[idx].reshape(idx.size, -1)
        uniq, inverse = np.unique(flat, axis=0, return_inverse=True)
        verdict = np.array(
            [self.decide(i, row.reshape(keys.shape[1], keys.shape[2])).released for row in uniq],
            dtype=bool,
        )
        out[idx] = verdict[inverse.reshape(-1)]
        return out

    def decide(self, i: int, counts: IntArray) -> Decision:
        """``p(DS_i(s))`` for the block ``s`` with per-group multisets ``counts``."""
        key = np.ascontiguousarray(counts).tobytes()
        hit = self.memo[i].get(key)
        if hit is not None:
            return hit
        cand = self.candidates[i]
        size = block_size(counts)
        if not bool(self.predicate.table_passes(counts[None, :, :])[0]):
            # Exact shortcut: the group's distribution is the mean of its members' posteriors
            # over any subset of the block, and every disclosure-set form is convex in the
            # posterior (docs/algorithm-aware.md), so p(DS) implies p(table).
            d = Decision(i, False, size, None, table_fails=True)
            self.memo[i][key] = d
            return d
        if size > self.exact_limit:
            d = Decision(i, False, size, None, declined_too_large=True)
            self.memo[i][key] = d
            return d
        world_counts, ds = disclosure_counts(self, i, cand, counts)
        if ds == 0:
            d = Decision(i, False, size, 0)
        else:
            failing = self.predicate.people_failing(cand, world_counts)
            d = Decision(i, not failing, size, ds, failing_people=failing)
        self.memo[i][key] = d
        if size >= 10_000:
            self.progress(
                f"safe mode: candidate {cand.name}: block of {size:,} worlds, disclosure set "
                f"{ds:,}: {'release' if d.released else 'skip'}"
            )
        return d

    def decisions(self) -> int:
        return sum(len(m) for m in self.memo)


def disclosure_counts(
    rule: Rule, r: int, candidate: Candidate, counts: IntArray
) -> tuple[IntArray, int]:
    """Exact per-person value counts over ``DS_r`` of the block ``counts`` of candidate
    ``r``, and ``|DS_r|``: every world of the block enumerated and filtered by ``rule``."""
    pop = rule.population
    enum = BlockEnumerator(candidate, counts, pop.n)
    world_counts = np.zeros((pop.n, pop.n_values), dtype=np.int64)
    size = 0
    widest = max(c.n_groups for c in rule.candidates[: r + 1]) * pop.n_values
    for chunk in enum.chunks(chunk_size(pop.n, widest)):
        keep = rule.survives(r, chunk)
        kept = chunk[keep]
        size += int(kept.shape[0])
        if kept.shape[0]:
            flat = np.arange(pop.n, dtype=np.int64)[None, :] * pop.n_values + kept
            world_counts += np.bincount(flat.reshape(-1), minlength=pop.n * pop.n_values).reshape(
                pop.n, pop.n_values
            )
    if isinstance(rule, SafeRule):
        rule.worlds_enumerated += enum.size
    return world_counts, size
