"""``airflow-privacy report``: the HTML release report of an attempt, or of checks given.

The parser is derived from the step's declaration
(:class:`airflow_privacy.gate.steps.report.ReportStep`, as ``ReleaseReportOperator``'s
arguments are). Also the ``--report FILE.html`` option of ``check``, ``maxent``
and ``audit``: the path is checked before any work, and the file is written atomically.

Exit 0 = written, and the attempt was published (or, without an attempt, every check given
passed); 1 = written, but not published / a check did not pass; 2 = bad input (nothing
written).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.common import EXIT_SAFE, EXIT_UNSAFE, context, emit, ref

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.refs import ReleaseRef

NAME = "report"


# ------------------------------------------------------------- shared by check/maxent/audit
def add_report_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--report",
        metavar="FILE.html",
        help="also write the HTML release report of this result (self-contained, atomically)",
    )


def report_target(args: argparse.Namespace) -> ReleaseRef | None:
    """``--report``'s file, checked before any work (:func:`airflow_privacy.gate.report.
    report_target`: the release is a file, the target an ``.html`` file in a folder that
    exists)."""
    from airflow_privacy.gate.refs import ReleaseRef
    from airflow_privacy.gate.report import report_target as check_target

    if getattr(args, "report", None) is None:
        return None
    release = getattr(args, "release", None) or getattr(args, "candidate", None)
    target = ReleaseRef(path=args.report)
    if release is None:  # pragma: no cover - every command with --report has a release
        return target
    return check_target(ref(release, args), target, option="report")


def report_after(
    args: argparse.Namespace, env: Envelope, ctx: GateContext, target: ReleaseRef | None = None
) -> None:
    """Write the report of ``env``'s release with ``env`` as its one check."""
    from airflow_privacy.gate.report import ReportRequest, run_report

    out = target or report_target(args)
    if out is None or env.release is None or env.outcome == "already-published":
        return
    run_report(
        ReportRequest(
            release=ref(env.release.ref, args),
            checks=[env],
            out=out,
            sensitive=env.release.sensitive,
            group_columns=env.release.group_columns or None,
            missing_as=getattr(args, "missing_as", None),  # as the check counted them
            fmt=getattr(args, "input_format", None),  # as the check read it
            delimiter=getattr(args, "delimiter", None),
        ),
        ctx,
    )


# ----------------------------------------------------------------------- the command
def register(sub: Any) -> None:
    from airflow_privacy.cli import steps
    from airflow_privacy.gate.steps.report import REPORT

    steps.register(sub, REPORT)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.cli import steps
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
