"""A gated DAG of shape ``report_leaf`` (:mod:`tests.airflow.refused_dags.shapes`)."""

from __future__ import annotations

from tests.airflow.refused_dags.shapes import build

dag = build("report_leaf")
