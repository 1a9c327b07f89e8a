"""delta-presence against a population table (Nergiz, Atzori & Clifton 2007)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow_privacy.core.criteria.base import (
    Criterion,
    Kind,
    Monotonicity,
    Parameter,
    PopulationTest,
    fmt,
)
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.result import CriterionResult
    from airflow_privacy.core.model import Bucketization


class DeltaPresence(Criterion):
    """Every person of the population is in the release with a probability in
    ``[delta_min, delta_max]`` (:mod:`airflow_privacy.core.criteria.delta_presence`)."""

    name = "delta-presence"
    summary = (
        "every person of the population table is in the release with a probability between "
        "delta_min and delta_max"
    )
    reference = (
        'M. E. Nergiz, M. Atzori, C. Clifton, "Hiding the presence of individuals from shared '
        'databases", SIGMOD 2007, Definition 4; ARX DPresence'
    )
    parameters = (
        Parameter(
            "delta_max", Kind.REAL,
            "the largest probability that a person of the population is in the release",
            low=0, high=1, flag="delta-max", stricter="lower",
        ),
        Parameter(
            "delta_min", Kind.REAL,
            "the smallest such probability (default 0: no lower bound)",
            low=0, high=1, required=False, flag="delta-min", default="0", stricter="higher",
        ),
    )  # fmt: skip
    monotonicity = Monotonicity(
        True, False, True,
        "merging classes gives the mediant (f_a + f_b) / (F_a + F_b) of their presences, "
        "which lies between them, so both bounds survive (Nergiz et al. 2007); population "
        "classes without a released record are judged on the whole release",
    )  # fmt: skip
    cost = 0
    sizes_only = True
    measure = "largest probability that a person of the population is in the release"

    @classmethod
    def validate(cls, params: Mapping[str, Any]) -> dict[str, Any]:
        out = super().validate(params)
        if float(out.get("delta_min", 0.0)) > float(out["delta_max"]):
            raise InputError(
                f"{cls.name}: delta_min ({out['delta_min']:g}) exceeds delta_max "
                f"({out['delta_max']:g})"
            )
        return out

    def needs_population(self) -> bool:
        return True

    def _bounds(self) -> tuple[float, float]:
        return float(self.params.get("delta_min", 0.0)), float(self.params["delta_max"])

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.delta_presence import delta_presence

        low, high = self._bounds()
        return delta_presence(b, high, low)

    def population_test(self) -> PopulationTest | None:
        from airflow_privacy.core.criteria.delta_presence import groups_present

        low, high = self._bounds()

        def test(sizes: Any, population: Any) -> Any:
            return groups_present(sizes, population, low, high)

        return test

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        if "delta_max" not in params:
            return None
        return (
            f"every person of the population in the release with a probability in "
            f"[{fmt(params.get('delta_min', 0))}, {fmt(params['delta_max'])}]"
        )
