"""Run anonypy 0.2.1's Mondrian on a CSV and print its numbers as JSON.

This script is run BY the anonypy virtualenv's python (``.venv-anonypy``, created by
``benchmarks/anonypy_env.sh``), never imported by the project, and imports nothing from
``airflow_privacy``. Numeric QIs are read as integers, every other QI as a pandas
``category`` (anonypy splits categorical columns by halving their set of values).

Usage::

    .venv-anonypy/bin/python benchmarks/bench_mondrian_anonypy.py --csv adult.csv --sep ';' \\
        --qi age,sex,... --numeric age --sa occupation --k 5 [--repeat 3]

Output (stdout, one JSON object): ``partitions``, ``min_size``, ``average_class_size``,
``partition_seconds`` (``Mondrian.partition`` per repetition), ``anonymize_seconds``
(``anonypy.anonymize`` building the published rows from the partitions), versions.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import platform
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--sep", default=",")
    ap.add_argument("--qi", required=True)
    ap.add_argument("--numeric", default="")
    ap.add_argument("--sa", required=True)
    ap.add_argument("--k", type=int, required=True)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()

    import pandas as pd
    from anonypy import anonypy, mondrian  # type: ignore[import-not-found]

    qis = args.qi.split(",")
    numeric = set(filter(None, args.numeric.split(",")))
    df = pd.read_csv(args.csv, sep=args.sep, dtype=str)
    for q in qis:
        df[q] = df[q].astype(int) if q in numeric else df[q].astype("category")
    part_times, anon_times = [], []
    partitions: list[object] = []
    for _ in range(args.repeat):
        m = mondrian.Mondrian(df, qis, args.sa)
        t0 = time.perf_counter()
        partitions = m.partition(args.k)
        part_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        anonypy.anonymize(df, partitions, qis, args.sa)
        anon_times.append(time.perf_counter() - t0)
    sizes = [len(p) for p in partitions]  # type: ignore[arg-type]
    print(json.dumps({
        "anonypy": md.version("anonypy"),
        "pandas": md.version("pandas"),
        "numpy": md.version("numpy"),
        "python": platform.python_version(),
        "rows": len(df),
        "k": args.k,
        "partitions": len(partitions),
        "min_size": min(sizes),
        "average_class_size": len(df) / len(partitions),
        "partition_seconds": part_times,
        "anonymize_seconds": anon_times,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
