"""``airflow-privacy report``: the HTML release report of a release and its checks' JSON.

Also the ``--report FILE.html`` option of ``check``, ``maxent`` and ``audit``
(:func:`add_report_arg`, :func:`check_report_path`, :func:`write_report`): the path is
checked before any work, and the file is written through a temporary file and a rename,
so an error leaves nothing behind.

Exit 0 = written and nothing failed, 1 = written for a blocked release or a failed
criterion, 2 = bad input (nothing written).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from airflow_privacy.cli.common import (
    EXIT_SAFE,
    EXIT_UNSAFE,
    Progress,
    add_output_args,
    number,
    write_json,
)
from airflow_privacy.errors import InputError

NAME = "report"
STATUSES = ("published", "blocked", "candidate", "checked")


# ------------------------------------------------------------- shared by check/maxent/audit
def add_report_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--report",
        metavar="FILE.html",
        help="also write the HTML release report (self-contained, atomically) to this file",
    )


def check_report_path(path: str | None, option: str = "--report") -> Path | None:
    """The report's path, checked before any work: its folder exists, it is not a folder."""
    if path is None:
        return None
    p = Path(path)
    if not str(path).strip():
        raise InputError(f"{option} is empty: name the HTML file to write")
    if p.is_dir():
        raise InputError(f"{option} {str(p)!r} is a folder, expected a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"folder {str(parent)!r} of {option} does not exist")
    if not os.access(parent, os.W_OK):
        raise InputError(f"folder {str(parent)!r} of {option} is not writable")
    return p


def write_report(path: Path, html: str) -> None:
    """Write ``html`` to ``path`` through a temporary file in the same folder and a rename."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(html)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def report_for(
    path: Path,
    release: str | Path,
    check_name: str,
    payload: Mapping[str, Any],
    *,
    sensitive: str | None,
    group_columns: list[str] | None,
    safe: bool | None,
    reasons: list[str],
    progress: Any,
    dataset: str | None = None,
    version: str | None = None,
    release_id: int | None = None,
    status: str | None = None,
) -> None:
    """Build the report of ``release`` with one check's JSON ``payload`` and write it."""
    from airflow_privacy.report import build_release_report, render_html
    from airflow_privacy.serialization import json_safe

    report = build_release_report(
        release,
        sensitive=sensitive,
        group_columns=group_columns,
        dataset=dataset,
        version=version,
        release_id=release_id,
        status=status or ("blocked" if safe is False else "checked"),
        reasons=reasons if safe is False else (),
        checks={check_name: json_safe(dict(payload))},
        progress=progress,
    )
    write_report(path, render_html(report))
    progress(f"report written to {path}")


# ----------------------------------------------------------------------- the command
def register(sub: Any) -> None:
    p = sub.add_parser(
        NAME,
        help="write the HTML release report of a release and its checks",
        description="Write the self-contained HTML release report of RELEASE: the verdict, "
        "the criteria and their numbers, the disclosure-vs-k curve, the privacy skyline, the "
        "composition audit and MaxEnt posteriors (from the JSON of `audit` / `maxent`), and "
        "the utility of the release. Exit 0 = written, nothing failed; 1 = written, the "
        "release is blocked or a criterion failed; 2 = bad input (nothing written).",
    )
    p.add_argument("release", metavar="RELEASE", help="release file (.csv[.gz] or .parquet)")
    p.add_argument(
        "--out",
        metavar="FILE.html",
        help="where to write the report (default: RELEASE.report.html beside the release)",
    )
    p.add_argument(
        "--check",
        action="append",
        default=[],
        metavar="[NAME=]FILE",
        dest="checks",
        help="the --format json output of `check`, `maxent` or `audit` (or an operator's "
        "privacy_report); repeat for several",
    )
    p.add_argument("--sensitive", metavar="COL", help="sensitive column (default: manifest)")
    p.add_argument(
        "--group", action="append", metavar="COL", dest="groups",
        help="a column defining the groups (repeat; default: the manifest's)",
    )  # fmt: skip
    p.add_argument("--dataset", metavar="NAME", help="dataset name shown in the report")
    p.add_argument("--version", metavar="LABEL", help="version label shown in the report")
    p.add_argument("--release-id", type=number(int, "--release-id"), help="ledger release id")
    p.add_argument(
        "--status",
        choices=STATUSES,
        default=None,
        help="the decision (default: blocked when a check failed, else checked)",
    )
    p.add_argument(
        "--reason", action="append", default=[], dest="reasons", metavar="TEXT",
        help="why the release was blocked (repeat; default: the failed checks' reasons)",
    )  # fmt: skip
    p.add_argument("--c", type=number(float, "--c"), help="threshold line of the curve")
    p.add_argument("--k-max", type=number(int, "--k-max"), help="largest k of the curve")
    p.add_argument(
        "--skyline-c", type=number(float, "--skyline-c"), help="confidence of the skyline"
    )
    add_output_args(p)


def _read_checks(specs: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        name, sep, file = spec.partition("=")
        if not sep:
            name, file = Path(spec).stem, spec
        p = Path(file)
        if not p.is_file():
            raise InputError(f"--check file {file!r} does not exist")
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"--check file {file!r} is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise InputError(f"--check file {file!r} is not a JSON object")
        if name in out:
            raise InputError(f"--check name {name!r} is given twice: use NAME=FILE")
        out[name] = data
    return out


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.report import build_release_report, render_html

    progress = Progress(args.quiet)
    target = check_report_path(args.out or f"{args.release}.report.html", "--out")
    assert target is not None
    checks = _read_checks(args.checks)
    status = args.status
    if status is None:
        unsafe = any(d.get("safe") is False for d in checks.values())
        status = "blocked" if unsafe else "checked"
    report = build_release_report(
        args.release,
        sensitive=args.sensitive,
        group_columns=args.groups,
        dataset=args.dataset,
        version=args.version,
        release_id=args.release_id,
        status=status,
        reasons=args.reasons,
        checks=checks,
        c=args.c,
        k_max=args.k_max,
        skyline_c=args.skyline_c,
        progress=progress,
    )
    write_report(target, render_html(report))
    progress(f"report written to {target}")
    v = report.verdict
    if args.format == "json":
        write_json({"path": str(target), "report": report.to_dict()}, out)
    else:
        out.write(
            f"{v.headline}\n  report: {target}\n  criteria: {v.checks_run} evaluated, "
            f"{v.checks_failed} failed\n"
        )
        for r in v.reasons:
            out.write(f"  reason: {r}\n")
    return EXIT_UNSAFE if v.status == "blocked" or v.checks_failed else EXIT_SAFE
