"""Re-identification risk models: El Emam's prosecutor, journalist and marketer risks
(:mod:`airflow_privacy.core.risk.reidentification`) and SUDA2 special uniques
(:mod:`airflow_privacy.core.risk.suda`)."""

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
    "ProsecutorRisk",
    "ReidentificationRisk",
    "journalist_risk",
    "marketer_risk",
    "prosecutor_risk",
    "reidentification_risk",
]
