"""The ``airflow-privacy`` command: a thin layer over :mod:`airflow_privacy.core`.

Exit codes: 0 = safe / pass, 1 = unsafe / blocked, 2 = bad input or usage (with a one-line
reason on stderr). ``--format json`` prints machine-readable output on stdout; progress
goes to stderr (silence it with ``--quiet``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from airflow_privacy import __version__
from airflow_privacy.errors import InputError

EXIT_SAFE, EXIT_UNSAFE, EXIT_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_INPUT)


class _Progress:
    def __init__(self, quiet: bool, stream: TextIO | None = None) -> None:
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()

    def __call__(self, message: str) -> None:
        if not self.quiet:
            elapsed = time.perf_counter() - self.start
            self.stream.write(f"[{elapsed:6.2f}s] {message}\n")
            self.stream.flush()


def _number(kind: type[int] | type[float], name: str) -> Any:
    def parse(text: str) -> int | float:
        try:
            return kind(text)
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{name} must be {what}, got {text!r}") from None

    return parse


def _bool(text: str) -> bool:
    low = text.lower()
    if low in ("true", "yes", "1"):
        return True
    if low in ("false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _add_release_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("release", metavar="RELEASE", help="release file (.csv[.gz] or .parquet)")
    p.add_argument("--sensitive", required=True, metavar="COL", help="the sensitive column")
    p.add_argument(
        "--group", action="append", required=True, metavar="COL", dest="groups",
        help="a column that defines the QI-groups (repeat for several)",
    )  # fmt: skip
    p.add_argument(
        "--input-format", choices=("csv", "parquet"), default=None,
        help="file format (default: from the extension)",
    )  # fmt: skip
    p.add_argument("--delimiter", default=None, help="CSV delimiter (default: detected)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    p.add_argument("--quiet", action="store_true", help="no progress output on stderr")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="airflow-privacy",
        description="Check whether a table may be published: worst-case background "
        "knowledge, classic criteria.",
    )
    parser.add_argument("--version", action="version", version=f"airflow-privacy {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    check = sub.add_parser(
        "check", help="check a release against one criterion (exit 0 safe, 1 unsafe)",
        description="Check a release against one criterion. Exit 0 = safe, 1 = unsafe, "
        "2 = bad input.",
    )  # fmt: skip
    _add_release_args(check)
    from airflow_privacy.core.criteria.registry import CRITERIA

    check.add_argument("--criterion", required=True, choices=list(CRITERIA), help="criterion")
    check.add_argument("--k", type=_number(int, "--k"), help="k (k-anonymity, ck-/negation-safety)")
    check.add_argument("--l", type=_number(float, "--l"), help="l (l-diversity variants)")
    check.add_argument(
        "--c", type=_number(float, "--c"),
        help="c: confidence threshold in (0,1] (ck-/negation-safety) or recursive-cl's c",
    )  # fmt: skip
    check.add_argument("--t", type=_number(float, "--t"), help="t (t-closeness)")
    check.add_argument(
        "--ordered", type=_bool, default=None,
        help="t-closeness: ordered (numeric) distance true/false (default: auto)",
    )  # fmt: skip

    disc = sub.add_parser(
        "disclosure", help="maximum disclosure for k = 0..K pieces of knowledge",
        description="Maximum disclosure against k basic implications and k negated atoms, "
        "for k = 0..K, with the witness of each.",
    )  # fmt: skip
    _add_release_args(disc)
    disc.add_argument("--k-max", type=_number(int, "--k-max"), required=True, metavar="K")

    demo = sub.add_parser(
        "demo", help="build releases of the bundled Adult data and check them",
        description="Generalize the bundled UCI Adult data into sample releases, write them "
        "as Parquet, and run the checks on them.",
    )  # fmt: skip
    demo.add_argument("--out", default="build/demo", help="folder for the sample releases")
    demo.add_argument("--quiet", action="store_true", help="no progress output on stderr")
    return parser


# ----------------------------------------------------------------------------- commands
def _load(args: argparse.Namespace, progress: _Progress) -> Any:
    from airflow_privacy.core.io import column_names, read_release
    from airflow_privacy.core.model import Bucketization, ReleaseSpec, check_columns

    spec = ReleaseSpec(sensitive=args.sensitive, group_columns=tuple(args.groups))
    path = Path(args.release)
    check_columns(column_names(path, args.input_format, args.delimiter), spec)
    progress(f"reading {path}")
    table = read_release(path, spec.required_columns(), args.input_format, args.delimiter)
    b = Bucketization.from_arrow(table, spec)
    progress(f"{b.n_records:,} records in {b.n_groups:,} groups, {len(b.values)} sensitive values")
    return b


def _cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.core.criteria.registry import CRITERIA, validate

    progress = _Progress(args.quiet)
    raw = {"k": args.k, "l": args.l, "c": args.c, "t": args.t, "ordered": args.ordered}
    params = validate(args.criterion, raw)  # before reading a possibly large file
    b = _load(args, progress)
    progress(f"checking {args.criterion}")
    result = CRITERIA[args.criterion].run(b, params)
    progress("done")
    if args.format == "json":
        payload = result.to_dict()
        payload["release"] = {"path": str(args.release), "records": b.n_records,
                              "groups": b.n_groups}  # fmt: skip
        _write_json(payload, out)
    else:
        out.write(_render_result(result, args.release, b.n_records, b.n_groups))
    return EXIT_SAFE if result.safe else EXIT_UNSAFE


def _json_safe(value: Any) -> Any:
    """Strict JSON: infinite values (e.g. recursive (c,l)'s ratio for a group with fewer than
    l values) become the strings "inf" / "-inf"; NaN becomes null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def _write_json(payload: dict[str, Any], out: TextIO) -> None:
    json.dump(_json_safe(payload), out, indent=2, allow_nan=False)
    out.write("\n")


def _render_result(result: Any, release: str, records: int, groups: int) -> str:
    params = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                       for k, v in result.parameters.items())  # fmt: skip
    verdict = "SAFE" if result.safe else "UNSAFE"
    lines = [
        f"{result.criterion} ({params}): {verdict}",
        f"  release: {release} ({records:,} records in {groups:,} groups)",
        f"  value:   {result.value:.6g}",
        f"  why:     {result.reason}",
    ]
    return "\n".join(lines) + "\n"


def _cmd_disclosure(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.core.criteria.worst_case import _witness_dict, disclosure_curve

    if args.k_max < 0:
        raise InputError(f"--k-max must be >= 0, got {args.k_max}")
    progress = _Progress(args.quiet)
    b = _load(args, progress)
    progress(f"computing the disclosure curve for k = 0..{args.k_max}")
    curve = disclosure_curve(b, args.k_max)
    progress("done")
    if args.format == "json":
        payload = {
            "release": {"path": str(args.release), "records": b.n_records, "groups": b.n_groups},
            "curve": [
                {
                    "k": p.k,
                    "implications": p.implications.max_disclosure,
                    "negations": p.negations.max_disclosure,
                    "implications_witness": _witness_dict(b, p.implications),
                    "negations_witness": _witness_dict(b, p.negations),
                }
                for p in curve
            ],
        }
        _write_json(payload, out)
        return EXIT_SAFE
    out.write(f"maximum disclosure of {args.release} ({b.n_records:,} records, "
              f"{b.n_groups:,} groups)\n")  # fmt: skip
    out.write("   k  implications  negations\n")
    for p in curve:
        out.write(f"{p.k:4d}  {p.implications.max_disclosure:12.4f}  "
                  f"{p.negations.max_disclosure:9.4f}\n")  # fmt: skip
    from airflow_privacy.core.criteria.worst_case import describe_witness

    last = curve[-1]
    out.write(f"at k = {last.k}: {describe_witness(b, last.implications)}\n")
    return EXIT_SAFE


def _cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.demo import run_demo

    return run_demo(Path(args.out), out, _Progress(args.quiet))


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point; returns the exit code (also used by the tests)."""
    stream = out or sys.stdout
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_INPUT
    commands = {"check": _cmd_check, "disclosure": _cmd_disclosure, "demo": _cmd_demo}
    try:
        return commands[args.command](args, stream)
    except InputError as exc:
        sys.stderr.write(f"airflow-privacy: error: {exc}\n")
        return EXIT_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("airflow-privacy: interrupted\n")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
