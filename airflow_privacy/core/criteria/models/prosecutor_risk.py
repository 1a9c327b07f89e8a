"""Prosecutor re-identification risk limits (El Emam & Dankar 2008; ARX
``AverageReidentificationRisk``)."""

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
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.result import CriterionResult
    from airflow_privacy.core.model import Bucketization


class ProsecutorRisk(Criterion):
    """The prosecutor's chance of re-identifying a record stays within the limits given:
    the highest risk ``1 / f_j``, the share of records above it, the average risk ``J / n``
    (:mod:`airflow_privacy.core.criteria.prosecutor_risk`)."""

    name = "prosecutor-risk"
    summary = (
        "an attacker who knows a person is in the release re-identifies a record with "
        "probability at most highest (at most records of the records above it) and on "
        "average at most average"
    )
    reference = (
        'K. El Emam, F. K. Dankar, "Protecting privacy using k-anonymity", JAMIA 15(5), 2008 '
        "(the prosecutor scenario); ARX AverageReidentificationRisk"
    )
    parameters = (
        Parameter(
            "highest", Kind.REAL, "the highest acceptable re-identification risk of a record",
            low=0, high=1, open_low=True, required=False, stricter="lower",
        ),
        Parameter(
            "records", Kind.REAL,
            "the share of records allowed a risk above highest (needs highest; default 0)",
            low=0, high=1, required=False, default="0 (with highest)", stricter="lower",
        ),
        Parameter(
            "average", Kind.REAL, "the highest acceptable average re-identification risk",
            low=0, high=1, open_low=True, required=False, stricter="lower",
        ),
    )  # fmt: skip
    monotonicity = Monotonicity(
        True, False, False,
        "merged groups are no smaller than their parts and fewer (El Emam & Dankar 2008: "
        "every risk 1/f_j and the average J/n only fall); checked by brute force",
    )  # fmt: skip
    cost = 0
    sizes_only = True
    measure = "highest prosecutor risk, 1 / smallest group (or the average risk)"

    @classmethod
    def validate(cls, params: Mapping[str, Any]) -> dict[str, Any]:
        out = super().validate(params)
        if "highest" not in out and "average" not in out:
            raise InputError(f"criterion {cls.name} needs highest or average")
        if "records" in out and "highest" not in out:
            raise InputError(
                f"{cls.name}: records needs highest (the risk above which a record is at risk)"
            )
        return out

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.prosecutor_risk import prosecutor_risk_criterion

        p = self.params
        return prosecutor_risk_criterion(b, p.get("highest"), p.get("records"), p.get("average"))

    def group_test(self, values: Sequence[str]) -> tuple[GroupTest, bool] | None:
        if "highest" not in self.params or "records" in self.params:
            return None  # a share of the whole release: checked whole
        from airflow_privacy.core.criteria.prosecutor_risk import prosecutor_groups_pass

        highest = float(self.params["highest"])

        def test(counts: Any, totals: Any) -> Any:
            return prosecutor_groups_pass(counts, highest)

        # exact alone; with an average limit as well, a necessary test only
        return test, "average" not in self.params

    def required_group_size(self) -> int:
        if "highest" not in self.params or "records" in self.params:
            return 0
        from airflow_privacy.core.criteria.prosecutor_risk import smallest_safe_size

        return smallest_safe_size(float(self.params["highest"]))

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        parts = []
        if "highest" in params:
            if "records" in params:
                parts.append(
                    f"at most {fmt(params['records'])} of the records above a risk of "
                    f"{fmt(params['highest'])}"
                )
            else:
                parts.append(f"every record's risk at most {fmt(params['highest'])}")
        if "average" in params:
            parts.append(f"average risk at most {fmt(params['average'])}")
        return "; ".join(parts) or None
