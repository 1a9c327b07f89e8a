"""Re-identification risk models (El Emam's prosecutor, journalist and marketer risks)."""

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
