"""``airflow-privacy report``: the HTML release report of an attempt, or of checks given.

The parser is derived from the step's declaration
(:class:`airflow_privacy.gate.steps.report.ReportStep`, as ``ReleaseReportOperator``'s
arguments are). The ``--report FILE.html`` option of ``check``, ``maxent``, ``audit`` and
``risk`` is :mod:`airflow_privacy.cli.report_option`.

Exit 0 = written, and the attempt was published (or, without an attempt, every check given
passed); 1 = written, but not published / a check did not pass; 2 = bad input (nothing
written).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli import steps
from airflow_privacy.cli.common import EXIT_SAFE, EXIT_UNSAFE, context, emit

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = "report"


# ----------------------------------------------------------------------- the command
def register(sub: Any) -> None:
    from airflow_privacy.gate.steps.report import REPORT

    steps.register(sub, REPORT)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.gate.steps.report import REPORT

    env = REPORT.run(REPORT.request(steps.values(REPORT, args)), context(args))
    ok = env.outcome == "published" or (
        env.outcome == "computed" and env.details.get("checks_failed") == 0
    )
    return emit(env, args, out, render, EXIT_SAFE if ok else EXIT_UNSAFE)


def render(env: Envelope) -> str:
    lines = [env.summary, f"  report: {env.outputs.get('report')}"]
    if env.outputs.get("published_report"):
        lines.append(f"  and beside the published copy: {env.outputs['published_report']}")
    d = env.details
    lines.append(
        f"  criteria: {d.get('checks_run')} evaluated, {d.get('checks_failed')} did not pass"
    )
    for r in env.reasons:
        lines.append(f"  reason: {r}")
    return "\n".join(lines) + "\n"
