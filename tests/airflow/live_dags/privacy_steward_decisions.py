"""The shipped steward's decisions DAG (``airflow_privacy.example_dags``), as a user gets
it: answering, inside Airflow, a supersede asked on the command line
(tests/airflow/test_gate_live.py)."""

from airflow_privacy.example_dags.privacy_steward_decisions import dag

__all__ = ["dag"]
