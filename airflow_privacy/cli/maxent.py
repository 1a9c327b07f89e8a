"""``airflow-privacy maxent``: disclosure risk under probabilistic background knowledge
(Privacy-MaxEnt, Du et al. 2008).

Exit 0 = estimated (and, with ``--c``, the maximum posterior is below c), 1 = the maximum
posterior reaches ``--c``, 2 = bad input (including infeasible knowledge, with the
conflicting statements named on stderr).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.benign import add_benign_arg
from airflow_privacy.cli.common import (
    add_attempt_args,
    add_input_args,
    add_missing_arg,
    add_output_args,
    context,
    emit,
    number,
    ref,
    wrap,
)
from airflow_privacy.cli.report import add_report_arg, report_after, report_target

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = "maxent"


def register(sub: Any) -> None:
    p = sub.add_parser(
        NAME,
        help="estimate P(sensitive | QI) under probabilistic background knowledge",
        description="Maximum-entropy estimate of P(s | q) for a bucketized release, given "
        "background knowledge (a YAML/JSON file and/or the Top-(K+, K-) association rules of "
        "the original table): the maximum posterior, the QI values and people most at risk, "
        "and the estimation accuracy against the original. Exit 0 = below --c (or no --c), "
        "1 = the maximum posterior reaches --c, 2 = bad input or infeasible knowledge.",
    )
    p.add_argument(
        "release",
        metavar="RELEASE",
        help="bucketized release (.csv[.gz] or .parquet): QI columns, a bucket "
        "column and the sensitive column",
    )
    p.add_argument("--sensitive", required=True, metavar="COL", help="the sensitive column")
    p.add_argument("--bucket", required=True, metavar="COL", help="the bucket (group id) column")
    p.add_argument(
        "--qi",
        action="append",
        metavar="COL",
        dest="qis",
        help="a quasi-identifier column (repeat for several; default: every column but the "
        "bucket and sensitive ones)",
    )
    p.add_argument(
        "--knowledge",
        metavar="FILE",
        help="background knowledge, YAML or JSON (docs/usage/maxent.md)",
    )
    p.add_argument(
        "--original",
        metavar="FILE",
        help="the original (pre-bucketization) table: needed to mine association rules, "
        "and gives the estimation accuracy",
    )
    p.add_argument(
        "--top-positive",
        type=number(int, "--top-positive"),
        default=0,
        metavar="K",
        help="use the K strongest positive rules Q => s (default 0)",
    )
    p.add_argument(
        "--top-negative",
        type=number(int, "--top-negative"),
        default=0,
        metavar="K",
        help="use the K strongest negative rules Q => not s (default 0)",
    )
    p.add_argument(
        "--min-support",
        type=number(int, "--min-support"),
        default=3,
        metavar="N",
        help="minimum support of a mined rule, in records (default 3)",
    )
    p.add_argument(
        "--rule-width",
        type=number(int, "--rule-width"),
        action="append",
        metavar="T",
        dest="rule_widths",
        help="mine rules whose condition names T QI columns (repeat; default: every width)",
    )
    add_benign_arg(p, "--not-sensitive")
    p.add_argument(
        "--c",
        type=number(float, "--c"),
        metavar="C",
        help="block (exit 1) when the maximum posterior is >= C, C in (0, 1]",
    )
    p.add_argument(
        "--top",
        type=number(int, "--top"),
        default=10,
        metavar="N",
        help="how many QI values / people at risk to list (default 10)",
    )
    p.add_argument(
        "--output",
        metavar="FILE",
        help="write the whole P*(s | q) table (.csv or .parquet), atomically",
    )
    p.add_argument(
        "--joint",
        action="store_true",
        help="solve every bucket jointly (no Theorem 5 closed form; slower, same answer)",
    )
    add_missing_arg(p)
    add_input_args(p)
    add_attempt_args(p, NAME)
    add_report_arg(p)
    add_output_args(p)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.gate.maxent import MaxEntRequest, run_maxent
    from airflow_privacy.gate.refs import ReleaseRef

    target = report_target(args)
    ctx = context(args)
    env = run_maxent(
        MaxEntRequest(
            release=ref(args.release, args),
            sensitive=args.sensitive,
            bucket=args.bucket,
            qis=args.qis,
            knowledge=args.knowledge,
            original=(
                ReleaseRef.parse(args.original, args.conn) if args.original is not None else None
            ),
            top_positive=args.top_positive,
            top_negative=args.top_negative,
            min_support=args.min_support,
            rule_widths=args.rule_widths,
            benign=tuple(args.benign),
            c=args.c,
            top=args.top,
            output=ReleaseRef(path=args.output) if args.output is not None else None,
            joint=args.joint,
            name=args.name,
            attempt=args.attempt,
            ledger=args.ledger,
            missing_as=args.missing_as,
            fmt=args.input_format,
            delimiter=args.delimiter,
        ),
        ctx,
    )
    report_after(args, env, ctx, target)
    return emit(env, args, out, render)


def render(env: Envelope) -> str:
    """The estimate's envelope as a few lines a person reads in a terminal."""
    if env.outcome == "already-published":
        return f"maxent: {env.summary}\n"
    d = env.details
    rel = env.release
    v = env.results[0] if env.results else {}
    c = (v.get("parameters") or {}).get("c")
    lines = [
        f"maxent estimate of {rel.ref if rel else '?'} ({d.get('records', 0):,} records, "
        f"{d.get('buckets', 0):,} buckets, {d.get('values', 0)} sensitive values)",
        f"  knowledge: {d.get('knowledge_text') or 'none (published data only)'}",
    ]
    verdict = ""
    if c is not None:
        verdict = "  below c" if env.safe else "  BLOCKED"
    lines.append(f"  maximum posterior: {float(d.get('max_posterior') or 0.0):.4f}{verdict}")
    lines.append(f"  why:       {wrap(env.summary, indent=13)}")
    if d.get("accuracy") is not None:
        lines.append(
            f"  estimation accuracy: {float(d['accuracy']):.6f} nats (weighted KL; lower = the "
            "estimate is closer to the truth)"
        )
    top = [a for a in d.get("top_at_risk") or [] if a.get("kind", "qi") == "qi"]
    if top:
        lines.append("  most at risk:")
        for i, a in enumerate(top, 1):
            lines.append(f"  {i:3d}. {float(a['posterior']):.4f}  {a['value']}  {a['label']}  "
                         f"({a.get('records', 0)} record(s))")  # fmt: skip
    people = d.get("people") or []
    if people:
        highest = max((p["max_posterior"] for p in people if p.get("max_posterior") is not None),
                      default=None)  # fmt: skip
        shown = (f"; the largest posterior about one of them is {highest:.4f}"
                 if highest is not None else "")  # fmt: skip
        lines.append(f"  named people in the knowledge: {len(people)} (by pseudonym only{shown})")
    return "\n".join(lines) + "\n"
