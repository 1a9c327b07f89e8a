"""The lattice of full-domain generalizations of one table, and its node ranking.

Shared by the lattice anonymizer (:mod:`airflow_privacy.core.anonymize.lattice`) and the
algorithm-aware audit and safe mode (:mod:`airflow_privacy.core.algorithm_aware`), which
reason about the same nodes in the same order: :func:`qi_trees` (a checked tree per QI),
:class:`LatticeProblem` (the input bound to its hierarchies, with everything a node check
needs) and :func:`lattice_order` (every node ranked by ``(utility rank, height, levels)``,
the order in which the lattice anonymizer effectively considers its nodes; Zhang et al.
2007 reason about a disclosure algorithm through exactly such a candidate order).

The algorithm-aware package imports this module; nothing here imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.anonymize.encoding import Column, Encoded, combine
from airflow_privacy.core.anonymize.hierarchies import QITree, flat, tree
from airflow_privacy.core.anonymize.monotone import prunes
from airflow_privacy.core.anonymize.release import Progress, counts_bucketization
from airflow_privacy.core.anonymize.rollup import Groups, Rollup
from airflow_privacy.core.anonymize.search import Lattice, Levels
from airflow_privacy.core.anonymize.utility import (
    LabelCosts,
    categorical_loss,
    nue_constant,
    numeric_loss,
    rank_key,
    summarize,
)
from airflow_privacy.core.hierarchy import Hierarchy
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError, opt

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: How a search other than the lattice's own picks the published node (the algorithm-aware
#: safe mode, :func:`airflow_privacy.core.algorithm_aware.lattice_mode.safe_lattice_choice`):
#: ``choose(problem, metric, exact_limit, progress) -> (levels, record for the manifest)``.
NodeChooser = Callable[["LatticeProblem", str, int, Progress], tuple[Levels, dict[str, Any]]]


def qi_trees(
    enc: Encoded,
    hierarchies: Mapping[str, Hierarchy] | None,
    population: Sequence[Column] | None = None,
) -> list[QITree]:
    """A checked tree per QI: its hierarchy, or the implicit (value, ``*``) one (over the
    values of the release and of the ``population``, when given)."""
    given = dict(hierarchies or {})
    extra = {c.name: c.values for c in population or ()}
    out = []
    for col in enc.qis:
        h = given.get(col.name)
        if h is None:
            out.append(flat(col.name, (*col.values, *extra.get(col.name, ()))))
        else:
            if not isinstance(h, Hierarchy):
                raise InputError(f"the hierarchy for column {col.name!r} is not a Hierarchy")
            out.append(tree(h, col.name))
    return out


class LatticeProblem:
    """The input bound to its hierarchies, with everything a node check needs.

    ``population`` (the QI columns of a population table, encoded like the input's) is
    generalized with the same trees and rolled up beside the input: at every node each
    group gets the size of its population class, and the population classes no kept group
    falls in (those of suppressed groups included) are the rest (``Bucketization.population``;
    k-map against a population table, delta-presence)."""

    def __init__(
        self,
        enc: Encoded,
        criteria: CriteriaSet,
        trees: Sequence[QITree],
        budget: int,
        population: Sequence[Column] | None = None,
        population_weights: IntArray | None = None,
    ) -> None:
        self.enc = enc
        self.criteria = criteria.bind(enc.sensitive.values)
        self.trees = list(trees)
        self.budget = budget
        self.leaves = [
            t.bind(col.values)[col.codes] for t, col in zip(self.trees, enc.qis, strict=True)
        ]
        self.values = enc.sensitive.values
        self.weights = enc.row_weights()
        self.totals = np.bincount(
            enc.sensitive.codes, weights=self.weights, minlength=len(self.values)
        ).astype(np.int64)
        self.lattice = Lattice(tuple(t.height for t in self.trees))
        self.rollup = Rollup(
            self.trees, self.leaves, enc.sensitive.codes, len(self.values),
            weights=enc.weights,
        )  # fmt: skip
        every = list(range(len(self.criteria.items)))
        self.monotone = [i for i in every if prunes(self.criteria.items[i], budget > 0)]
        self.rest = [i for i in every if i not in self.monotone]
        self.all = every
        self.population: Rollup | None = None
        self.population_records = 0
        if population is not None:
            self.population = self._population_rollup(population, population_weights)

    def records(self) -> tuple[list[IntArray], IntArray]:
        """Every record's leaf per QI and sensitive code (a histogram's rows repeated by
        their weights): for the steps that reason about individual records (the
        algorithm-aware safe mode's possible worlds, Zhang et al. 2007, section 3)."""
        w = self.enc.weights
        if w is None:
            return list(self.leaves), self.enc.sensitive.codes
        leaves = [np.repeat(lv, w).astype(np.int64) for lv in self.leaves]
        return leaves, np.repeat(self.enc.sensitive.codes, w).astype(np.int64)

    def _population_rollup(
        self, population: Sequence[Column], weights: IntArray | None = None
    ) -> Rollup:
        """The population's bottom node, checked to contain the input's (module doc);
        ``weights[r]``: the records of population row ``r`` when the population is given
        by its counts (one row per distinct QI tuple)."""
        names = [c.name for c in population]
        if names != list(self.enc.qi_names):
            raise InputError(f"the population's columns {names} are not the QIs")
        leaves = []
        for t, col in zip(self.trees, population, strict=True):
            try:
                leaves.append(t.bind(col.values)[col.codes])
            except InputError as exc:
                raise InputError(f"{opt('population')}: {exc}") from None
        rows = int(population[0].codes.shape[0]) if population else 0
        self.population_records = rows if weights is None else int(weights.sum())
        rollup = Rollup(self.trees, leaves, np.zeros(rows, dtype=np.int64), 1, weights=weights)
        bottom = tuple(0 for _ in self.trees)
        g = self.groups(bottom)
        pop, _ = self._match(bottom, g.codes, rollup)
        short = np.flatnonzero(pop < g.sizes)
        if short.size:
            j = int(short[0])
            label = ", ".join(
                f"{t.column}={t.labels[0][int(c)]}"
                for t, c in zip(self.trees, g.codes[j], strict=True)
            )
            more = f" ({short.size} groups are)" if short.size > 1 else ""
            raise InputError(
                f"{opt('population')} does not contain the input: group '{label}' has "
                f"{int(g.sizes[j])} records in the input but {int(pop[j])} in the population"
                f"{more}"
            )
        return rollup

    def _match(self, levels: Levels, codes: IntArray, rollup: Rollup) -> tuple[IntArray, IntArray]:
        """``(F, rest)`` at node ``levels``: the population class size of every group whose
        label codes are the rows of ``codes`` (0 where the population has none), and the
        sizes of the population classes no such group falls in."""
        pg = rollup.groups(rollup.at(levels))
        sizes = pg.counts[:, 0]
        q = len(self.trees)
        cards = [len(t.labels[lv]) for t, lv in zip(self.trees, levels, strict=True)]
        both = np.vstack([codes.reshape(-1, q), pg.codes.reshape(-1, q)])
        key, _ = combine([both[:, i] for i in range(q)], cards)
        _, inverse = np.unique(key, return_inverse=True)
        inverse = inverse.reshape(-1)
        n_own = codes.shape[0]
        own, theirs = inverse[:n_own], inverse[n_own:]
        size_of = np.zeros(int(inverse.max()) + 1 if inverse.size else 0, dtype=np.int64)
        size_of[theirs] = sizes
        matched = np.zeros(size_of.shape[0], dtype=bool)
        matched[own] = True
        rest: IntArray = sizes[~matched[theirs]].astype(np.int64)
        return size_of[own].astype(np.int64), rest

    def population_of(self, levels: Levels, codes: IntArray) -> tuple[IntArray, IntArray] | None:
        """``(F, rest)`` for the groups ``codes`` of node ``levels`` (:meth:`_match`), or
        ``None`` without a population."""
        if self.population is None:
            return None
        return self._match(levels, codes, self.population)

    def groups(self, levels: Levels) -> Groups:
        return self.rollup.groups(self.rollup.at(levels))

    def kept(
        self,
        counts: IntArray,
        suppress_by: Sequence[int],
        population: tuple[IntArray, IntArray] | None = None,
    ) -> BoolArray | None:
        """Groups kept after suppression, or ``None`` if the budget does not suffice."""
        if self.budget <= 0:
            return np.ones(counts.shape[0], dtype=bool)
        ok = self.criteria.groups_passing(
            counts, self.totals, suppress_by, None if population is None else population[0]
        )
        if not ok.any() or int(counts[~ok].sum()) > self.budget:
            return None
        return ok

    def bucketization(
        self,
        counts: IntArray,
        keep: BoolArray,
        population: tuple[IntArray, IntArray] | None,
    ) -> Bucketization:
        """The kept groups as a release; a suppressed group's population class has no
        released record, so it joins the rest."""
        b = counts_bucketization(counts[keep], self.values, self.enc.sensitive.name)
        if population is None:
            return b
        pop, rest = population
        return b.with_population(pop[keep], [*rest.tolist(), *pop[~keep].tolist()])

    def node(self, levels: Levels) -> tuple[Groups, tuple[IntArray, IntArray] | None]:
        """The groups of node ``levels`` and their population counts (or ``None``)."""
        g = self.groups(levels)
        return g, self.population_of(levels, g.codes)

    def passes(self, levels: Levels, subset: Sequence[int], suppress_by: Sequence[int]) -> bool:
        g, pop = self.node(levels)
        keep = self.kept(g.counts, suppress_by, pop)
        if keep is None:
            return False
        return self.criteria.passes(self.bucketization(g.counts, keep, pop), subset)

    def check_monotone(self, levels: Levels) -> bool:
        return self.passes(levels, self.monotone, self.monotone)

    def check_rest(self, levels: Levels) -> bool:
        return self.passes(levels, self.rest, self.all)

    def check(self, levels: Levels) -> bool:
        """The full verdict of a node (all criteria, suppression by all)."""
        return self.passes(levels, self.all, self.all)

    # ------------------------------------------------------------------ utility
    def nue_constant(self) -> float:
        """The constant of the non-uniform entropy metric for this input."""
        return nue_constant(
            [
                np.bincount(lv, weights=self.weights, minlength=len(t.leaves)).astype(np.int64)
                for t, lv in zip(self.trees, self.leaves, strict=True)
            ]
        )

    def label_costs(self) -> list[list[LabelCosts]]:
        """Loss and covered-record count of every label, per QI and level."""
        out = []
        for t, leaves in zip(self.trees, self.leaves, strict=True):
            leaf_counts = np.bincount(leaves, weights=self.weights, minlength=len(t.leaves)).astype(
                np.float64
            )
            numbers = t.numeric_leaves()
            per_level = []
            for level in range(t.height):
                codes = t.leaf_codes[level]
                n_labels = len(t.labels[level])
                covered = np.bincount(codes, weights=leaf_counts, minlength=n_labels).astype(
                    np.float64
                )
                if numbers is not None and len(t.leaves) > 1:
                    low = np.full(n_labels, np.inf)
                    high = np.full(n_labels, -np.inf)
                    np.minimum.at(low, codes, numbers)
                    np.maximum.at(high, codes, numbers)
                    loss = numeric_loss(low, high, float(numbers.min()), float(numbers.max()))
                else:
                    loss = categorical_loss(t.leaves_under(level), len(t.leaves))
                per_level.append(LabelCosts(loss, covered))
            out.append(per_level)
        return out

    def utility(
        self, levels: Levels, costs: list[list[LabelCosts]], c0: float
    ) -> dict[str, float | None]:
        g, pop = self.node(levels)
        keep = self.kept(g.counts, self.all, pop)
        if keep is None:  # pragma: no cover - only called on passing nodes
            raise RuntimeError("utility of a node that does not pass")
        sizes = g.sizes[keep]
        codes = g.codes[keep]
        q = len(self.trees)
        loss = np.column_stack([costs[i][levels[i]].loss[codes[:, i]] for i in range(q)])
        covered = np.column_stack([costs[i][levels[i]].covered[codes[:, i]] for i in range(q)])
        prec = sum(levels[i] / (t.height - 1) for i, t in enumerate(self.trees) if t.height > 1)
        return summarize(
            sizes,
            loss,
            np.log2(np.maximum(covered, 1.0)),
            c0,
            self.enc.n,
            int(g.sizes[~keep].sum()),
            np.full(sizes.shape[0], float(prec)),
        )


def lattice_order(problem: LatticeProblem, metric: str) -> list[Levels]:
    """All nodes of ``problem`` (without suppression) sorted by ``(utility rank, height,
    levels)``: the lattice anonymizer's ranking of its minimal nodes, applied to every
    node (:mod:`airflow_privacy.core.algorithm_aware.candidates` explains why the first
    passing node of this order is the node the lattice search publishes)."""
    costs = problem.label_costs()
    c0 = problem.nue_constant()
    keyed = []
    for idx in range(problem.lattice.size):
        node = problem.lattice.levels(idx)
        keyed.append(node_rank(metric, problem.utility(node, costs, c0), node))
    keyed.sort()
    return [node for _, _, node in keyed]


def node_rank(
    metric: str, values: dict[str, float | None], node: Levels
) -> tuple[float, int, Levels]:
    """The one ranking of nodes: utility rank under ``metric``, then height, then levels
    (the lattice search's choice among minimal nodes, and :func:`lattice_order`)."""
    return (rank_key(metric, values), sum(node), node)
