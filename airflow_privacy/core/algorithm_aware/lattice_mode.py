"""The lattice anonymizer's ``disclosure="safe"`` mode: publish the first node, in the
lattice's own order (:func:`airflow_privacy.core.anonymize.problem.lattice_order`), whose
*disclosure set* passes the criteria (the p-safe DDF of :class:`.rules.SafeRule`),
instead of the first node whose table passes.

Without record suppression the naive lattice search equals the first passing node of that
order (:mod:`.candidates`), so the two modes differ only in the stopping test.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow_privacy.core.algorithm_aware.audit import choose_release
from airflow_privacy.core.algorithm_aware.candidates import node_candidate
from airflow_privacy.core.algorithm_aware.model import Population
from airflow_privacy.core.algorithm_aware.predicate import Predicate
from airflow_privacy.core.algorithm_aware.rules import NaiveRule, SafeRule
from airflow_privacy.core.anonymize import anonymize as _anonymize
from airflow_privacy.core.anonymize import anonymize_histogram as _anonymize_histogram
from airflow_privacy.core.anonymize.lattice import DISCLOSURE_MODES, check_disclosure
from airflow_privacy.core.anonymize.problem import LatticeProblem, lattice_order
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.anonymize import AnonymizationResult, Method
    from airflow_privacy.core.anonymize.plan import HistogramLike
    from airflow_privacy.core.hierarchy import Hierarchy

__all__ = [
    "DISCLOSURE_MODES",
    "anonymize",
    "anonymize_histogram",
    "check_disclosure",
    "safe_lattice_choice",
]

Levels = tuple[int, ...]


def anonymize(
    table: pa.Table,
    qis: Sequence[str],
    sensitive: str,
    method: Method,
    criteria: Sequence[tuple[str, Mapping[str, Any]]],
    hierarchies: Mapping[str, Hierarchy] | None = None,
    seed: int = 0,
    **method_options: Any,
) -> AnonymizationResult:
    """:func:`airflow_privacy.core.anonymize.anonymize` with the lattice's
    ``disclosure="safe"`` mode: the same arguments, options and result, the safe search
    supplied (:func:`safe_lattice_choice`). Every front end anonymizes through this."""
    return _anonymize(table, qis, sensitive, method, criteria, hierarchies, seed,
                      chooser=safe_lattice_choice, **method_options)  # fmt: skip


def anonymize_histogram(
    hist: HistogramLike,
    method: Method,
    criteria: Sequence[tuple[str, Mapping[str, Any]]],
    hierarchies: Mapping[str, Hierarchy] | None = None,
    seed: int = 0,
    **method_options: Any,
) -> AnonymizationResult:
    """:func:`airflow_privacy.core.anonymize.anonymize_histogram` with the lattice's
    ``disclosure="safe"`` mode supplied (:func:`safe_lattice_choice`): the decision from a
    backend's histogram, for the front ends that push the row-level pass down."""
    return _anonymize_histogram(hist, method, criteria, hierarchies, seed,
                                chooser=safe_lattice_choice, **method_options)  # fmt: skip


def safe_lattice_choice(
    problem: LatticeProblem, metric: str, exact_limit: int, progress: Callable[[str], None]
) -> tuple[Levels, dict[str, Any]]:
    """The node the safe DDF publishes and a record of the choice (for the manifest)."""
    enc = problem.enc
    order = lattice_order(problem, metric)
    # a histogram's rows are expanded to records: the possible worlds assign values to people
    leaves, s_codes = problem.records()
    pop = Population(
        tuple(str(i) for i in range(enc.n)), enc.sensitive.values, s_codes, enc.sensitive.name
    )
    cands = [node_candidate(enc.qi_names, problem.trees, leaves, lv) for lv in order]
    predicate = Predicate(problem.criteria, pop.values, pop.totals, pop.sensitive)
    predicate.check_posterior_form()
    naive = NaiveRule(pop, cands, predicate).release(pop.truth)
    progress(f"safe disclosure: {len(cands)} candidate nodes, exact limit {exact_limit:,} worlds")
    rule = SafeRule(pop, cands, predicate, exact_limit, progress)
    choice = choose_release(rule)
    if choice.released_index is None:
        declined = sum(1 for s in choice.skipped if s["declined_too_large"])
        raise InputError(
            f"disclosure safe: no node can be released safely ({declined} of {len(cands)} "
            f"nodes have blocks larger than the disclosure limit of {exact_limit:,} worlds "
            "and were declined; the others fail on their disclosure sets)"
        )
    idx = choice.released_index
    names = enc.qi_names
    info = {
        "mode": "safe",
        "exact_limit": exact_limit,
        "candidates": len(cands),
        "rank": idx + 1,
        "naive_node": dict(zip(names, order[naive], strict=True)) if naive is not None else None,
        "naive_rank": naive + 1 if naive is not None else None,
        "disclosure_set_size": choice.disclosure_set_size,
        "block_size": choice.block_size,
        "skipped": len(choice.skipped),
        "declined_too_large": sum(1 for s in choice.skipped if s["declined_too_large"]),
        "decisions": choice.decisions,
        "worlds_enumerated": choice.worlds_enumerated,
    }
    progress(
        f"safe disclosure: publishing candidate {idx + 1} ({cands[idx].name}); the naive "
        f"search would publish candidate {naive + 1 if naive is not None else '-'}"
    )
    return order[idx], info
