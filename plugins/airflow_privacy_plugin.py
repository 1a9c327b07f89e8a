"""The airflow-privacy UI plugin, for an Airflow whose plugins come from a plugins folder
(a managed Airflow): copy this file into its ``plugins/`` folder; the package
``airflow-privacy`` must be importable there (its requirements).

A pip install registers the same plugin through the package's ``airflow.plugins`` entry
point. This file then defines nothing, so that Airflow registers the plugin once, without a
"already registered" error; where the entry point is not installed, it defines the plugin.
"""

from __future__ import annotations

from importlib.metadata import entry_points

if not any(ep.name == "airflow_privacy" for ep in entry_points(group="airflow.plugins")):
    from airflow_privacy.providers.airflow.plugin import AirflowPrivacyPlugin

    __all__ = ["AirflowPrivacyPlugin"]
