"""t-closeness with the Earth Mover's Distance (Li, Li, Venkatasubramanian 2007)."""

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


class TCloseness(Criterion):
    """Every QI-group's sensitive distribution is within EMD ``t`` of the whole table's."""

    name = "t-closeness"
    summary = (
        "every group's sensitive distribution is within earth mover's distance t of the "
        "whole table's"
    )
    reference = (
        'Li, Li, Venkatasubramanian, "t-Closeness: Privacy Beyond k-Anonymity and '
        'l-Diversity", ICDE 2007'
    )
    parameters = (
        Parameter(
            "t", Kind.REAL, "the largest EMD to the table's distribution", low=0, high=1,
            stricter="lower",
        ),
        Parameter(
            "ordered", Kind.BOOLEAN, "ordered (numeric) ground distance true/false",
            required=False, default="ordered iff every value is numeric",
        ),
    )  # fmt: skip
    monotonicity = Monotonicity(
        True, False, True,
        "the EMD to the fixed table distribution is convex in the group's distribution "
        "(Li et al. 2007, generalization property); suppression changes the table distribution",
    )  # fmt: skip
    cost = 3
    posterior_form = True
    measure = "largest distance to the table's distribution (EMD, 0 to 1)"

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.classic import t_closeness

        return t_closeness(b, self.params["t"], self.params.get("ordered"))

    def group_test(self, values: Sequence[str]) -> tuple[GroupTest, bool] | None:
        from airflow_privacy.core.criteria import group_tests

        test = group_tests.t_closeness(
            tuple(values), float(self.params["t"]), self.params.get("ordered")
        )
        return test, True

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        return f"at most t = {fmt(params['t'])}" if "t" in params else None
