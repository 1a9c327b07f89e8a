"""The ``--report FILE.html`` option of ``check``, ``maxent``, ``audit`` and ``risk``: the HTML
release report of the command's own result. The path is checked before any work
(:func:`report_target`) and the file written atomically after it (:func:`report_after`);
the report itself is the ``report`` step's (:mod:`airflow_privacy.gate.report`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from airflow_privacy.cli.common import ref

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.refs import ReleaseRef


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
