"""Airflow operators: thin adapters over the gate layer (:mod:`airflow_privacy.gate`)."""
