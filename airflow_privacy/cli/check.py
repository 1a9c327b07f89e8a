"""``airflow-privacy check``: a release against one or more criteria (exit 0 safe, 1 unsafe).

An adapter over :func:`airflow_privacy.gate.check.run_check` (the same service as
``CheckSafetyOperator``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.benign import add_benign_arg
from airflow_privacy.cli.common import (
    add_attempt_args,
    add_criterion_flags,
    add_input_args,
    add_missing_arg,
    add_output_args,
    context,
    criteria_with_shorthand,
    emit,
    ref,
    wrap,
)
from airflow_privacy.cli.report import add_report_arg, report_after, report_target

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = "check"


def add_criterion_args(p: argparse.ArgumentParser, names: str) -> None:
    """``--criterion`` (repeatable, NAME or NAME:PARAM=VALUE,...) and the single-criterion
    parameter flags (generated from the criteria's parameters)."""
    p.add_argument(
        "--criterion", action="append", required=True, dest="criteria",
        metavar="NAME[:PARAM=VALUE,...]",
        help=f"a criterion (repeat for several; all must pass): a name with the flags below, "
        f"or NAME:PARAM=VALUE,... e.g. ck-safety:c=0.7,k=3. Names: {names}",
    )  # fmt: skip
    add_criterion_flags(p)


def register(sub: Any) -> None:
    from airflow_privacy.core.criteria.registry import CRITERIA

    p = sub.add_parser(
        NAME, help="check a release against criteria (exit 0 safe, 1 unsafe)",
        description="Check a release against one or more criteria, counted once. Exit 0 = "
        "safe, 1 = unsafe, 2 = bad input. RELEASE is a file (.csv[.gz], .parquet), an "
        "object-store URI (s3://...), table:SCHEMA.NAME with --conn URL (counted in the "
        "database), or spark:DB.NAME (a table of the Spark catalog, counted by Spark).",
    )  # fmt: skip
    p.add_argument(
        "release", metavar="RELEASE", help="the release (file, URI, table:NAME or spark:NAME)"
    )
    p.add_argument("--sensitive", required=True, metavar="COL", help="the sensitive column")
    p.add_argument(
        "--group", action="append", required=True, metavar="COL", dest="groups",
        help="a column that defines the QI-groups (repeat for several)",
    )  # fmt: skip
    add_criterion_args(p, ", ".join(CRITERIA))
    add_benign_arg(p)
    p.add_argument(
        "--population", metavar="REF", default=None,
        help="the population table (file, URI or table:NAME, like RELEASE), counted on the "
        "same --group columns: k-map without --sampling-fraction/--population-size and "
        "delta-presence are decided against it",
    )  # fmt: skip
    add_missing_arg(p)
    add_input_args(p)
    p.add_argument(
        "--backend", choices=("auto", "arrow", "duckdb", "spark"), default="auto",
        help="where a file is counted: arrow (in process), duckdb (an embedded GROUP BY, out "
        "of core), spark (a Parquet file or folder, by Spark's groupBy in the session Spark's "
        "own configuration gives) or auto (DuckDB from 4 x 10^7 Parquet cells, 4 MiB of "
        ".csv.gz, 64 MiB of CSV; a SQL table is always counted in its database, a "
        "spark:TABLE by Spark). Only per-group counts come back (docs/backends.md)",
    )  # fmt: skip
    p.add_argument(
        "--entity", metavar="COL", default=None,
        help="a column naming the person each row belongs to: count each person once, "
        "grouped by the multiset of their rows' groups (DLP's entity_id)",
    )  # fmt: skip
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
            entity=args.entity,
            name=args.name,
            attempt=args.attempt,
            ledger=args.ledger,
            missing_as=args.missing_as,
            fmt=args.input_format,
            delimiter=args.delimiter,
            benign=args.benign,
            population=ref(args.population, args) if args.population is not None else None,
            backend=args.backend,
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
    from airflow_privacy.core.criteria.registry import known

    blocks = []
    for r in env.results:
        cls = known(str(r["criterion"]))
        own = cls.terminal_text(r, where, wrap) if cls is not None else None
        which = r.get("details", {}).get("which_attribute")
        tail = f"\n  which:   {wrap(str(which))}" if which else ""
        if own is not None:
            blocks.append(own + tail)
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
            + tail
        )
    text = "\n".join(blocks) + "\n"
    if env.attempt is not None:
        text += f"  recorded: check {env.name!r} of attempt {env.attempt.uuid}\n"
    return text
