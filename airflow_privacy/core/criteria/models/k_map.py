"""k-map with ARX's population estimators (Sweeney 2002, section 4; El Emam & Dankar 2008)."""

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

ESTIMATORS = ("poisson", "zero-truncated-poisson")


class KMap(Criterion):
    """Every record matches at least ``k`` people of the population, the population class
    sizes estimated from the sampling fraction (:mod:`airflow_privacy.core.criteria.k_map`)."""

    name = "k-map"
    summary = (
        "every record matches at least k people of the population (estimated from the "
        "sampling fraction, as ARX does)"
    )
    reference = (
        'L. Sweeney, "k-anonymity: a model for protecting privacy", IJUFKS 10(5), 2002, '
        "section 4; El Emam & Dankar, JAMIA 15(5), 2008; ARX KMap"
    )
    parameters = (
        Parameter("k", Kind.WHOLE, "the people of the population each record must match", low=1),
        Parameter(
            "sampling_fraction", Kind.REAL,
            "the share of the population in the release (or give population_size)",
            low=0, high=1, open_low=True, required=False, flag="sampling-fraction",
        ),
        Parameter(
            "population_size", Kind.REAL,
            "the number of people in the population (or give sampling_fraction)",
            low=1, required=False, flag="population-size",
        ),
        Parameter(
            "estimator", Kind.CHOICE,
            "the model of the population class sizes (default poisson)",
            required=False, choices=ESTIMATORS, default="poisson",
        ),
        Parameter(
            "significance", Kind.REAL,
            "the accepted chance that a class meets the derived threshold but not k "
            "(default 0.01)",
            low=0, high=1, required=False, default="0.01",
        ),
    )  # fmt: skip
    monotonicity = Monotonicity(
        True, False, True,
        "k-anonymity with a threshold derived from k, the sampling fraction and the record "
        "count, which merging keeps (ARX KMap with an estimator)",
    )  # fmt: skip
    cost = 0
    sizes_only = True
    measure = "smallest group (records), against the derived threshold k'"

    @classmethod
    def validate(cls, params: Mapping[str, Any]) -> dict[str, Any]:
        out = super().validate(params)
        if ("sampling_fraction" in out) == ("population_size" in out):
            raise InputError(
                f"criterion {cls.name} needs exactly one of sampling_fraction and population_size"
            )
        return out

    def _kwargs(self) -> dict[str, Any]:
        from airflow_privacy.core.criteria.k_map import DEFAULT_SIGNIFICANCE

        p = self.params
        return {
            "k": int(p["k"]),
            "sampling_fraction": p.get("sampling_fraction"),
            "population_size": p.get("population_size"),
            "estimator": p.get("estimator", "poisson"),
            "significance": p.get("significance", DEFAULT_SIGNIFICANCE),
        }

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.k_map import k_map_estimated

        return k_map_estimated(b, **self._kwargs())

    def group_test(self, values: Sequence[str]) -> tuple[GroupTest, bool] | None:
        from airflow_privacy.core.criteria.k_map import derived_k

        kwargs = self._kwargs()

        def test(counts: Any, totals: Any) -> Any:
            # the threshold of the whole table (totals): the release the groups belong to
            need, _, _ = derived_k(int(totals.sum()), **kwargs)
            return counts.sum(axis=1) >= need

        return test, True

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        if "k" not in params:
            return None
        frac = params.get("sampling_fraction")
        pop = params.get("population_size")
        where = (
            f"sampling fraction {fmt(frac)}" if frac is not None
            else f"population of {fmt(pop)}" if pop is not None
            else "the population"
        )  # fmt: skip
        return (
            f"every record matches at least k = {fmt(params['k'])} people ({where}, "
            f"{params.get('estimator', 'poisson')} estimator)"
        )
