"""The lattice anonymizer's ``disclosure="safe"`` mode: publish the first node, in the
lattice's own order (:func:`.candidates.lattice_order`), whose *disclosure set* passes the
criteria (the p-safe DDF of :class:`.rules.SafeRule`), instead of the first node whose
table passes.

Without record suppression the naive lattice search equals the first passing node of that
order (:mod:`.candidates`), so the two modes differ only in the stopping test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from airflow_privacy.core.algorithm_aware.audit import choose_release
from airflow_privacy.core.algorithm_aware.candidates import lattice_order, node_candidate
from airflow_privacy.core.algorithm_aware.model import Population
from airflow_privacy.core.algorithm_aware.predicate import Predicate
from airflow_privacy.core.algorithm_aware.rules import NaiveRule, SafeRule
from airflow_privacy.errors import InputError

Levels = tuple[int, ...]
DISCLOSURE_MODES = ("naive", "safe")


def check_disclosure(mode: object, limit: object, budget: int) -> None:
    """Options of the safe mode, checked before the search."""
    if mode not in DISCLOSURE_MODES:
        raise InputError(f"unknown disclosure mode {mode!r} (known: {', '.join(DISCLOSURE_MODES)})")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InputError(f"disclosure limit must be a whole number >= 1, got {limit!r}")
    if mode == "safe" and budget > 0:
        raise InputError(
            "disclosure safe needs suppression 0: with suppression the published node "
            "depends on the sensitive values through the suppressed groups, which the "
            "safe mode does not model"
        )


def safe_lattice_choice(
    problem: Any, metric: str, exact_limit: int, progress: Callable[[str], None]
) -> tuple[Levels, dict[str, Any]]:
    """The node the safe DDF publishes and a record of the choice (for the manifest)."""
    enc = problem.enc
    order = lattice_order(problem, metric)
    pop = Population(
        tuple(str(i) for i in range(enc.n)), enc.sensitive.values, enc.sensitive.codes,
        enc.sensitive.name,
    )  # fmt: skip
    cands = [node_candidate(enc.qi_names, problem.trees, problem.leaves, lv) for lv in order]
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
