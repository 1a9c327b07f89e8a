"""Record-level disclosure-risk measures on quasi-identifiers (SUDA2 special uniques:
:mod:`airflow_privacy.core.risk.suda`)."""
