"""(c,k)-safety (Martin, Kifer, Machanavajjhala, Gehrke, Halpern 2007)."""

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
from airflow_privacy.core.criteria.limits import MAX_K

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.result import CriterionResult
    from airflow_privacy.core.model import Bucketization


WORST_CASE = (
    'Martin, Kifer, Machanavajjhala, Gehrke, Halpern, "Worst-Case Background Knowledge for '
    'Privacy-Preserving Data Publishing", ICDE 2007'
)


def c_parameter(what: str) -> Parameter:
    return Parameter("c", Kind.REAL, f"the confidence {what} must stay below", low=0, high=1,
                     open_low=True, stricter="lower")  # fmt: skip


def k_parameter(what: str) -> Parameter:
    return Parameter("k", Kind.WHOLE, f"the number of {what} the adversary holds", low=0,
                     at_most=MAX_K, stricter="higher")  # fmt: skip


class CKSafety(Criterion):
    """The maximum disclosure against any ``k`` basic implications stays below ``c``
    (Definition 6 and Theorem 10 of Martin et al. 2007)."""

    name = "ck-safety"
    summary = (
        "an adversary with k basic implications never reaches confidence c about anyone's "
        "sensitive value"
    )
    reference = WORST_CASE
    parameters = (c_parameter("the disclosure"), k_parameter("basic implications"))
    monotonicity = Monotonicity(
        True,
        False,
        False,
        "Theorem 14 of Martin et al. 2007 (maximum disclosure only falls as buckets merge)",
    )
    cost = 5
    measure = "maximum disclosure (probability)"
    report_section = "disclosure-curve"

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.worst_case import check_ck_safety

        return check_ck_safety(b, self.params["c"], self.params["k"])

    def group_test(
        self, values: Sequence[str], benign: frozenset[str] = frozenset()
    ) -> tuple[GroupTest, bool] | None:
        # necessary only: the adversary may put all his knowledge in one group; the
        # disclosure depends on the sorted counts (and which of them are benign) only
        from airflow_privacy.core.criteria import group_tests

        return group_tests.alone(self, values, by_profile=True, benign=benign), False

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        if "c" not in params:
            return None
        return f"below c = {fmt(params['c'])} against k = {fmt(params.get('k'))} implications"
