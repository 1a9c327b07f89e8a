"""The sample release DAG, as shipped in the provider (``airflow_privacy.example_dags``).

Point Airflow's DAGs folder here (``make demo`` does), or copy
``airflow_privacy/example_dags/privacy_release.py`` into your own DAGs folder.
"""

from airflow_privacy.example_dags.privacy_release import dag

dag.fileloc = __file__

__all__ = ["dag"]
