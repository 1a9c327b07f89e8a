"""Safety against ``k`` negated atoms (the l-diversity adversary; Martin et al. 2007)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow_privacy.core.criteria.base import (
    Criterion,
    GroupTest,
    Monotonicity,
    fmt,
)
from airflow_privacy.core.criteria.models.ck_safety import WORST_CASE, c_parameter, k_parameter

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.result import CriterionResult
    from airflow_privacy.core.model import Bucketization


class NegationSafety(Criterion):
    """The maximum disclosure against any ``k`` negated atoms (``t[S] != s``) stays below
    ``c``: ``max over groups of r1 / (n - r2 - ... - r_{k+1})``."""

    name = "negation-safety"
    summary = (
        'an adversary with k negated atoms ("X does not have Y", the l-diversity adversary) '
        "never reaches confidence c about anyone's sensitive value"
    )
    reference = WORST_CASE
    parameters = (c_parameter("the disclosure"), k_parameter("negated atoms"))
    monotonicity = Monotonicity(
        True, False, True,
        "max over groups of r1 / (n - r2 - ... - r_{k+1}); the mediant of two groups' "
        "ratios is at most the larger (docs/anonymizers.md)",
    )  # fmt: skip
    cost = 1
    measure = "maximum disclosure (probability)"
    report_section = "disclosure-curve"

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.worst_case import check_negation_safety

        return check_negation_safety(b, self.params["c"], self.params["k"])

    def group_test(
        self, values: Sequence[str], benign: frozenset[str] = frozenset()
    ) -> tuple[GroupTest, bool] | None:
        from airflow_privacy.core.criteria import group_tests

        c, k = float(self.params["c"]), int(self.params["k"])
        return group_tests.negation(c, k, values, benign), True

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        if "c" not in params:
            return None
        return f"below c = {fmt(params['c'])} against k = {fmt(params.get('k'))} negated atoms"
