"""``airflow-privacy disclosure``: the maximum-disclosure curve for k = 0..K."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from airflow_privacy.cli.benign import add_benign_arg
from airflow_privacy.cli.common import (
    EXIT_SAFE,
    Progress,
    add_release_args,
    clean,
    load_bucketization,
    number,
    release_info,
    write_json,
)
from airflow_privacy.errors import InputError

NAME = "disclosure"


def register(sub: Any) -> None:
    p = sub.add_parser(
        NAME, help="maximum disclosure for k = 0..K pieces of knowledge",
        description="Maximum disclosure against k basic implications and k negated atoms, "
        "for k = 0..K, with the witness of each.",
    )  # fmt: skip
    add_release_args(p)
    add_benign_arg(p)
    p.add_argument(
        "--k-max", type=number(int, "--k-max"), required=True, metavar="K",
        help="the largest k of the curve (whole, 0 to 100000; the curve is flat from the "
        "number of distinct sensitive values in a group on)",
    )  # fmt: skip


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.core.criteria.registry import MAX_K_CURVE
    from airflow_privacy.core.criteria.worst_case import (
        describe_witness,
        disclosure_curve,
        witness_dict,
    )

    if not 0 <= args.k_max <= MAX_K_CURVE:  # before reading a possibly large file
        raise InputError(f"--k-max must be a whole number in [0, {MAX_K_CURVE}], got {args.k_max}")
    progress = Progress(args.quiet)
    from airflow_privacy.gate.benign import benign_details, benign_values

    benign = benign_values(args.benign)
    b = load_bucketization(args, progress).with_benign(benign)
    progress(f"computing the disclosure curve for k = 0..{args.k_max}")
    curve = disclosure_curve(b, args.k_max)
    progress("done")
    if args.format == "json":
        payload = {
            "release": release_info(args, b),
            **benign_details(benign, b.values),
            "curve": [
                {
                    "k": p.k,
                    "implications": p.implications.max_disclosure,
                    "negations": p.negations.max_disclosure,
                    "implications_witness": witness_dict(b, p.implications),
                    "negations_witness": witness_dict(b, p.negations),
                }
                for p in curve
            ],
        }
        write_json(payload, out)
        return EXIT_SAFE
    lines = [
        f"maximum disclosure of {args.release} ({b.n_records:,} records, {b.n_groups:,} groups)",
        "   k  implications  negations",
    ]
    for p in curve:
        lines.append(
            f"{p.k:4d}  {p.implications.max_disclosure:12.4f}  {p.negations.max_disclosure:9.4f}"
        )
    last = curve[-1]
    lines.append(f"at k = {last.k}: {describe_witness(b, last.implications)}")
    # the release's name and the witness's labels come from the data: shown, not obeyed
    out.write(clean("\n".join(lines) + "\n"))
    return EXIT_SAFE
