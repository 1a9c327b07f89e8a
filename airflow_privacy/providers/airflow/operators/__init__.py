"""Airflow operators: thin wrappers over :mod:`airflow_privacy.core`."""
