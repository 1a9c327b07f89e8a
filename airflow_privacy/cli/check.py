"""``airflow-privacy check``: one release against one criterion (exit 0 safe, 1 unsafe)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from airflow_privacy.cli.common import (
    EXIT_SAFE,
    EXIT_UNSAFE,
    Progress,
    add_release_args,
    boolean,
    load_bucketization,
    number,
    release_info,
    write_json,
)
from airflow_privacy.cli.report import add_report_arg, check_report_path, report_for

NAME = "check"


def register(sub: Any) -> None:
    from airflow_privacy.core.criteria.registry import CRITERIA

    p = sub.add_parser(
        NAME, help="check a release against one criterion (exit 0 safe, 1 unsafe)",
        description="Check a release against one criterion. Exit 0 = safe, 1 = unsafe, "
        "2 = bad input.",
    )  # fmt: skip
    add_release_args(p)
    p.add_argument("--criterion", required=True, choices=list(CRITERIA), help="criterion")
    p.add_argument("--k", type=number(int, "--k"), help="k (k-anonymity, ck-/negation-safety)")
    p.add_argument("--l", type=number(float, "--l"), help="l (l-diversity variants)")
    p.add_argument(
        "--c", type=number(float, "--c"),
        help="c: confidence threshold in (0,1] (ck-/negation-safety) or recursive-cl's c",
    )  # fmt: skip
    p.add_argument("--t", type=number(float, "--t"), help="t (t-closeness)")
    p.add_argument(
        "--ordered", type=boolean, default=None,
        help="t-closeness: ordered (numeric) distance true/false (default: auto)",
    )  # fmt: skip
    p.add_argument(
        "--point", action="append", default=None, metavar="l,k,m,c", dest="points",
        help="skyline: a knowledge point, repeat for several: safe iff an adversary who knows "
        "l values the target does not have, the values of k other people and m people who "
        "have the target's value if anyone does stays below confidence c (0 < c <= 1)",
    )  # fmt: skip
    add_report_arg(p)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.core.criteria.registry import CRITERIA, validate

    progress = Progress(args.quiet)
    raw = {"k": args.k, "l": args.l, "c": args.c, "t": args.t, "ordered": args.ordered,
           "points": args.points}  # fmt: skip
    params = validate(args.criterion, raw)  # before reading a possibly large file
    html = check_report_path(args.report)
    b = load_bucketization(args, progress)
    progress(f"checking {args.criterion}")
    result = CRITERIA[args.criterion].run(b, params)
    progress("done")
    payload = result.to_dict()
    payload["release"] = release_info(args, b)
    if html is not None:
        report_for(html, args.release, NAME, payload, sensitive=args.sensitive,
                   group_columns=list(args.groups), safe=result.safe,
                   reasons=[f"{result.criterion}: {result.reason}"], progress=progress)  # fmt: skip
    if args.format == "json":
        write_json(payload, out)
    else:
        out.write(render(result, args.release, b.n_records, b.n_groups))
    return EXIT_SAFE if result.safe else EXIT_UNSAFE


def render(result: Any, release: str, records: int, groups: int) -> str:
    """A criterion result as a few lines a person reads in a terminal."""
    if result.criterion == "skyline":
        return _render_skyline(result, release, records, groups)
    params = ", ".join(
        f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in result.parameters.items()
    )
    verdict = "SAFE" if result.safe else "UNSAFE"
    lines = [
        f"{result.criterion} ({params}): {verdict}",
        f"  release: {release} ({records:,} records in {groups:,} groups)",
        f"  value:   {result.value:.6g}",
        f"  why:     {result.reason}",
    ]
    return "\n".join(lines) + "\n"


def _render_skyline(result: Any, release: str, records: int, groups: int) -> str:
    """The skyline criterion: one table row per point, then the deciding point's reason."""
    verdict = "SAFE" if result.safe else "UNSAFE"
    points = result.details["points"]
    lines = [
        f"skyline ({len(points)} point{'s' if len(points) != 1 else ''}): {verdict}",
        f"  release: {release} ({records:,} records in {groups:,} groups)",
        "     l    k    m      c    breach  verdict",
    ]
    for p in points:
        l, k, m = p["point"]  # noqa: E741
        lines.append(
            f"  {l:4d} {k:4d} {m:4d} {p['c']:6.3g}  {p['breach']:8.4f}  "
            f"{'safe' if p['safe'] else 'UNSAFE'}"
        )
    lines.append(f"  why:     {result.reason}")
    return "\n".join(lines) + "\n"
