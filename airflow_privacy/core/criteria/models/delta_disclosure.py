"""delta-disclosure privacy (Brickell & Shmatikov 2008)."""

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


class DeltaDisclosure(Criterion):
    """Every group's share of every value stays within a factor ``e^delta`` of the table's
    (:mod:`airflow_privacy.core.criteria.delta_disclosure`)."""

    name = "delta-disclosure"
    summary = "every value's share in every group is within a factor e^delta of the table's"
    reference = (
        'J. Brickell, V. Shmatikov, "The cost of privacy: destruction of data-mining utility '
        'in anonymized data publishing", KDD 2008'
    )
    parameters = (
        Parameter(
            "delta", Kind.REAL, "the bound on |ln(q / p)| for every value in every group",
            low=0, open_low=True, stricter="lower",
        ),
    )  # fmt: skip
    monotonicity = Monotonicity(
        True, False, True,
        "the bound is a pair of linear caps on a group's share, kept by weighted means "
        "(Brickell & Shmatikov 2008); checked by brute force",
    )  # fmt: skip
    cost = 3
    measure = "largest |ln(q / p)| of a value in a group (inf: a group lacks a value)"

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.delta_disclosure import delta_disclosure

        return delta_disclosure(b, self.params["delta"])

    def group_test(
        self, values: Sequence[str], benign: frozenset[str] = frozenset()
    ) -> tuple[GroupTest, bool] | None:
        from airflow_privacy.core.criteria.delta_disclosure import delta_disclosure_groups_pass

        delta = float(self.params["delta"])
        mask = benign_mask(values, benign)

        def test(counts: Any, totals: Any) -> Any:
            return delta_disclosure_groups_pass(counts, totals, delta, mask)

        return test, True

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        if "delta" not in params:
            return None
        return f"|ln(q / p)| below delta = {fmt(params['delta'])}"
