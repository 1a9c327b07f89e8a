"""The gate's steps, each declared once (:mod:`airflow_privacy.gate.steps.base`): the
command line, the operators' argument checks, the error wording and the reference tables of
the docs are derived from these declarations.

Importing this package imports no engine: the command line builds its parser from it.
"""

from __future__ import annotations

from airflow_privacy.gate.steps.attempt import ATTEMPT
from airflow_privacy.gate.steps.audit import AUDIT
from airflow_privacy.gate.steps.audit_algorithm import AUDIT_ALGORITHM
from airflow_privacy.gate.steps.base import Step
from airflow_privacy.gate.steps.check import CHECK
from airflow_privacy.gate.steps.disclosure import DISCLOSURE
from airflow_privacy.gate.steps.maxent import MAXENT
from airflow_privacy.gate.steps.publish import PUBLISH
from airflow_privacy.gate.steps.report import REPORT
from airflow_privacy.gate.steps.risk import RISK
from airflow_privacy.gate.steps.skyline import SKYLINE

#: every declared step by its command name
STEPS: dict[str, Step] = {
    step.name: step
    for step in (
        ATTEMPT,
        AUDIT,
        AUDIT_ALGORITHM,
        CHECK,
        DISCLOSURE,
        MAXENT,
        PUBLISH,
        REPORT,
        RISK,
        SKYLINE,
    )
}
