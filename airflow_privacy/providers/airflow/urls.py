"""Where the plugin's ledger view is mounted in the API server: one constant, for the plugin
(:mod:`airflow_privacy.providers.airflow.plugin`) and for the operators that link to it.

A module of its own so that the operators (imported when a DAG is parsed) do not import the
plugin, which imports FastAPI."""

from __future__ import annotations

URL_PREFIX = "/privacy"
