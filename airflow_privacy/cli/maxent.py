"""``airflow-privacy maxent``: disclosure risk under probabilistic background knowledge
(Privacy-MaxEnt, Du et al. 2008).

Exit 0 = estimated (and, with ``--c``, the maximum posterior is below c), 1 = the maximum
posterior reaches ``--c``, 2 = bad input (including infeasible knowledge, with the
conflicting statements named on stderr).
"""

from __future__ import annotations

import argparse
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
from airflow_privacy.cli.report import add_report_arg, check_report_path, report_for
from airflow_privacy.errors import InputError

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
    p.add_argument(
        "--not-sensitive",
        action="append",
        default=[],
        metavar="VALUE",
        help="a sensitive value whose disclosure is acceptable (repeat); it does not count "
        "towards the maximum posterior",
    )
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
    p.add_argument(
        "--input-format",
        choices=("csv", "parquet"),
        default=None,
        help="format of RELEASE and --original (default: from the extension)",
    )
    p.add_argument("--delimiter", default=None, help="CSV delimiter (default: detected)")
    add_report_arg(p)
    add_output_args(p)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.core.io import column_names, read_release
    from airflow_privacy.core.maxent import BucketRelease, SolverOptions, estimate
    from airflow_privacy.core.maxent.knowledge_file import load_knowledge

    _validate(args)
    html = check_report_path(args.report)
    progress = Progress(args.quiet)
    path = Path(args.release)
    present = column_names(path, args.input_format, args.delimiter)
    for col, what in ((args.sensitive, "sensitive"), (args.bucket, "bucket")):
        if col not in present:
            raise InputError(
                f"{what} column {col!r} does not exist (columns: {', '.join(present)})"
            )
    qis = args.qis or [c for c in present if c not in (args.sensitive, args.bucket)]
    progress(f"reading {path}")
    table = read_release(
        path, [*qis, args.bucket, args.sensitive], args.input_format, args.delimiter
    )
    release = BucketRelease.from_arrow(table, qis, args.sensitive, args.bucket)
    progress(
        f"{release.n_records:,} records in {release.n_buckets:,} buckets, "
        f"{len(release.qi_values):,} QI values, {len(release.values)} sensitive values"
    )
    knowledge = None
    if args.knowledge:
        knowledge = load_knowledge(args.knowledge, release)
        progress(f"{len(knowledge)} statement(s) from {args.knowledge}")
    original = None
    if args.original:
        progress(f"reading the original table {args.original}")
        original = read_release(
            args.original, [*qis, args.sensitive], args.input_format, args.delimiter
        )
    if args.top_positive or args.top_negative:
        progress(
            f"mining the top {args.top_positive} positive and {args.top_negative} negative "
            f"rules (min support {args.min_support})"
        )
    progress("solving the maximum-entropy problem")
    result = estimate(
        release,
        knowledge,
        original=original,
        top_positive=args.top_positive,
        top_negative=args.top_negative,
        min_support=args.min_support,
        rule_widths=args.rule_widths,
        not_sensitive=tuple(args.not_sensitive),
        options=SolverOptions(split=not args.joint),
    )
    st = result.solution.stats
    progress(
        f"done in {st.seconds:.2f} s: {st.buckets_solved:,} bucket(s) solved jointly, "
        f"{st.buckets - st.buckets_solved:,} in closed form; residual {st.residual:.1e}"
    )
    if args.output:
        _write_table(result, args.output)
        progress(f"wrote P*(s | q) to {args.output}")
    blocked = args.c is not None and result.max_posterior >= args.c
    payload = result.to_dict(args.top)
    payload["release"]["path"] = str(path)
    payload["c"] = args.c
    payload["safe"] = None if args.c is None else not blocked
    payload["reason"] = _reason(result, args.c)
    if html is not None:
        from airflow_privacy.report import maxent_heatmap

        report_for(html, path, NAME, {**payload, "heatmap": maxent_heatmap(result)},
                   sensitive=args.sensitive, group_columns=[args.bucket],
                   safe=payload["safe"], reasons=[f"maxent: {payload['reason']}"],
                   progress=progress)  # fmt: skip
    if args.format == "json":
        write_json(payload, out)
    else:
        _text(result, args, out)
    return EXIT_UNSAFE if blocked else EXIT_SAFE


def _validate(args: argparse.Namespace) -> None:
    if args.top_positive < 0 or args.top_negative < 0:
        raise InputError("--top-positive and --top-negative must be >= 0")
    if args.min_support < 1:
        raise InputError(f"--min-support must be >= 1, got {args.min_support}")
    if (args.top_positive or args.top_negative) and not args.original:
        raise InputError("--top-positive/--top-negative mine rules from --original FILE")
    if args.c is not None and not 0 < args.c <= 1:
        raise InputError(f"--c must be in (0, 1], got {args.c}")
    if args.top < 0:
        raise InputError(f"--top must be >= 0, got {args.top}")
    if args.qis and (args.sensitive in args.qis or args.bucket in args.qis):
        raise InputError("--qi must not name the sensitive or the bucket column")
    if args.output:
        from airflow_privacy.core.io import detect_format

        detect_format(Path(args.output))


def _reason(result: Any, c: float | None) -> str:
    at = result.max_at
    if at is None:
        return "every sensitive value is declared not sensitive"
    who = f"person {at.label}" if at.kind == "person" else f"a person with {at.label}"
    base = (
        f"under the given knowledge the maximum-entropy estimate says {who} has "
        f"{at.value!r} with probability {at.posterior:.4f}"
    )
    if c is None:
        return base
    verdict = "reaches" if at.posterior >= c else "is below"
    return f"{base}, which {verdict} c = {c:g}"


def _text(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    rel = result.release
    st = result.solution.stats
    out.write(
        f"maxent estimate of {args.release} ({rel.n_records:,} records, {rel.n_buckets:,} "
        f"buckets, {len(rel.values)} sensitive values)\n"
    )
    n_file = len(result.facts) - len(result.rules)
    parts = []
    if args.knowledge:
        parts.append(f"{n_file} statement(s) from {args.knowledge}")
    if result.rules:
        n_pos = sum(r.positive for r in result.rules)
        parts.append(
            f"{n_pos} positive + {len(result.rules) - n_pos} negative rules mined from "
            f"{args.original} (min support {args.min_support})"
        )
    out.write(f"  knowledge: {'; '.join(parts) if parts else 'none (published data only)'}\n")
    out.write(
        f"  solver:    {st.buckets_solved:,} bucket(s) solved jointly, "
        f"{st.buckets - st.buckets_solved:,} in closed form (Theorem 5); "
        f"{st.newton_iterations} Newton steps; residual {st.residual:.1e}; {st.seconds:.2f} s\n"
    )
    verdict = ""
    if args.c is not None:
        verdict = "  BLOCKED" if result.max_posterior >= args.c else "  below c"
    out.write(f"  maximum posterior: {result.max_posterior:.4f}{verdict}\n")
    out.write(f"  why:       {_reason(result, args.c)}\n")
    if result.accuracy is not None:
        out.write(
            f"  estimation accuracy vs {args.original}: {result.accuracy:.6f} nats "
            "(weighted KL; lower = the estimate is closer to the truth)\n"
        )
    top = result.top_at_risk(args.top)
    if top:
        out.write("  most at risk:\n")
        for i, a in enumerate(top, 1):
            kind = "person" if a.kind == "person" else f"{a.records} record(s)"
            out.write(f"  {i:3d}. {a.posterior:.4f}  {a.value}  {a.label}  ({kind})\n")


def _write_table(result: Any, path: str) -> None:
    import pandas as pd

    from airflow_privacy.core.io import write_release

    header, rows = result.posterior_rows()
    write_release(pd.DataFrame(rows, columns=header), path)
