"""Entropy l-diversity (Machanavajjhala et al. 2007, section 4.1)."""

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
from airflow_privacy.core.criteria.models.distinct_l_diversity import L_DIVERSITY

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.result import CriterionResult
    from airflow_privacy.core.model import Bucketization


class EntropyLDiversity(Criterion):
    """Every QI-group's entropy of the sensitive values is at least ``log l``."""

    name = "entropy-l-diversity"
    summary = "every group's sensitive entropy is at least log(l)"
    reference = L_DIVERSITY
    parameters = (
        Parameter(
            "l",
            Kind.REAL,
            "the smallest effective number of values, exp(entropy)",
            low=1,
            stricter="higher",
        ),
    )
    monotonicity = Monotonicity(
        True, False, True,
        "entropy is concave: a merged group's entropy is at least the smaller of its parts' "
        "(Machanavajjhala et al. 2007); a failing part can pull a passing one below",
    )  # fmt: skip
    cost = 2
    posterior_form = True
    measure = "smallest effective number of values, exp(entropy)"

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.classic import entropy_l_diversity

        return entropy_l_diversity(b, self.params["l"])

    def group_test(self, values: Sequence[str]) -> tuple[GroupTest, bool] | None:
        from airflow_privacy.core.criteria import group_tests

        return group_tests.entropy(float(self.params["l"])), True

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        return f"at least l = {fmt(params['l'])}" if "l" in params else None
