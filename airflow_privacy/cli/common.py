"""Pieces every ``airflow-privacy`` subcommand shares: parsing, progress, loading, output."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from airflow_privacy.serialization import json_safe

if TYPE_CHECKING:
    from airflow_privacy.core.model import Bucketization

EXIT_SAFE, EXIT_UNSAFE, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_INPUT)


class Progress:
    """Timestamped progress lines on stderr (stdout stays clean for JSON)."""

    def __init__(self, quiet: bool, stream: TextIO | None = None) -> None:
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()

    def __call__(self, message: str) -> None:
        if not self.quiet:
            elapsed = time.perf_counter() - self.start
            self.stream.write(f"[{elapsed:6.2f}s] {message}\n")
            self.stream.flush()


def number(kind: type[int] | type[float], name: str) -> Any:
    """argparse ``type=`` that names the option in its error."""

    def parse(text: str) -> int | float:
        try:
            return kind(text)
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{name} must be {what}, got {text!r}") from None

    return parse


def boolean(text: str) -> bool:
    low = text.lower()
    if low in ("true", "yes", "1"):
        return True
    if low in ("false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def add_release_args(p: argparse.ArgumentParser) -> None:
    """RELEASE, --sensitive, --group..., --input-format, --delimiter, --format, --quiet."""
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
    add_output_args(p)


def add_output_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    p.add_argument("--quiet", action="store_true", help="no progress output on stderr")


def load_bucketization(args: argparse.Namespace, progress: Progress) -> Bucketization:
    """Read the release named by :func:`add_release_args` and count it."""
    from airflow_privacy.core.io import read_bucketization
    from airflow_privacy.core.model import ReleaseSpec

    spec = ReleaseSpec(sensitive=args.sensitive, group_columns=tuple(args.groups))
    path = Path(args.release)
    b = read_bucketization(path, spec, args.input_format, args.delimiter, progress)
    progress(f"{b.n_records:,} records in {b.n_groups:,} groups, {len(b.values)} sensitive values")
    return b


def release_info(args: argparse.Namespace, b: Bucketization) -> dict[str, Any]:
    return {"path": str(args.release), "records": b.n_records, "groups": b.n_groups}


def write_json(payload: dict[str, Any], out: TextIO) -> None:
    json.dump(json_safe(payload), out, indent=2, allow_nan=False)
    out.write("\n")
