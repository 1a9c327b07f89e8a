"""Candidate sequences from a table: named full-domain generalizations, and the order in
which the lattice anonymizer (:mod:`airflow_privacy.core.anonymize.lattice`) effectively
considers its nodes.

A *node* gives every quasi-identifier one level of its hierarchy (a QI without a hierarchy
has two levels: the value, then ``*``). A node is named by a spec listing the QIs that are
not fully generalized: ``age,sex`` (both at level 0), ``age=1`` (age at level 1, every other
QI ``*``), ``*`` (everything generalized), as in the paper's sequence
``(Age, Sex), (Age, *), (*, Sex), (*, *)``.

**The lattice search as a sequence.** Without record suppression, every utility metric of
:mod:`airflow_privacy.core.anonymize.utility` depends on the QIs only (group sizes and
labels), never on the sensitive values, and gets no better when a node is generalized
further. The lattice anonymizer publishes, among the minimal passing nodes, the one with
the smallest key ``(utility rank, height, levels)``. That node is also the *first passing
node* when all nodes are sorted by the same key: a passing node that is not minimal has a
passing node below it whose key is smaller (utility no worse, height smaller). So the
lattice search is the sequential algorithm over :func:`lattice_sequence` (the order of
:func:`airflow_privacy.core.anonymize.problem.lattice_order`, shared with the lattice
anonymizer) and the
adversary can reason about it exactly as in the paper (tested against
``lattice_anonymize`` on random tables).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.algorithm_aware.model import Candidate, Population
from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.anonymize.encoding import Encoded, combine, encode
from airflow_privacy.core.anonymize.hierarchies import QITree
from airflow_privacy.core.anonymize.problem import LatticeProblem, lattice_order, qi_trees
from airflow_privacy.core.anonymize.utility import check_metric
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.hierarchy import Hierarchy

IntArray = npt.NDArray[np.int64]
Levels = tuple[int, ...]

#: The audit treats every lattice node as a candidate: refuse larger lattices.
MAX_NODES = 20_000


class Generalizer:
    """A table bound to its QIs' hierarchies: builds the candidate of any node."""

    def __init__(
        self,
        table: pa.Table,
        qis: Sequence[str],
        sensitive: str,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        id_column: str | None = None,
    ) -> None:
        if id_column is not None and id_column in list(qis):
            raise InputError(f"column {id_column!r} cannot be both the id column and a QI")
        self.enc: Encoded = encode(table, qis, sensitive)
        unknown = sorted(set(hierarchies or {}) - set(self.enc.qi_names))
        if unknown:
            raise InputError(f"hierarchy given for {unknown[0]!r}, which is not a QI")
        self.trees: list[QITree] = qi_trees(self.enc, hierarchies)
        self.leaves = [
            t.bind(col.values)[col.codes] for t, col in zip(self.trees, self.enc.qis, strict=True)
        ]
        self.population = Population.from_table(table, sensitive, id_column)

    @property
    def qis(self) -> tuple[str, ...]:
        return self.enc.qi_names

    @property
    def heights(self) -> tuple[int, ...]:
        return tuple(t.height for t in self.trees)

    def name(self, levels: Levels) -> str:
        return node_name(self.qis, self.trees, levels)

    def parse(self, spec: str) -> Levels:
        """Levels of a node spec (module doc); errors name the column or level."""
        levels = [t.height - 1 for t in self.trees]
        text = spec.strip()
        if text in ("", "*"):
            return tuple(levels)
        seen: set[str] = set()
        for item in (s.strip() for s in text.split(",")):
            col, eq, lv = item.partition("=")
            col = col.strip()
            if col not in self.qis:
                raise InputError(
                    f"candidate {spec!r}: unknown column {col!r} (QIs: {', '.join(self.qis)})"
                )
            if col in seen:
                raise InputError(f"candidate {spec!r}: column {col!r} appears twice")
            seen.add(col)
            i = self.qis.index(col)
            try:
                level = int(lv) if eq else 0
            except ValueError:
                raise InputError(f"candidate {spec!r}: level {lv!r} is not a number") from None
            if not 0 <= level < self.trees[i].height:
                raise InputError(
                    f"candidate {spec!r}: level {level} of {col!r} is outside 0.."
                    f"{self.trees[i].height - 1}"
                )
            levels[i] = level
        return tuple(levels)

    def candidate(self, levels: Levels) -> Candidate:
        return node_candidate(self.qis, self.trees, self.leaves, levels)

    def candidates(self, specs: Sequence[str]) -> list[Candidate]:
        return [self.candidate(self.parse(s)) for s in specs]

    def lattice_sequence(
        self,
        criteria: Sequence[tuple[str, Mapping[str, object]]] | CriteriaSet,
        utility: str = "loss",
        max_nodes: int = MAX_NODES,
    ) -> list[Levels]:
        """Every node of the lattice in the lattice anonymizer's order (module doc)."""
        metric = check_metric(utility)
        parsed = criteria if isinstance(criteria, CriteriaSet) else CriteriaSet.parse(criteria)
        problem = LatticeProblem(self.enc, parsed, self.trees, 0)
        if problem.lattice.size > max_nodes:
            raise InputError(
                f"the generalization lattice has {problem.lattice.size:,} nodes (more than "
                f"{max_nodes:,}): use fewer quasi-identifiers or hierarchy levels"
            )
        return lattice_order(problem, metric)


def node_name(qis: Sequence[str], trees: Sequence[QITree], levels: Levels) -> str:
    """The spec of a node: the QIs not fully generalized (``age,sex=1``; ``*`` for none)."""
    parts = []
    for q, lv, t in zip(qis, levels, trees, strict=True):
        if lv == t.height - 1:
            continue
        parts.append(q if lv == 0 else f"{q}={lv}")
    return ",".join(parts) or "*"


def node_candidate(
    qis: Sequence[str], trees: Sequence[QITree], leaves: Sequence[IntArray], levels: Levels
) -> Candidate:
    """The candidate of node ``levels``: groups numbered by first appearance, labelled
    ``age=30-39, sex=*``."""
    codes = [t.leaf_codes[lv][lf] for t, lv, lf in zip(trees, levels, leaves, strict=True)]
    key, _ = combine(codes, [len(t.labels[lv]) for t, lv in zip(trees, levels, strict=True)])
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    groups = rank[inverse.reshape(-1)].astype(np.int64)
    labels = tuple(
        ", ".join(
            f"{q}={t.labels[lv][int(c[p])]}"
            for q, t, lv, c in zip(qis, trees, levels, codes, strict=True)
        )
        for p in np.sort(first).tolist()
    )
    return Candidate(node_name(qis, trees, levels), groups, labels)
