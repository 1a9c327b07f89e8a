"""Benchmark (a): the paper's DP run straightforwardly vs the engine, side by side.

* In-process, k = 1..13, on a bucketization of 10^5 groups (40-80 records, 14 values): the
  straightforward DP (benchmarks/paper_dp.py) vs ``max_disclosure``; both must agree.
* Whole process: ``airflow-privacy check --criterion ck-safety --k 6`` on the same release
  written as Parquet (start-up and reading included) vs the DP's computation alone.

Usage: ``python -m benchmarks.bench_worst_case [--groups N] [--ks 1,2,...] [--skip-dp-above K]``.
Writes ``benchmarks/results/worst_case.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from airflow_privacy.core.criteria.worst_case import max_disclosure
from airflow_privacy.core.model import Bucketization
from benchmarks.machine import hardware
from benchmarks.paper_dp import max_disclosure_dp
from benchmarks.synthetic import synthetic_counts, write_release_parquet

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=100_000)
    parser.add_argument("--ks", default=",".join(str(k) for k in range(1, 14)))
    parser.add_argument("--process-k", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    ks = [int(x) for x in args.ks.split(",")]

    counts = synthetic_counts(args.groups)
    b = Bucketization.from_group_counts(counts)
    rows = counts.tolist()
    print(f"{args.groups:,} groups, {int(counts.sum()):,} records, 14 values", flush=True)
    print(f"{'k':>3} {'paper DP s':>11} {'engine s':>9} {'ratio':>7}  disclosure", flush=True)
    table = []
    for k in ks:
        t0 = time.perf_counter()
        dp = max_disclosure_dp(rows, k)
        t_dp = time.perf_counter() - t0
        t_engine = min(_timed(partial(max_disclosure, b, k)) for _ in range(args.repeat))
        engine = max_disclosure(b, k).max_disclosure
        assert abs(dp - engine) < 1e-9, (k, dp, engine)
        table.append({"k": k, "dp_seconds": t_dp, "engine_seconds": t_engine,
                      "ratio": t_dp / t_engine, "max_disclosure": engine})  # fmt: skip
        print(f"{k:3d} {t_dp:11.2f} {t_engine:9.4f} {t_dp / t_engine:7.0f}x  {engine:.6f}",
              flush=True)  # fmt: skip

    # whole process vs the DP's computation alone
    path = RESULTS / "synthetic_release.parquet"
    n_rows = write_release_parquet(counts, path)
    exe = Path(sys.executable).with_name("airflow-privacy")
    argv = [str(exe), "check", str(path), "--sensitive", "diagnosis", "--group", "bucket",
            "--criterion", "ck-safety", "--c", "0.9", "--k", str(args.process_k), "--quiet",
            "--format", "json"]  # fmt: skip
    walls = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
        assert proc.returncode in (0, 1), proc.stderr
    dp_k = next((r["dp_seconds"] for r in table if r["k"] == args.process_k), None)
    if dp_k is None:
        t0 = time.perf_counter()
        max_disclosure_dp(rows, args.process_k)
        dp_k = time.perf_counter() - t0
    process = {"k": args.process_k, "rows": n_rows, "process_seconds": min(walls),
               "dp_compute_seconds": dp_k, "fraction_of_dp": min(walls) / dp_k}  # fmt: skip
    print(
        f"whole `check --k {args.process_k}` process on {n_rows:,} Parquet rows: "
        f"{min(walls):.2f} s = {min(walls) / dp_k:.3f} of the DP's {dp_k:.1f} s computation"
    )
    RESULTS.mkdir(exist_ok=True)
    out = {"hardware": hardware(), "groups": args.groups, "curve": table, "process": process}
    (RESULTS / "worst_case.json").write_text(json.dumps(out, indent=2))
    path.unlink()


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
