"""A gated DAG of shape ``no_report`` (:mod:`tests.airflow.refused_dags.shapes`)."""

from __future__ import annotations

from tests.airflow.refused_dags.shapes import build

dag = build("no_report")
