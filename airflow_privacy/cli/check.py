"""``airflow-privacy check``: a release against one or more criteria (exit 0 safe, 1 unsafe).

An adapter over :func:`airflow_privacy.gate.check.run_check` (the same service as
``CheckSafetyOperator``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.benign import add_benign_arg
from airflow_privacy.cli.common import (
    add_attempt_args,
    add_input_args,
    add_missing_arg,
    add_output_args,
    boolean,
    context,
    criteria_with_shorthand,
    emit,
    number,
    ref,
    wrap,
)
from airflow_privacy.cli.report import add_report_arg, report_after, report_target

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = "check"


def add_criterion_args(p: argparse.ArgumentParser, names: str) -> None:
    """``--criterion`` (repeatable, NAME or NAME:PARAM=VALUE,...) and the single-criterion
    parameter flags of ``check``."""
    p.add_argument(
        "--criterion", action="append", required=True, dest="criteria",
        metavar="NAME[:PARAM=VALUE,...]",
        help=f"a criterion (repeat for several; all must pass): a name with the flags below, "
        f"or NAME:PARAM=VALUE,... e.g. ck-safety:c=0.7,k=3. Names: {names}",
    )  # fmt: skip
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


def register(sub: Any) -> None:
    from airflow_privacy.core.criteria.registry import CRITERIA

    p = sub.add_parser(
        NAME, help="check a release against criteria (exit 0 safe, 1 unsafe)",
        description="Check a release against one or more criteria, counted once. Exit 0 = "
        "safe, 1 = unsafe, 2 = bad input. RELEASE is a file (.csv[.gz], .parquet), an "
        "object-store URI (s3://...), or table:SCHEMA.NAME with --conn URL (counted in the "
        "database).",
    )  # fmt: skip
    p.add_argument("release", metavar="RELEASE", help="the release (file, URI or table:NAME)")
    p.add_argument("--sensitive", required=True, metavar="COL", help="the sensitive column")
    p.add_argument(
        "--group", action="append", required=True, metavar="COL", dest="groups",
        help="a column that defines the QI-groups (repeat for several)",
    )  # fmt: skip
    add_criterion_args(p, ", ".join(CRITERIA))
    add_benign_arg(p)
    add_missing_arg(p)
    add_input_args(p)
    add_attempt_args(p, NAME)
    add_report_arg(p)
    add_output_args(p)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.gate.check import CheckRequest, run_check

    ctx = context(args)
    target = report_target(args)
    env = run_check(
        CheckRequest(
            release=ref(args.release, args),
            sensitive=args.sensitive,
            group_columns=list(args.groups),
            criteria=criteria_with_shorthand(args),
            name=args.name,
            attempt=args.attempt,
            ledger=args.ledger,
            missing_as=args.missing_as,
            fmt=args.input_format,
            delimiter=args.delimiter,
            benign=args.benign,
        ),
        ctx,
    )
    report_after(args, env, ctx, target)
    return emit(env, args, out, render)


def render(env: Envelope) -> str:
    """A check's envelope as a few lines a person reads in a terminal."""
    if env.outcome == "already-published":
        return f"check: {env.summary}\n"
    rel = env.release
    where = f"{rel.ref} ({rel.records:,} records in {rel.groups:,} groups)" if rel else "?"
    blocks = []
    for r in env.results:
        if r["criterion"] == "skyline":
            blocks.append(_skyline(r, where))
            continue
        params = ", ".join(
            f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
            for k, v in r["parameters"].items()
            if v is not None
        )
        verdict = "SAFE" if r["safe"] else "UNSAFE"
        value = r["value"]
        shown = f"{value:.6g}" if isinstance(value, int | float) else str(value)
        blocks.append(
            "\n".join(
                [
                    f"{r['criterion']} ({params}): {verdict}",
                    f"  release: {where}",
                    f"  value:   {shown}",
                    f"  why:     {wrap(r['reason'])}",
                ]
            )
        )
    text = "\n".join(blocks) + "\n"
    if env.attempt is not None:
        text += f"  recorded: check {env.name!r} of attempt {env.attempt.uuid}\n"
    return text


def _skyline(r: dict[str, Any], where: str) -> str:
    """The skyline criterion: one table row per point, then the deciding point's reason."""
    verdict = "SAFE" if r["safe"] else "UNSAFE"
    points = r["details"]["points"]
    lines = [
        f"skyline ({len(points)} point{'s' if len(points) != 1 else ''}): {verdict}",
        f"  release: {where}",
        "     l    k    m      c    breach  verdict",
    ]
    for p in points:
        l, k, m = p["point"]  # noqa: E741
        lines.append(
            f"  {l:4d} {k:4d} {m:4d} {p['c']:6.3g}  {p['breach']:8.4f}  "
            f"{'safe' if p['safe'] else 'UNSAFE'}"
        )
    lines.append(f"  why:     {wrap(r['reason'])}")
    return "\n".join(lines)
