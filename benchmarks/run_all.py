"""Run every benchmark in turn (``make bench``); results land in benchmarks/results/."""

from __future__ import annotations

import runpy
import sys
import time

BENCHMARKS = (
    "benchmarks.bench_adult_curve",
    "benchmarks.bench_classic_vs_pycanon",
    "benchmarks.bench_distribution_vs_pycanon",
    "benchmarks.bench_risk",
    "benchmarks.bench_worst_case",
    "benchmarks.bench_cli_process",
    "benchmarks.bench_lattice",
    "benchmarks.bench_mondrian",
    "benchmarks.bench_composition_adult",
    "benchmarks.bench_composition_ledger",
    "benchmarks.bench_skyline",
    "benchmarks.bench_skyline_adult",
    "benchmarks.bench_maxent",
    "benchmarks.bench_maxent_accuracy",
    "benchmarks.bench_algorithm_aware",
    "benchmarks.bench_backends",
    "benchmarks.bench_dp_release",
)


def main() -> None:
    start = time.perf_counter()
    spent = []
    for name in BENCHMARKS:
        print(f"\n=== {name}", flush=True)
        saved = sys.argv
        sys.argv = [name]
        t0 = time.perf_counter()
        try:
            runpy.run_module(name, run_name="__main__")
        except SystemExit as exc:  # ``raise SystemExit(main())``: go on unless it failed
            if exc.code not in (None, 0):
                raise
        finally:
            sys.argv = saved
        spent.append((name, time.perf_counter() - t0))
    print("\n=== time per benchmark", flush=True)
    for name, seconds in spent:
        print(f"{name:<40} {seconds:8.1f} s")
    print(f"{'total':<40} {time.perf_counter() - start:8.1f} s", flush=True)


if __name__ == "__main__":
    main()
