"""``airflow-privacy skyline``: the privacy skyline of a release at a confidence ``c``.

The maximal ``(l, k, m)`` for which the release is safe (SkylineFind; Chen, LeFevre,
Ramakrishnan 2007, slide "Skyline Exploratory Tool"): an adversary who knows ``l`` values the
target does not have, the values of ``k`` other people and ``m`` implications "v has s -> the
target has s" stays below confidence ``c`` for every point on or beneath the skyline.
"""

from __future__ import annotations

import argparse
from pathlib import Path
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

NAME = "skyline"
DEFAULT_MAX = 10
MAX_BOUND = 1000  # the staircase holds (max-l + 1) x (max-k + 1) numbers


def register(sub: Any) -> None:
    p = sub.add_parser(
        NAME, help="the maximal (l, k, m) knowledge a release withstands at confidence c",
        description="Find the privacy skyline of a release: the maximal points (l, k, m) "
        "such that an adversary who knows l values the target does not have, the values of "
        "k other people and m implications 'v has s -> the target has s' stays below "
        "confidence c. Exit 0 when the skyline was computed (also when nothing is safe; gate "
        "with 'check --criterion skyline'), 2 = bad input.",
    )  # fmt: skip
    add_release_args(p)
    add_benign_arg(p)
    p.add_argument(
        "--c", type=number(float, "--c"), required=True,
        help="confidence threshold in (0, 1]: safe means every breach stays below c",
    )  # fmt: skip
    for dim, what in (
        ("l", "values the target is known not to have"),
        ("k", "people whose values the adversary knows"),
        ("m", "implications about other people"),
    ):
        p.add_argument(
            f"--max-{dim}", type=number(int, f"--max-{dim}"), default=DEFAULT_MAX,
            metavar=dim.upper(),
            help=f"explore at most this many {what} (whole, 0 to {MAX_BOUND}; default "
            f"{DEFAULT_MAX})",
        )  # fmt: skip
    p.add_argument(
        "--plot", metavar="FILE", default=None,
        help="also draw the skyline as staircases: FILE.svg (no dependency) or FILE.png "
        "(needs matplotlib: pip install 'airflow-privacy[plot]')",
    )  # fmt: skip


def _validate(args: argparse.Namespace) -> None:
    if not 0.0 < args.c <= 1.0:
        raise InputError(f"--c must be in (0, 1], got {args.c:g}")
    for dim in ("l", "k", "m"):
        value = getattr(args, f"max_{dim}")
        if not 0 <= value <= MAX_BOUND:
            raise InputError(f"--max-{dim} must be a whole number in [0, {MAX_BOUND}], got {value}")


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.cli.skyline_plot import check_plot_path, write_plot
    from airflow_privacy.core.criteria.skyline import find_skyline, witness_dict

    _validate(args)  # before reading a possibly large file
    plot = check_plot_path(args.plot) if args.plot is not None else None
    progress = Progress(args.quiet)
    from airflow_privacy.gate.benign import benign_details, benign_values

    benign = benign_values(args.benign)
    b = load_bucketization(args, progress).with_benign(benign)
    bounds = (args.max_l, args.max_k, args.max_m)
    progress(f"exploring l <= {bounds[0]}, k <= {bounds[1]}, m <= {bounds[2]} at c = {args.c:g}")
    result = find_skyline(b, args.c, *bounds)
    progress(f"{len(result.points)} skyline points after {result.evaluations} breach evaluations")
    if plot is not None:
        write_plot(result, plot, Path(args.release).name)
        progress(f"wrote {plot}")
    if args.format == "json":
        beyond = result.unsafe_example
        payload = {
            **benign_details(benign, b.values),
            "c": result.c,
            "points": [list(p) for p in result.points],
            "bounds": dict(zip("lkm", result.bounds, strict=True)),
            "breaches": [
                {
                    "point": [r.l, r.k, r.m],
                    "breach": r.breach,
                    "exact": f"{r.numerator}/{r.denominator}",
                    "witness": witness_dict(b, r),
                }
                for r in result.breaches
            ],
            "beyond": None
            if beyond is None
            else {
                "point": [beyond.l, beyond.k, beyond.m],
                "breach": beyond.breach,
                "witness": witness_dict(b, beyond),
            },
            "staircase": [list(row) for row in result.staircase],
            "evaluations": result.evaluations,
            "plot": str(plot) if plot is not None else None,
            "release": release_info(args, b),
        }
        write_json(payload, out)
    else:
        out.write(clean(render(result, args.release, b)))  # labels from the data: shown only
    return EXIT_SAFE


def render(result: Any, release: str, b: Any) -> str:
    """The skyline as a small table (like the slides' "Knowledge skyline" table)."""
    from airflow_privacy.core.criteria.skyline import describe_breach

    max_l, max_k, max_m = result.bounds
    lines = [
        f"privacy skyline of {release} ({b.n_records:,} records in {b.n_groups:,} groups) "
        f"at c = {result.c:g}",
        f"  explored l <= {max_l}, k <= {max_k}, m <= {max_m} "
        f"({result.evaluations} breach evaluations)",
    ]
    if not result.points:
        lines.append("  nothing is safe: even without background knowledge the breach reaches c")
    else:
        lines.append("  safe for any knowledge on or beneath these points:")
        lines.append("     l    k    m    breach")
        for r in result.breaches:
            lines.append(f"  {r.l:4d} {r.k:4d} {r.m:4d}  {r.breach:8.4f}")
    beyond = result.unsafe_example
    if beyond is not None:
        lines.append(
            f"  beyond it, at ({beyond.l}, {beyond.k}, {beyond.m}): {describe_breach(b, beyond)}"
        )
    return "\n".join(lines) + "\n"
