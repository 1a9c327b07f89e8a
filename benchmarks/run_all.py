"""Run every benchmark in turn (``make bench``); results land in benchmarks/results/."""

from __future__ import annotations

import runpy
import sys

BENCHMARKS = (
    "benchmarks.bench_adult_curve",
    "benchmarks.bench_classic_vs_pycanon",
    "benchmarks.bench_worst_case",
    "benchmarks.bench_lattice",
    "benchmarks.bench_mondrian",
    "benchmarks.bench_composition_adult",
    "benchmarks.bench_composition_ledger",
    "benchmarks.bench_skyline",
    "benchmarks.bench_skyline_adult",
    "benchmarks.bench_maxent",
    "benchmarks.bench_maxent_accuracy",
    "benchmarks.bench_algorithm_aware",
)


def main() -> None:
    for name in BENCHMARKS:
        print(f"\n=== {name}", flush=True)
        saved = sys.argv
        sys.argv = [name]
        try:
            runpy.run_module(name, run_name="__main__")
        finally:
            sys.argv = saved


if __name__ == "__main__":
    main()
