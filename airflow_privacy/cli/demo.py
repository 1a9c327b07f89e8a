"""``airflow-privacy demo``: sample releases of the bundled Adult data, checked."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from airflow_privacy.cli.common import Progress

NAME = "demo"


def register(sub: Any) -> None:
    p = sub.add_parser(
        NAME, help="build releases of the bundled Adult data and check them",
        description="Generalize the bundled UCI Adult data into sample releases, write them "
        "as Parquet, and run the checks on them.",
    )  # fmt: skip
    p.add_argument("--out", default="build/demo", help="folder for the sample releases")
    p.add_argument("--quiet", action="store_true", help="no progress output on stderr")


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.demo import run_demo

    return run_demo(Path(args.out), out, Progress(args.quiet))
