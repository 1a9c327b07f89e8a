"""``python -m airflow_privacy.cli``."""

from airflow_privacy.cli import main

raise SystemExit(main())
