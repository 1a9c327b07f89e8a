"""Recursive (c,l)-diversity (Machanavajjhala et al. 2007, section 4.2)."""

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


class RecursiveCLDiversity(Criterion):
    """In every QI-group, with the value counts sorted ``r1 >= r2 >= ...``,
    ``r1 < c (r_l + ... + r_m)``."""

    name = "recursive-cl-diversity"
    summary = "every group has r1 < c (r_l + ... + r_m), the value counts sorted r1 >= r2 >= ..."
    reference = L_DIVERSITY
    parameters = (
        Parameter(
            "c", Kind.REAL, "the bound on r1 / (r_l + ... + r_m)", low=0, open_low=True,
            stricter="lower",
        ),
        Parameter(
            "l", Kind.WHOLE, "the rank where the tail of the sorted counts starts", low=1,
            keep_as_given=True, stricter="higher",
        ),
    )  # fmt: skip
    monotonicity = Monotonicity(
        True, False, True,
        "r1 of the merge <= r1(A) + r1(B) < c (tail(A) + tail(B)) <= c tail(merge) "
        "(Machanavajjhala et al. 2007)",
    )  # fmt: skip
    cost = 2
    posterior_form = True
    measure = "largest ratio r1 / (r_l + ... + r_m)"

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.classic import recursive_cl_diversity

        return recursive_cl_diversity(b, self.params["c"], self.params["l"])

    def group_test(self, values: Sequence[str]) -> tuple[GroupTest, bool] | None:
        from airflow_privacy.core.criteria import group_tests

        return group_tests.recursive(float(self.params["c"]), int(self.params["l"])), True

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        if "c" not in params:
            return None
        return f"below c = {fmt(params['c'])} (l = {fmt(params.get('l'))})"
