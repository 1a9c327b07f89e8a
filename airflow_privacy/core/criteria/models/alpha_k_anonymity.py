"""(alpha,k)-anonymity (Wong, Li, Fu, Wang 2006)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow_privacy.core.criteria.base import (
    Criterion,
    GroupTest,
    Kind,
    Monotonicity,
    Parameter,
    benign_mask,
    fmt,
)

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.result import CriterionResult
    from airflow_privacy.core.model import Bucketization


class AlphaKAnonymity(Criterion):
    """Every group has at least ``k`` records and no sensitive value (or the designated one)
    makes up more than ``alpha`` of a group
    (:mod:`airflow_privacy.core.criteria.alpha_k_anonymity`)."""

    name = "alpha-k-anonymity"
    summary = "every group has at least k records and no value above a share alpha of it"
    reference = (
        'R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymity: an enhanced '
        'k-anonymity model for privacy preserving data publishing", KDD 2006'
    )
    parameters = (
        Parameter(
            "alpha", Kind.REAL, "the largest share of a sensitive value in any group",
            low=0, high=1, open_low=True, stricter="lower",
        ),
        Parameter(
            "k", Kind.WHOLE, "the smallest number of records a group may hold", low=1,
            stricter="higher",
        ),
        Parameter(
            "sensitive_value", Kind.TEXT,
            "cap only this value of the sensitive column (default: every value)",
            required=False, flag="sensitive-value", default="every value",
        ),
    )  # fmt: skip
    monotonicity = Monotonicity(
        True, False, True,
        "sizes add up and a merged group's share is a weighted mean of its parts' (Wong et "
        "al. 2006); checked by brute force",
    )  # fmt: skip
    cost = 1
    measure = "largest share of a (the designated) sensitive value in a group"

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.alpha_k_anonymity import alpha_k_anonymity

        p = self.params
        return alpha_k_anonymity(b, p["alpha"], p["k"], p.get("sensitive_value"))

    def group_test(
        self, values: Sequence[str], benign: frozenset[str] = frozenset()
    ) -> tuple[GroupTest, bool] | None:
        from airflow_privacy.core.criteria.alpha_k_anonymity import (
            alpha_k_groups_pass,
            check_designated_not_benign,
        )

        alpha, k = float(self.params["alpha"]), int(self.params["k"])
        designated = self.params.get("sensitive_value")
        check_designated_not_benign(designated, benign)
        labels = list(values)
        mask = benign_mask(labels, benign)
        column = (
            labels.index(designated)
            if isinstance(designated, str) and designated in labels
            else None
        )
        if designated is not None and column is None:
            # the designated value is absent: only the group sizes matter
            def sizes_test(counts: Any, totals: Any) -> Any:
                return counts.sum(axis=1) >= k

            return sizes_test, True

        def test(counts: Any, totals: Any) -> Any:
            return alpha_k_groups_pass(counts, totals, alpha, k, column, mask)

        return test, True

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        if "alpha" not in params or "k" not in params:
            return None
        which = (
            "the designated value" if params.get("sensitive_value")
            else "every non-benign value" if params.get("benign")
            else "every value"
        )  # fmt: skip
        return (
            f"at least k = {fmt(params['k'])} records per group, {which} at most "
            f"alpha = {fmt(params['alpha'])} of it"
        )
