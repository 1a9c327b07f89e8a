"""Full-domain generalization: the least-distorted lattice node that passes the criteria.

Every QI is replaced by one level of its hierarchy (Samarati & Sweeney 1998; Incognito,
LeFevre et al. SIGMOD 2005). The nodes form a lattice; the search
(:mod:`airflow_privacy.core.anonymize.search`, Flash-style, Kohlmayer et al. 2012) finds all
minimal passing nodes, pruning only with the criteria that are monotone
(:mod:`airflow_privacy.core.anonymize.monotone`; Theorem 14 of Martin et al. 2007, section
3.4, for (c,k)-safety), with every node's group counts rolled up from a finer node
(:mod:`airflow_privacy.core.anonymize.rollup`). Among the minimal nodes the one with the best
utility metric (:mod:`airflow_privacy.core.anonymize.utility`) is published.

**Record suppression.** With a budget of ``B = floor(suppression_limit * N)`` records, a node
passes when removing every group that fails a criterion on its own (the single-group tests
of :mod:`airflow_privacy.core.anonymize.criteria`) removes at most ``B`` records and the
remaining release passes every criterion. Suppressed records are *removed* from the release
(not kept with ``*`` in every QI, which would form one more group the criteria would have to
pass), and counted in the manifest and in the utility metrics as fully generalized.

**Algorithm-aware disclosure** (``disclosure="safe"``, Zhang et al. CCS 2007): an adversary
who knows this search learns that every node ranked before the published one fails; the
safe mode publishes the first node, in the same order, whose *disclosure set* passes the
criteria (:mod:`airflow_privacy.core.algorithm_aware.lattice_mode`; exact enumeration of
blocks up to ``disclosure_limit`` worlds, so small tables only; no suppression).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.anonymize.encoding import Encoded, combine
from airflow_privacy.core.anonymize.hierarchies import QITree, flat, tree
from airflow_privacy.core.anonymize.manifest import AnonymizationResult, Manifest
from airflow_privacy.core.anonymize.monotone import prunes
from airflow_privacy.core.anonymize.release import (
    Progress,
    counts_bucketization,
    no_progress,
    recheck,
)
from airflow_privacy.core.anonymize.rollup import Groups, Rollup
from airflow_privacy.core.anonymize.search import Lattice, Levels, search
from airflow_privacy.core.anonymize.utility import (
    LabelCosts,
    categorical_loss,
    check_metric,
    nue_constant,
    numeric_loss,
    rank_key,
    summarize,
)
from airflow_privacy.core.hierarchy import Hierarchy
from airflow_privacy.errors import InputError

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

MAX_LATTICE = 1_000_000
PATH_LIMIT = 10_000
MINIMAL_LIMIT = 1_000
DISCLOSURE_LIMIT = 200_000


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
        self.monotone = [i for i in every if prunes(self.criteria.items[i].name, budget > 0)]
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


def lattice_anonymize(
    enc: Encoded,
    criteria: CriteriaSet,
    hierarchies: Mapping[str, Hierarchy] | None,
    seed: int,
    utility: str = "loss",
    suppression_limit: float = 0.0,
    max_lattice_size: int = MAX_LATTICE,
    progress: Progress | None = None,
    disclosure: str = "naive",
    disclosure_limit: int = DISCLOSURE_LIMIT,
) -> AnonymizationResult:
    """Full-domain generalization of ``enc`` passing ``criteria`` (see the module doc)."""
    from airflow_privacy.core.algorithm_aware.lattice_mode import check_disclosure

    report = progress or no_progress
    started = time.perf_counter()
    metric = check_metric(utility)
    limit = _fraction(suppression_limit)
    budget = math.floor(limit * enc.n)
    check_disclosure(disclosure, disclosure_limit, budget)
    trees = qi_trees(enc, hierarchies)
    problem = LatticeProblem(enc, criteria, trees, budget)
    lattice = problem.lattice
    if lattice.size > max_lattice_size:
        raise InputError(
            f"the generalization lattice has {lattice.size:,} nodes (more than "
            f"{max_lattice_size:,}): use fewer quasi-identifiers or hierarchy levels"
        )
    report(
        f"lattice: {lattice.size:,} nodes over {len(trees)} QIs; pruning with "
        f"{len(problem.monotone)} of {len(problem.all)} criteria"
    )
    found = search(
        lattice,
        problem.check_monotone if problem.monotone else None,
        problem.check_rest if problem.rest else None,
        report,
    )
    if not found.minimal:
        _impossible(problem)
    costs = problem.label_costs()
    c0 = nue_constant(
        [
            np.bincount(lv, minlength=len(t.leaves))
            for t, lv in zip(trees, problem.leaves, strict=True)
        ]
    )
    ranked = []
    for node in found.minimal:
        values = problem.utility(node, costs, c0)
        ranked.append((rank_key(metric, values), sum(node), node, values))
    ranked.sort(key=lambda r: (r[0], r[1], r[2]))
    _, _, best, best_utility = ranked[0]
    safe_info: dict[str, Any] | None = None
    if disclosure == "safe":
        from airflow_privacy.core.algorithm_aware.lattice_mode import safe_lattice_choice

        best, safe_info = safe_lattice_choice(problem, metric, disclosure_limit, report)
        best_utility = problem.utility(best, costs, c0)
    report(
        f"lattice: {len(found.minimal)} minimal node(s) after {found.nodes_checked} checks; "
        f"publishing {_node_text(problem, best)}"
    )

    release, rows, suppressed = _release(problem, best, seed)
    group_columns = enc.qi_names
    b, results = recheck(release, group_columns, enc.sensitive.name, problem.criteria)
    elapsed = time.perf_counter() - started
    names = enc.qi_names
    details: dict[str, Any] = {
        "levels": dict(zip(names, best, strict=True)),
        "hierarchies": {
            t.column: {
                "height": t.height,
                "implicit": t.implicit,
                "labels_at_level": len(t.labels[lv]),
            }
            for t, lv in zip(trees, best, strict=True)
        },
        "utility_metric": metric,
        "minimal_nodes": [
            {"levels": dict(zip(names, node, strict=True)), "utility": values}
            for _, _, node, values in ranked[:MINIMAL_LIMIT]
        ],
        "minimal_nodes_total": len(ranked),
        "suppression": {"limit": limit, "budget": budget, "suppressed": suppressed},
        "search": {
            "lattice_size": lattice.size,
            "nodes_checked": found.nodes_checked,
            "checks": len(found.checked),
            "inferred_pass": found.inferred_pass,
            "inferred_fail": found.inferred_fail,
            "rollups": problem.rollup.rollups,
            "cells_rolled_up": problem.rollup.cells_read,
            "pruning": {
                problem.criteria.items[i].label: i in problem.monotone for i in problem.all
            },
            "path": [
                {"levels": dict(zip(names, node, strict=True)), "criteria": phase, "passed": ok}
                for node, phase, ok in found.checked[:PATH_LIMIT]
            ],
            "path_truncated": len(found.checked) > PATH_LIMIT,
            "elapsed_seconds": round(elapsed, 4),
        },
    }
    if safe_info is not None:
        details["disclosure"] = safe_info
    manifest = Manifest(
        method="lattice",
        qis=names,
        sensitive=enc.sensitive.name,
        group_columns=group_columns,
        criteria=problem.criteria.to_list(),
        parameters={
            "utility": metric,
            "suppression_limit": limit,
            "max_lattice_size": max_lattice_size,
            **(
                {"disclosure": disclosure, "disclosure_limit": disclosure_limit}
                if disclosure != "naive"
                else {}
            ),
        },
        seed=seed,
        records_in=enc.n,
        records_out=release.num_rows,
        suppressed=suppressed,
        groups=b.n_groups,
        dropped_columns=enc.dropped,
        criteria_results=results,
        utility=best_utility,
        details=details,
    )
    return AnonymizationResult(release, group_columns, manifest, b, rows)


def _fraction(limit: object) -> float:
    if isinstance(limit, bool) or not isinstance(limit, int | float):
        raise InputError(f"suppression limit must be a fraction in [0, 1), got {limit!r}")
    x = float(limit)
    if not (0.0 <= x < 1.0):
        raise InputError(f"suppression limit must be a fraction in [0, 1), got {limit!r}")
    return x


def _node_text(problem: LatticeProblem, levels: Levels) -> str:
    return ", ".join(f"{n}={lv}" for n, lv in zip(problem.enc.qi_names, levels, strict=True))


def _impossible(problem: LatticeProblem) -> None:
    """No node passes: name the criterion that fails even at the top of the lattice."""
    top = problem.lattice.top
    counts = problem.groups(top).counts
    keep = problem.kept(counts, problem.all)
    where = f"every QI at its top level ({_node_text(problem, top)})"
    if keep is None:
        raise InputError(
            f"no generalization passes the criteria within the suppression budget of "
            f"{problem.budget} records: even with {where}, more records fail on their own"
        )
    b = counts_bucketization(counts[keep], problem.values, problem.enc.sensitive.name)
    failure = problem.criteria.first_failure(b)
    if failure is None:
        raise InputError("no generalization passes the criteria (no minimal node found)")
    label = next(c.label for c in problem.criteria.items if c.name == failure.criterion)
    raise InputError(
        f"no generalization passes criterion {label}: even with {where}, {failure.reason}"
    )


def _release(problem: LatticeProblem, levels: Levels, seed: int) -> tuple[Any, IntArray, int]:
    """The published table of node ``levels``: suppressed records removed, rows in a seeded
    random order (the input order is not published)."""
    import pyarrow as pa

    enc = problem.enc
    q = len(problem.trees)
    codes = [
        t.leaf_codes[lv][leaves]
        for t, lv, leaves in zip(problem.trees, levels, problem.leaves, strict=True)
    ]
    key, _ = combine(
        codes, [len(t.labels[lv]) for t, lv in zip(problem.trees, levels, strict=True)]
    )
    _, inverse = np.unique(key, return_inverse=True)
    inverse = inverse.reshape(-1)
    n_groups = int(inverse.max()) + 1
    v = len(problem.values)
    counts = np.bincount(inverse * v + enc.sensitive.codes, minlength=n_groups * v)
    counts = counts.reshape(n_groups, v).astype(np.int64)
    keep = problem.kept(counts, problem.all)
    if keep is None:  # pragma: no cover - the node passed
        raise RuntimeError("the chosen node does not fit the suppression budget")
    kept_rows = np.flatnonzero(keep[inverse])
    suppressed = enc.n - int(kept_rows.shape[0])
    rows = np.random.default_rng(seed).permutation(kept_rows).astype(np.int64)
    take = pa.array(rows)
    columns = {}
    for i in range(q):
        labels = pa.array(list(problem.trees[i].labels[levels[i]]), type=pa.string())
        columns[enc.qis[i].name] = labels.take(pa.array(codes[i][rows]))
    columns[enc.sensitive.name] = enc.table.column(enc.sensitive.name).take(take)
    return pa.table(columns), rows, suppressed
