"""The release report a privacy officer reads and signs off (issue 9).

:func:`build_release_report` computes the report of a release (its bucketization, its
manifest and the JSON reports of its checks) as a :class:`ReleaseReport` (plain data:
``to_dict`` / ``from_dict``, stored in the ledger); :func:`render_html` renders it as one
self-contained, accessible HTML5 document with inline SVG charts. No Airflow import.
"""

from __future__ import annotations

from airflow_privacy.report.build import build_release_report
from airflow_privacy.report.html import render_html
from airflow_privacy.report.maxent import maxent_heatmap
from airflow_privacy.report.model import ReleaseReport

__all__ = ["ReleaseReport", "build_release_report", "maxent_heatmap", "render_html"]
