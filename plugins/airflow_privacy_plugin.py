"""Airflow plugins-folder entry: registers airflow-privacy's plugin (the ledger view)."""

from airflow_privacy.providers.airflow.plugin import AirflowPrivacyPlugin

__all__ = ["AirflowPrivacyPlugin"]
