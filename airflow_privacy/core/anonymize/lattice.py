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
blocks up to ``disclosure_limit`` worlds, so small tables only; no suppression). That mode
is passed in by its caller (:func:`airflow_privacy.core.algorithm_aware.anonymize`): this
package never imports the algorithm-aware one, which builds on it (the shared lattice and
node ranking are in :mod:`airflow_privacy.core.anonymize.problem`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.anonymize.apply import recoding_bucketization
from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.anonymize.encoding import Column, Encoded, combine
from airflow_privacy.core.anonymize.manifest import AnonymizationResult, Manifest
from airflow_privacy.core.anonymize.plan import Recoding
from airflow_privacy.core.anonymize.problem import (
    LatticeProblem,
    NodeChooser,
    node_rank,
    qi_trees,
)
from airflow_privacy.core.anonymize.release import (
    NO_ROWS,
    Progress,
    empty_release,
    no_progress,
    recheck_counts,
)
from airflow_privacy.core.anonymize.search import Levels, search
from airflow_privacy.core.anonymize.utility import check_metric
from airflow_privacy.core.hierarchy import Hierarchy
from airflow_privacy.errors import InputError, front_end, opt

__all__ = [
    "DISCLOSURE_LIMIT",
    "DISCLOSURE_MODES",
    "LatticeProblem",
    "check_disclosure",
    "lattice_anonymize",
    "qi_trees",
]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

MAX_LATTICE = 1_000_000
PATH_LIMIT = 10_000
MINIMAL_LIMIT = 1_000
DISCLOSURE_LIMIT = 200_000
#: The most worlds a block may have to be enumerated in the safe mode (``disclosure_limit``):
#: past it the worlds no longer fit in memory.
MAX_DISCLOSURE_LIMIT = 10_000_000
#: The largest lattice the search will hold (``max_lattice_size``): 8 bytes per node and QI
#: for the nodes' levels, 2.4 GB at 30 QIs.
MAX_LATTICE_CAP = 10_000_000
DISCLOSURE_MODES = ("naive", "safe")


def _option(key: str) -> str:
    """A lattice option as the front end in effect names it: ``--max-lattice-size`` on the
    command line, ``method_options['max_lattice_size']`` in Airflow."""
    return f"method_options[{key!r}]" if front_end() == "airflow" else opt(key)


def check_disclosure_limit(limit: object) -> None:
    """``disclosure_limit``: a whole number from 1 to :data:`MAX_DISCLOSURE_LIMIT`."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InputError(
            f"{_option('disclosure_limit')} must be a whole number >= 1, got {limit!r}"
        )
    if limit > MAX_DISCLOSURE_LIMIT:
        raise InputError(
            f"{_option('disclosure_limit')} must be at most {MAX_DISCLOSURE_LIMIT:,} worlds "
            f"(enumerated in memory), got {limit:,}"
        )


def check_max_lattice_size(size: object) -> None:
    """``max_lattice_size``: a whole number from 1 to :data:`MAX_LATTICE_CAP`."""
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_LATTICE_CAP:
        raise InputError(
            f"{_option('max_lattice_size')} must be a whole number from 1 to {MAX_LATTICE_CAP:,} "
            f"(the search keeps 8 bytes per node and QI), got {size!r}"
        )


def check_disclosure(mode: object, limit: object, budget: int) -> None:
    """Options of the safe mode, checked before the search."""
    if mode not in DISCLOSURE_MODES:
        raise InputError(f"unknown disclosure mode {mode!r} (known: {', '.join(DISCLOSURE_MODES)})")
    check_disclosure_limit(limit)
    if mode == "safe" and budget > 0:
        raise InputError(
            "disclosure safe needs suppression 0: with suppression the published node "
            "depends on the sensitive values through the suppressed groups, which the "
            "safe mode does not model"
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
    chooser: NodeChooser | None = None,
    population: Sequence[Column] | None = None,
    population_weights: IntArray | None = None,
) -> AnonymizationResult:
    """Full-domain generalization of ``enc`` passing ``criteria`` (see the module doc).

    ``disclosure="safe"`` publishes the node ``chooser`` picks (the algorithm-aware safe
    mode, which the caller supplies: :func:`airflow_privacy.core.algorithm_aware.anonymize`
    passes :func:`~airflow_privacy.core.algorithm_aware.lattice_mode.safe_lattice_choice`).

    ``population``: the QI columns of a population table (:func:`encode_population`),
    generalized with the same hierarchies and rolled up beside the input, for the criteria
    decided against a population (k-map without an estimator, delta-presence); the release
    is re-checked with the population counted at the published node. ``population_weights``:
    the records of each population row when the population is given by its counts."""
    report = progress or no_progress
    started = time.perf_counter()
    metric = check_metric(utility)
    limit = _fraction(suppression_limit)
    budget = math.floor(limit * enc.n)
    check_disclosure(disclosure, disclosure_limit, budget)
    if population is not None and disclosure != "naive":
        raise InputError(
            f"disclosure {disclosure} does not model a population table ({opt('population')})"
        )
    trees = qi_trees(enc, hierarchies, population)
    problem = LatticeProblem(enc, criteria, trees, budget, population, population_weights)
    lattice = problem.lattice
    check_max_lattice_size(max_lattice_size)
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
    c0 = problem.nue_constant()
    ranked = []
    for node in found.minimal:
        values = problem.utility(node, costs, c0)
        ranked.append((node_rank(metric, values, node), node, values))
    ranked.sort(key=lambda r: r[0])
    _, best, best_utility = ranked[0]
    safe_info: dict[str, Any] | None = None
    if disclosure == "safe":
        if chooser is None:
            raise InputError(
                "disclosure safe is the algorithm-aware search: run it through "
                "airflow_privacy.core.algorithm_aware.anonymize"
            )
        best, safe_info = chooser(problem, metric, disclosure_limit, report)
        best_utility = problem.utility(best, costs, c0)
    report(
        f"lattice: {len(found.minimal)} minimal node(s) after {found.nodes_checked} checks; "
        f"publishing {_node_text(problem, best)}"
    )

    recoding = _recoding(problem, best)
    suppressed = enc.n - recoding.records
    group_columns = enc.qi_names
    b, results = recheck_counts(
        recoding_bucketization(enc, recoding), problem.criteria,
        population=_population_classes(problem, best),
    )  # fmt: skip
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
            for _, node, values in ranked[:MINIMAL_LIMIT]
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
            **({"population_records": problem.population_records} if population else {}),
            **(
                {"disclosure": disclosure, "disclosure_limit": disclosure_limit}
                if disclosure != "naive"
                else {}
            ),
        },
        seed=seed,
        records_in=enc.n,
        records_out=recoding.records,
        suppressed=suppressed,
        groups=b.n_groups,
        dropped_columns=enc.dropped,
        criteria_results=results,
        utility=best_utility,
        details=details,
    )
    return AnonymizationResult(
        empty_release(enc, recoding), group_columns, manifest, b, NO_ROWS, recoding=recoding
    )


def _fraction(limit: object) -> float:
    if isinstance(limit, bool) or not isinstance(limit, int | float):
        raise InputError(f"suppression limit must be a fraction in [0, 1), got {limit!r}")
    x = float(limit)
    if not (0.0 <= x < 1.0):
        raise InputError(f"suppression limit must be a fraction in [0, 1), got {limit!r}")
    return x


def _node_text(problem: LatticeProblem, levels: Levels) -> str:
    return ", ".join(f"{n}={lv}" for n, lv in zip(problem.enc.qi_names, levels, strict=True))


def _population_classes(
    problem: LatticeProblem, levels: Levels
) -> dict[tuple[str, ...], int] | None:
    """The population's classes at node ``levels``, keyed by their published labels (the
    re-check counts the written release's groups against them), or ``None``."""
    if problem.population is None:
        return None
    pg = problem.population.groups(problem.population.at(levels))
    out: dict[tuple[str, ...], int] = {}
    for codes, n in zip(pg.codes.tolist(), pg.counts[:, 0].tolist(), strict=True):
        key = tuple(t.labels[lv][c] for t, lv, c in zip(problem.trees, levels, codes, strict=True))
        out[key] = out.get(key, 0) + int(n)
    return out


def _impossible(problem: LatticeProblem) -> None:
    """No node passes: name the criterion that fails even at the top of the lattice."""
    top = problem.lattice.top
    g, pop = problem.node(top)
    counts = g.counts
    keep = problem.kept(counts, problem.all, pop)
    where = f"every QI at its top level ({_node_text(problem, top)})"
    if keep is None:
        raise InputError(
            f"no generalization passes the criteria within the suppression budget of "
            f"{problem.budget} records: even with {where}, more records fail on their own"
        )
    b = problem.bucketization(counts, keep, pop)
    failure = problem.criteria.first_failure(b)
    if failure is None:
        raise InputError("no generalization passes the criteria (no minimal node found)")
    label = next(c.label for c in problem.criteria.items if c.name == failure.criterion)
    raise InputError(
        f"no generalization passes criterion {label}: even with {where}, {failure.reason}"
    )


def _recoding(problem: LatticeProblem, levels: Levels) -> Recoding:
    """The decision at node ``levels`` (Samarati & Sweeney 1998, full-domain recoding):
    every histogram row goes, with all its records, to the group of its generalized QI
    tuple; the rows of the groups suppression removes are not listed. Computed from the
    bottom node's rows (the distinct tuples), never from records."""
    enc = problem.enc
    codes = [
        t.leaf_codes[lv][leaves]
        for t, lv, leaves in zip(problem.trees, levels, problem.leaves, strict=True)
    ]
    key, _ = combine(
        codes, [len(t.labels[lv]) for t, lv in zip(problem.trees, levels, strict=True)]
    )
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    n_groups = int(inverse.max()) + 1
    v = len(problem.values)
    counts = np.bincount(
        inverse * v + enc.sensitive.codes, weights=problem.weights, minlength=n_groups * v
    )
    counts = counts.reshape(n_groups, v).astype(np.int64)
    group_codes = np.column_stack([c[first] for c in codes]).astype(np.int64)
    keep = problem.kept(counts, problem.all, problem.population_of(levels, group_codes))
    if keep is None:  # pragma: no cover - the node passed
        raise RuntimeError("the chosen node does not fit the suppression budget")
    kept_groups = np.flatnonzero(keep)
    number = np.full(n_groups, -1, dtype=np.int64)
    number[kept_groups] = np.arange(kept_groups.shape[0], dtype=np.int64)
    rows = np.flatnonzero(keep[inverse]).astype(np.int64)
    labels = tuple(
        tuple(
            t.labels[lv][int(c)]
            for t, lv, c in zip(problem.trees, levels, group_codes[g], strict=True)
        )
        for g in kept_groups.tolist()
    )
    return Recoding(
        enc.qi_names, labels, rows, number[inverse[rows]], problem.weights[rows].astype(np.int64)
    )
