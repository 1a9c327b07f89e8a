"""Privacy-MaxEnt end to end: knowledge (file and mined rules) -> constraints -> maximum
entropy -> ``P*(s | q)`` and the risk numbers (Du et al. 2008)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from airflow_privacy.core.maxent.accuracy import original_conditional, weighted_kl
from airflow_privacy.core.maxent.constraints import build_system
from airflow_privacy.core.maxent.knowledge import Knowledge
from airflow_privacy.core.maxent.release import BucketRelease
from airflow_privacy.core.maxent.result import MaxEntResult
from airflow_privacy.core.maxent.rules import AssociationRule, mine_rules, rules_knowledge
from airflow_privacy.core.maxent.solver import Solution, SolverOptions, solve
from airflow_privacy.errors import InputError, opt

if TYPE_CHECKING:
    import pyarrow as pa


MAX_STATEMENTS = 4_000
"""The most knowledge statements one estimate takes (a knowledge file's and the mined rules'
together): Newton's step factors a dense matrix over the statements (4,000: 128 MB and about
2 x 10^10 operations a step); 100,000 rules had been accepted."""


def estimate(
    release: BucketRelease,
    knowledge: Knowledge | None = None,
    *,
    original: pa.Table | None = None,
    top_positive: int = 0,
    top_negative: int = 0,
    min_support: int = 3,
    rule_widths: Sequence[int] | None = None,
    benign: Sequence[str] = (),
    not_sensitive: Sequence[str] = (),
    options: SolverOptions | None = None,
    warm_start: Solution | None = None,
) -> MaxEntResult:
    """The maximum-entropy estimate of ``release`` under ``knowledge`` plus the Top-(K+, K-)
    association rules mined from ``original`` (section 4.4); with ``original``, also the
    estimation accuracy (section 7.1).

    ``benign`` (``not_sensitive`` is its former name, kept as an alias): sensitive values
    whose disclosure is not a breach; the largest posterior and the verdict consider only
    the other values (docs/maxent.md, "Benign values"). A benign value absent from the
    release is not an error (:attr:`MaxEntResult.benign_absent` notes it).
    """
    declared = tuple(sorted({str(v) for v in (*benign, *not_sensitive)}))
    rules: list[AssociationRule] = []
    if top_positive or top_negative:
        if original is None:
            raise InputError(
                f"mining association rules needs the original table ({opt('original')})"
            )
        pos, neg = mine_rules(
            original,
            release.qi_columns,
            release.sensitive,
            top_positive,
            top_negative,
            min_support,
            rule_widths,
        )
        rules = pos + neg
    know = (knowledge or Knowledge()) + rules_knowledge(rules)
    if len(know) > MAX_STATEMENTS:
        raise InputError(
            f"{len(know):,} knowledge statements (the file's and the mined rules'), at most "
            f"{MAX_STATEMENTS:,}: the solver's step grows with their square; keep the "
            f"strongest ({opt('top_positive')}, {opt('top_negative')}) or split the file"
        )
    system = build_system(release, know)
    solution = solve(system, options, warm_start)
    accuracy = None
    if original is not None:
        p_q, truth = original_conditional(release, original)
        accuracy = weighted_kl(p_q, truth, MaxEntResult(solution).posterior)
    return MaxEntResult(solution, tuple(rules), declared, accuracy)
