"""Re-identification risk models: El Emam's prosecutor, journalist and marketer risks
(:mod:`airflow_privacy.core.risk.reidentification`), SUDA2 special uniques
(:mod:`airflow_privacy.core.risk.suda`) and population uniqueness from a sample
(:mod:`airflow_privacy.core.risk.population`)."""

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
    "JournalistRisk",
    "MarketerRisk",
    "PopulationUniqueness",
    "ProsecutorRisk",
    "ReidentificationRisk",
    "journalist_risk",
    "marketer_risk",
    "population_uniqueness",
    "prosecutor_risk",
    "reidentification_risk",
]
