"""Re-identification risk models: El Emam's prosecutor, journalist and marketer risks
(:mod:`airflow_privacy.core.risk.reidentification`), SUDA2 special uniques
(:mod:`airflow_privacy.core.risk.suda`), population uniqueness from a sample
(:mod:`airflow_privacy.core.risk.population`), k-map and delta-presence
(:mod:`airflow_privacy.core.risk.kmap`)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow_privacy.core.risk.kmap import (
        DeltaPresenceResult,
        KMapEstimateResult,
        KMapResult,
        delta_presence,
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
    "DeltaPresenceResult": "kmap",
    "KMapEstimateResult": "kmap",
    "KMapResult": "kmap",
    "delta_presence": "kmap",
    "kmap_estimate": "kmap",
    "kmap_population": "kmap",
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
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


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
