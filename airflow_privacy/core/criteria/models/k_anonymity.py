"""k-anonymity (Sweeney 2002, Definition 3; Samarati & Sweeney 1998)."""

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


class KAnonymity(Criterion):
    """Every QI-group holds at least ``k`` records."""

    name = "k-anonymity"
    summary = "every group has at least k records"
    reference = (
        'L. Sweeney, "k-anonymity: a model for protecting privacy", IJUFKS 10(5), 2002, '
        "Definition 3"
    )
    parameters = (
        Parameter(
            "k",
            Kind.WHOLE,
            "the smallest number of records a group may hold",
            low=1,
            stricter="higher",
        ),
    )
    monotonicity = Monotonicity(
        True, True, True,
        "group sizes add up when groups merge (LeFevre et al. 2005, generalization property)",
    )  # fmt: skip
    cost = 0
    posterior_form = True
    sizes_only = True
    measure = "smallest group (records)"

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.classic import k_anonymity

        return k_anonymity(b, self.params["k"])

    def group_test(self, values: Sequence[str]) -> tuple[GroupTest, bool] | None:
        from airflow_privacy.core.criteria import group_tests

        return group_tests.k_anonymity(int(self.params["k"])), True

    def required_group_size(self) -> int:
        return int(self.params["k"])

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        if "k" not in params:
            return None
        return f"at least k = {fmt(params['k'])} records per group"
