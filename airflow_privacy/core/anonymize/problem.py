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
from airflow_privacy.core.anonymize.encoding import Encoded
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
from airflow_privacy.errors import InputError

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: How a search other than the lattice's own picks the published node (the algorithm-aware
#: safe mode, :func:`airflow_privacy.core.algorithm_aware.lattice_mode.safe_lattice_choice`):
#: ``choose(problem, metric, exact_limit, progress) -> (levels, record for the manifest)``.
NodeChooser = Callable[["LatticeProblem", str, int, Progress], tuple[Levels, dict[str, Any]]]


def qi_trees(enc: Encoded, hierarchies: Mapping[str, Hierarchy] | None) -> list[QITree]:
    """A checked tree per QI: its hierarchy, or the implicit (value, ``*``) one."""
    given = dict(hierarchies or {})
    out = []
    for col in enc.qis:
        h = given.get(col.name)
        if h is None:
            out.append(flat(col.name, col.values))
        else:
            if not isinstance(h, Hierarchy):
                raise InputError(f"the hierarchy for column {col.name!r} is not a Hierarchy")
            out.append(tree(h, col.name))
    return out


class LatticeProblem:
    """The input bound to its hierarchies, with everything a node check needs."""

    def __init__(
        self,
        enc: Encoded,
        criteria: CriteriaSet,
        trees: Sequence[QITree],
        budget: int,
    ) -> None:
        self.enc = enc
        self.criteria = criteria.bind(enc.sensitive.values)
        self.trees = list(trees)
        self.budget = budget
        self.leaves = [
            t.bind(col.values)[col.codes] for t, col in zip(self.trees, enc.qis, strict=True)
        ]
        self.values = enc.sensitive.values
        self.totals = np.bincount(enc.sensitive.codes, minlength=len(self.values)).astype(np.int64)
        self.lattice = Lattice(tuple(t.height for t in self.trees))
        self.rollup = Rollup(self.trees, self.leaves, enc.sensitive.codes, len(self.values))
        every = list(range(len(self.criteria.items)))
        self.monotone = [i for i in every if prunes(self.criteria.items[i], budget > 0)]
        self.rest = [i for i in every if i not in self.monotone]
        self.all = every

    def groups(self, levels: Levels) -> Groups:
        return self.rollup.groups(self.rollup.at(levels))

    def kept(self, counts: IntArray, suppress_by: Sequence[int]) -> BoolArray | None:
        """Groups kept after suppression, or ``None`` if the budget does not suffice."""
        if self.budget <= 0:
            return np.ones(counts.shape[0], dtype=bool)
        ok = self.criteria.groups_passing(counts, self.totals, suppress_by)
        if not ok.any() or int(counts[~ok].sum()) > self.budget:
            return None
        return ok

    def passes(self, levels: Levels, subset: Sequence[int], suppress_by: Sequence[int]) -> bool:
        counts = self.groups(levels).counts
        keep = self.kept(counts, suppress_by)
        if keep is None:
            return False
        b = counts_bucketization(counts[keep], self.values, self.enc.sensitive.name)
        return self.criteria.passes(b, subset)

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
                np.bincount(lv, minlength=len(t.leaves))
                for t, lv in zip(self.trees, self.leaves, strict=True)
            ]
        )

    def label_costs(self) -> list[list[LabelCosts]]:
        """Loss and covered-record count of every label, per QI and level."""
        out = []
        for t, leaves in zip(self.trees, self.leaves, strict=True):
            leaf_counts = np.bincount(leaves, minlength=len(t.leaves)).astype(np.float64)
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
        g = self.groups(levels)
        keep = self.kept(g.counts, self.all)
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
