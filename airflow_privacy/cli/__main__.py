"""``python -m airflow_privacy.cli``."""

from airflow_privacy.cli import console

raise SystemExit(console())
