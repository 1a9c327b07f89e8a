"""Pure privacy engines.

Everything under ``airflow_privacy.core`` works on sufficient statistics (per-group
sensitive-value counts) and returns plain dataclasses that serialize to JSON. It must never
import Airflow (``tests/test_layering.py`` enforces this).
"""
