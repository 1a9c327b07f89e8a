"""``airflow-privacy report``: the HTML release report of an attempt, or of checks given.

An adapter over :func:`airflow_privacy.gate.report.run_report` (the same service as
``ReleaseReportOperator``). Also the ``--report FILE.html`` option of ``check``, ``maxent``
and ``audit``: the path is checked before any work, and the file is written atomically.

Exit 0 = written, and the attempt was published (or, without an attempt, every check given
passed); 1 = written, but not published / a check did not pass; 2 = bad input (nothing
written).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.common import (
    EXIT_SAFE,
    EXIT_UNSAFE,
    add_input_args,
    add_ledger_arg,
    add_missing_arg,
    add_output_args,
    context,
    emit,
    number,
    ref,
)

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
    p = sub.add_parser(
        NAME,
        help="write the HTML release report of an attempt or of checks",
        description="Write the self-contained HTML release report of RELEASE: the verdict, "
        "the criteria and their numbers, the disclosure-vs-k curve, the privacy skyline, the "
        "composition audit and MaxEnt posteriors, and the utility of the release. With "
        "--attempt everything comes from the ledger (the status is the ledger's: published "
        "only when the gate published it) and the report is stored there too; otherwise "
        "from --check files (the --format json output of check, maxent, audit): a look at "
        "the numbers, not a publication decision. Exit 0 = written and published (or every "
        "check passed); 1 = written, not published (or a check did not pass); 2 = bad input.",
    )
    p.add_argument("release", metavar="RELEASE",
                   help="release file (.csv[.gz] or .parquet), or table:NAME on --conn "
                   "(counted in its database; give --out and --manifest)")  # fmt: skip
    p.add_argument(
        "--manifest",
        metavar="FILE",
        help="the release's manifest (default: RELEASE.manifest.json beside a file)",
    )
    p.add_argument("--attempt", metavar="UUID", help="the attempt whose report this is")
    add_ledger_arg(p)
    p.add_argument(
        "--out", metavar="FILE.html",
        help="where to write the report, a name ending in .html (default: "
        "RELEASE.report.html beside the release)",
    )  # fmt: skip
    p.add_argument(
        "--check", action="append", default=[], metavar="[NAME=]FILE", dest="checks",
        help="a report envelope saved with --format json by check, maxent or audit "
        "(repeat; not with --attempt); NAME is the text before the first '=' (it holds "
        "none), FILE the rest; default NAME: the envelope's own",
    )  # fmt: skip
    p.add_argument("--sensitive", metavar="COL", help="sensitive column (default: manifest)")
    p.add_argument(
        "--group", action="append", metavar="COL", dest="groups",
        help="a column defining the groups (repeat; default: the manifest's)",
    )  # fmt: skip
    p.add_argument("--dataset", metavar="NAME", help="dataset name shown (without --attempt)")
    p.add_argument("--version", metavar="LABEL", help="version label shown (without --attempt)")
    p.add_argument("--c", type=number(float, "--c"), help="threshold line of the curve")
    p.add_argument(
        "--k-max", type=number(int, "--k-max"), help="largest k of the curve (0 to 1000)"
    )
    p.add_argument(
        "--skyline-c", type=number(float, "--skyline-c"), help="confidence of the skyline"
    )
    add_missing_arg(p)
    add_input_args(p)
    add_output_args(p)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.errors import InputError
    from airflow_privacy.gate.refs import ReleaseRef
    from airflow_privacy.gate.report import ReportRequest, checks_from_files, run_report

    if args.attempt and args.checks:
        raise InputError("--check files and --attempt do not mix: an attempt's checks are "
                         "the ones recorded in the ledger")  # fmt: skip
    if args.attempt and (args.dataset or args.version):
        raise InputError("--dataset and --version come from the ledger with --attempt")
    release = ref(args.release, args)
    target = ReleaseRef(path=args.out) if args.out is not None else None
    checks = checks_from_files(args.checks)
    env = run_report(
        ReportRequest(
            release=release,
            attempt=args.attempt,
            checks=checks,
            out=target,
            sensitive=args.sensitive,
            group_columns=args.groups,
            dataset=args.dataset,
            version=args.version,
            c=args.c,
            k_max=args.k_max,
            skyline_c=args.skyline_c,
            ledger=args.ledger,
            missing_as=args.missing_as,
            fmt=args.input_format,
            delimiter=args.delimiter,
            manifest=ReleaseRef(path=args.manifest) if args.manifest is not None else None,
        ),
        context(args),
    )
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
