"""Re-identification risk models: El Emam's prosecutor, journalist and marketer risks
(:mod:`airflow_privacy.core.risk.reidentification`), SUDA2 special uniques
(:mod:`airflow_privacy.core.risk.suda`), population uniqueness from a sample
(:mod:`airflow_privacy.core.risk.population`), k-map and delta-presence
(:mod:`airflow_privacy.core.risk.kmap`)."""

from airflow_privacy.core.risk.kmap import (
    DeltaPresenceResult,
    KMapEstimateResult,
    KMapResult,
    delta_presence,
    kmap_estimate,
    kmap_population,
)
from airflow_privacy.core.risk.population import PopulationUniqueness, population_uniqueness
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
