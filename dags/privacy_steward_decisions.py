"""The steward's decisions DAG, as shipped in the provider (``airflow_privacy.example_dags``):
answer, inside Airflow, a request asked elsewhere (``airflow-privacy ledger supersede``)."""

from airflow_privacy.example_dags.privacy_steward_decisions import dag

dag.fileloc = __file__

__all__ = ["dag"]
