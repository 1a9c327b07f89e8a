"""k-map against a population table, or with ARX's population estimators (Sweeney 2002,
section 4; El Emam & Dankar 2008)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow_privacy.core.criteria.base import (
    Criterion,
    GroupTest,
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

ESTIMATORS = ("poisson", "zero-truncated-poisson")

#: Against a population table: the class sizes ``F_j`` add up when groups merge, and a merged
#: group fails ``F >= k`` only if all its parts do (so the records a coarser node suppresses
#: are a subset of a finer node's).
POPULATION_TRAITS = Monotonicity(
    True, True, True,
    "population class sizes add up when groups merge, and a merged group fails only if all "
    "its parts do (Sweeney 2002, section 4; k-anonymity's argument on F_j)",
)  # fmt: skip


class KMap(Criterion):
    """Every record matches at least ``k`` people of the population: the population class
    sizes counted in a population table (neither ``sampling_fraction`` nor
    ``population_size``), or estimated from the sampling fraction
    (:mod:`airflow_privacy.core.criteria.k_map`)."""

    name = "k-map"
    summary = (
        "every record matches at least k people of the population (counted in a population "
        "table, or estimated from the sampling fraction, as ARX does)"
    )
    reference = (
        'L. Sweeney, "k-anonymity: a model for protecting privacy", IJUFKS 10(5), 2002, '
        "section 4; El Emam & Dankar, JAMIA 15(5), 2008; ARX KMap"
    )
    parameters = (
        Parameter(
            "k", Kind.WHOLE, "the people of the population each record must match", low=1,
            stricter="higher",
        ),
        Parameter(
            "sampling_fraction", Kind.REAL,
            "the share of the population in the release (or give population_size; neither: "
            "against the population table)",
            low=0, high=1, open_low=True, required=False, flag="sampling-fraction",
        ),
        Parameter(
            "population_size", Kind.REAL,
            "the number of people in the population (or give sampling_fraction; neither: "
            "against the population table)",
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
        "count, which merging keeps (ARX KMap with an estimator); against a population table "
        "also monotone with suppression (POPULATION_TRAITS)",
    )  # fmt: skip
    cost = 0
    sizes_only = True
    measure = "smallest group (records), against the derived threshold k'"

    @classmethod
    def validate(cls, params: Mapping[str, Any]) -> dict[str, Any]:
        out = super().validate(params)
        if "sampling_fraction" in out and "population_size" in out:
            raise InputError(
                f"criterion {cls.name} takes one of sampling_fraction and population_size, "
                "not both (neither: against the population table)"
            )
        if "sampling_fraction" not in out and "population_size" not in out:
            for extra in ("estimator", "significance"):
                if extra in out:
                    raise InputError(
                        f"criterion {cls.name}: {extra} applies to the estimators (with "
                        "sampling_fraction or population_size), not to a population table"
                    )
        return out

    def traits(self) -> Monotonicity:
        return POPULATION_TRAITS if self.needs_population() else self.monotonicity

    def needs_population(self) -> bool:
        return "sampling_fraction" not in self.params and "population_size" not in self.params

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
        from airflow_privacy.core.criteria.k_map import k_map_estimated, k_map_population

        if self.needs_population():
            return k_map_population(b, int(self.params["k"]))
        return k_map_estimated(b, **self._kwargs())

    def population_test(self) -> PopulationTest | None:
        if not self.needs_population():
            return None
        k = int(self.params["k"])

        def test(sizes: Any, population: Any) -> Any:
            return population >= k

        return test

    def group_test(self, values: Sequence[str]) -> tuple[GroupTest, bool] | None:
        from airflow_privacy.core.criteria.k_map import derived_k

        if self.needs_population():
            return None  # decided by the population test

        kwargs = self._kwargs()
        needs: dict[int, int] = {}  # records of the table -> k' (ARX's loop, run once per n)

        def test(counts: Any, totals: Any) -> Any:
            # the threshold of the whole table (totals): the release the groups belong to
            n = int(totals.sum())
            if n not in needs:
                needs[n] = derived_k(n, **kwargs)[0]
            return counts.sum(axis=1) >= needs[n]

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
            else None
        )  # fmt: skip
        if where is None:
            return (
                f"every record matches at least k = {fmt(params['k'])} people of the "
                "population table"
            )
        return (
            f"every record matches at least k = {fmt(params['k'])} people ({where}, "
            f"{params.get('estimator', 'poisson')} estimator)"
        )
