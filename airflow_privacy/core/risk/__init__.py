"""Re-identification risk models: El Emam's prosecutor, journalist and marketer risks
(:mod:`airflow_privacy.core.risk.reidentification`), SUDA2 special uniques
(:mod:`airflow_privacy.core.risk.suda`), population uniqueness from a sample
(:mod:`airflow_privacy.core.risk.population`); and, exported here too, k-map and
delta-presence on class sizes, whose engines live with their criteria
(:mod:`airflow_privacy.core.criteria.k_map`,
:mod:`airflow_privacy.core.criteria.delta_presence`)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.delta_presence import DeltaPresenceResult
    from airflow_privacy.core.criteria.delta_presence import (
        presence_of_classes as delta_presence,
    )
    from airflow_privacy.core.criteria.k_map import (
        KMapEstimateResult,
        KMapResult,
        kmap_estimate,
        kmap_population,
    )
    from airflow_privacy.core.risk.population import (
        PopulationUniqueness,
        population_uniqueness,
    )
    from airflow_privacy.core.risk.reidentification import (
        JournalistRisk,
        MarketerRisk,
        ProsecutorRisk,
        ReidentificationRisk,
        journalist_risk,
        marketer_risk,
        prosecutor_risk,
        reidentification_risk,
    )

# Names are loaded on first use (PEP 562), so that importing one engine (k-map's derived
# threshold, which the k-map criterion needs) does not import scipy.stats for the others.
_WHERE = {
    "DeltaPresenceResult": "airflow_privacy.core.criteria.delta_presence",
    "KMapEstimateResult": "airflow_privacy.core.criteria.k_map",
    "KMapResult": "airflow_privacy.core.criteria.k_map",
    "delta_presence": "airflow_privacy.core.criteria.delta_presence:presence_of_classes",
    "kmap_estimate": "airflow_privacy.core.criteria.k_map",
    "kmap_population": "airflow_privacy.core.criteria.k_map",
    "PopulationUniqueness": "population",
    "population_uniqueness": "population",
    "JournalistRisk": "reidentification",
    "MarketerRisk": "reidentification",
    "ProsecutorRisk": "reidentification",
    "ReidentificationRisk": "reidentification",
    "journalist_risk": "reidentification",
    "marketer_risk": "reidentification",
    "prosecutor_risk": "reidentification",
    "reidentification_risk": "reidentification",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attribute = where.partition(":")
    if "." not in module:
        module = f"{__name__}.{module}"
    return getattr(importlib.import_module(module), attribute or name)


__all__ = [
    "DeltaPresenceResult",
    "JournalistRisk",
    "KMapEstimateResult",
    "KMapResult",
    "MarketerRisk",
    "PopulationUniqueness",
    "ProsecutorRisk",
    "ReidentificationRisk",
    "delta_presence",
    "journalist_risk",
    "kmap_estimate",
    "kmap_population",
    "marketer_risk",
    "population_uniqueness",
    "prosecutor_risk",
    "reidentification_risk",
]
