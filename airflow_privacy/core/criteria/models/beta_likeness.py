"""Basic and enhanced beta-likeness (Cao & Karras 2012)."""

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

REFERENCE = (
    'J. Cao, P. Karras, "Publishing microdata with a robust privacy guarantee", PVLDB 5(11), 2012'
)
BETA = Parameter(
    "beta", Kind.REAL, "the largest relative gain (q - p) / p of a value's share in a group",
    low=0, open_low=True, stricter="lower",
)  # fmt: skip
FACTS = Monotonicity(
    True, False, True,
    "each cap bounds a group's share of a value by a constant, and a merged group's share is "
    "a weighted mean of its parts' (Cao & Karras 2012); checked by brute force",
)  # fmt: skip


class BasicBetaLikeness(Criterion):
    """No group raises a value's share by more than ``beta`` relative to the table
    (:mod:`airflow_privacy.core.criteria.beta_likeness`)."""

    name = "basic-beta-likeness"
    summary = "no group raises a value's share by more than beta relative to the table's"
    reference = REFERENCE
    parameters = (BETA,)
    monotonicity = FACTS
    cost = 3
    measure = "largest relative gain (q - p) / p of a value in a group"

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.beta_likeness import basic_beta_likeness

        return basic_beta_likeness(b, self.params["beta"])

    def group_test(
        self, values: Sequence[str], benign: frozenset[str] = frozenset()
    ) -> tuple[GroupTest, bool] | None:
        from airflow_privacy.core.criteria.beta_likeness import basic_beta_groups_pass

        beta = float(self.params["beta"])
        mask = benign_mask(values, benign)

        def test(counts: Any, totals: Any) -> Any:
            return basic_beta_groups_pass(counts, totals, beta, mask)

        return test, True

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        return f"relative gain at most beta = {fmt(params['beta'])}" if "beta" in params else None


class EnhancedBetaLikeness(Criterion):
    """As basic beta-likeness with the cap ``min(beta, -ln p)``, which protects frequent
    values too (:mod:`airflow_privacy.core.criteria.beta_likeness`)."""

    name = "enhanced-beta-likeness"
    summary = "no group raises a value's share by more than min(beta, -ln p) relative to p"
    reference = REFERENCE
    parameters = (BETA,)
    monotonicity = FACTS
    cost = 3
    measure = "largest relative gain (q - p) / p of a value in a group (inf: over -ln p)"

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.beta_likeness import enhanced_beta_likeness

        return enhanced_beta_likeness(b, self.params["beta"])

    def group_test(
        self, values: Sequence[str], benign: frozenset[str] = frozenset()
    ) -> tuple[GroupTest, bool] | None:
        from airflow_privacy.core.criteria.beta_likeness import enhanced_beta_groups_pass

        beta = float(self.params["beta"])
        mask = benign_mask(values, benign)

        def test(counts: Any, totals: Any) -> Any:
            return enhanced_beta_groups_pass(counts, totals, beta, mask)

        return test, True

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        if "beta" not in params:
            return None
        return f"relative gain at most min(beta = {fmt(params['beta'])}, -ln p)"
