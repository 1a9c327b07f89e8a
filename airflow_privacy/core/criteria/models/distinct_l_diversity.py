"""Distinct l-diversity (Machanavajjhala et al. 2007, section 4.1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow_privacy.core.criteria.base import (
    Criterion,
    GroupTest,
    Kind,
    Monotonicity,
    Parameter,
    fmt,
)

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.result import CriterionResult
    from airflow_privacy.core.model import Bucketization

L_DIVERSITY = (
    'Machanavajjhala, Kifer, Gehrke, Venkitasubramaniam, "l-Diversity: Privacy Beyond '
    'k-Anonymity", ACM TKDD 1(1), 2007'
)


class DistinctLDiversity(Criterion):
    """Every QI-group holds at least ``l`` distinct sensitive values."""

    name = "distinct-l-diversity"
    summary = "every group has at least l distinct sensitive values"
    reference = L_DIVERSITY
    parameters = (
        Parameter(
            "l",
            Kind.REAL,
            "the fewest distinct sensitive values in a group",
            low=1,
            stricter="higher",
        ),
    )
    monotonicity = Monotonicity(
        True,
        True,
        True,
        "a merged group holds every value of its parts (Machanavajjhala et al. 2007)",
    )
    cost = 1
    posterior_form = True
    measure = "fewest distinct sensitive values in a group"

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.classic import distinct_l_diversity

        return distinct_l_diversity(b, self.params["l"])

    def group_test(self, values: Sequence[str]) -> tuple[GroupTest, bool] | None:
        from airflow_privacy.core.criteria import group_tests

        return group_tests.distinct(float(self.params["l"])), True

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        return f"at least l = {fmt(params['l'])}" if "l" in params else None
