"""The mapped-check DAG of ``tests/airflow/mapped_dags`` in the running Airflow of
tests/airflow/test_gate_live.py: a check mapped over its criteria, one instance failing."""

from tests.airflow.mapped_dags.privacy_mapped import dag

dag.fileloc = __file__

__all__ = ["dag"]
