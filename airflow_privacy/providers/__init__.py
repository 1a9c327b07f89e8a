"""Integrations with orchestrators (Airflow)."""
