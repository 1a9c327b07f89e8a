"""Benchmark: the skyline check vs the (c,k)-safety engine and the paper's DP, same releases.

Synthetic releases of 10^4, 10^5 and 10^6 records (benchmarks/synthetic.py: groups of
40-80 records, 14 values, Dirichlet(3) per group). For each knowledge budget K:

* ``ck engine``: ``worst_case.max_disclosure(b, K)`` (K basic implications, the optimized
  engine: profile deduplication, candidate-pruned knapsack);
* ``paper DP``: Martin et al.'s Minimize1/Minimize2 run straightforwardly
  (benchmarks/paper_dp.py), the baseline of the skyline paper's "improvement ratio" slide;
* ``skyline (0,0,K)``: K implications ``v = s -> t = s`` (the skyline's m dimension: simple
  implications with the target as consequent, a subset of Martin's knowledge);
* ``skyline (K,K,K)``: K exclusions, K known people and K implications at once;
* ``skyline 7 pts``: the slides' seven-point skyline checked in one scan.

Checks run in-process on a ready ``Bucketization`` (reading is the same for both); times
are the best of ``--repeat`` runs. The two engines must agree where the knowledge coincides:
``breach(K, 0, 0)`` is the negation disclosure and ``breach(0, 0, K)`` is at most the
implication disclosure (asserted).

Usage: ``python -m benchmarks.bench_skyline [--records 10000,100000,1000000] [--ks 1,2,4,6]``.
Writes ``benchmarks/results/skyline.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from airflow_privacy.core.criteria.skyline import check_skyline, max_breach
from airflow_privacy.core.criteria.worst_case import max_disclosure
from airflow_privacy.core.model import Bucketization
from benchmarks.machine import hardware
from benchmarks.paper_dp import max_disclosure_dp
from benchmarks.synthetic import synthetic_counts

RESULTS = Path(__file__).resolve().parent / "results"
SLIDES_SKYLINE = [(0, 4, 0), (1, 3, 1), (2, 2, 2), (3, 1, 2), (2, 1, 3), (4, 0, 3), (3, 0, 4)]
MEAN_GROUP = 60  # records per group in synthetic_counts (40-80)


def best_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", default="10000,100000,1000000")
    parser.add_argument("--ks", default="1,2,4,6")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dp-max-records", type=int, default=1_000_000)
    args = parser.parse_args()
    sizes = [int(x) for x in args.records.split(",")]
    ks = [int(x) for x in args.ks.split(",")]
    rows_out = []
    header = (
        f"{'records':>9} {'groups':>7} {'K':>2} {'ck engine ms':>12} {'paper DP ms':>11} "
        f"{'sky(0,0,K) ms':>13} {'sky(K,K,K) ms':>13} {'engine/sky':>10} {'DP/sky':>7}"
    )
    print(header, flush=True)
    for records in sizes:
        counts = synthetic_counts(max(1, records // MEAN_GROUP))
        b = Bucketization.from_group_counts(counts)
        table = counts.tolist()
        for k in ks:
            t_ck = best_of(partial(max_disclosure, b, k), args.repeat)
            t_m = best_of(partial(max_breach, b, 0, 0, k), args.repeat)
            t_3 = best_of(partial(max_breach, b, k, k, k), args.repeat)
            ck = max_disclosure(b, k).max_disclosure
            neg = max_disclosure(b, k, "negations").max_disclosure
            assert abs(max_breach(b, k, 0, 0).breach - neg) < 1e-9
            assert max_breach(b, 0, 0, k).breach <= ck + 1e-9
            t_dp = None
            if b.n_records <= args.dp_max_records:
                t0 = time.perf_counter()
                dp = max_disclosure_dp(table, k)
                t_dp = time.perf_counter() - t0
                assert abs(dp - ck) < 1e-9
            row = {
                "records": b.n_records, "groups": b.n_groups, "k": k,
                "ck_engine_seconds": t_ck, "paper_dp_seconds": t_dp,
                "skyline_00k_seconds": t_m, "skyline_kkk_seconds": t_3,
                "engine_over_skyline_00k": t_ck / t_m,
                "dp_over_skyline_00k": (t_dp / t_m) if t_dp is not None else None,
                "ck_disclosure": ck, "breach_00k": max_breach(b, 0, 0, k).breach,
                "breach_kkk": max_breach(b, k, k, k).breach,
            }  # fmt: skip
            rows_out.append(row)
            dp_ms = f"{t_dp * 1000:11.1f}" if t_dp is not None else f"{'-':>11}"
            dp_ratio = f"{t_dp / t_m:6.0f}x" if t_dp is not None else f"{'-':>7}"
            print(
                f"{b.n_records:9,d} {b.n_groups:7,d} {k:2d} {t_ck * 1000:12.2f} {dp_ms} "
                f"{t_m * 1000:13.2f} {t_3 * 1000:13.2f} {t_ck / t_m:9.2f}x {dp_ratio}",
                flush=True,
            )
        points = [(*p, 0.95) for p in SLIDES_SKYLINE]
        t_sky = best_of(partial(check_skyline, b, points), args.repeat)
        t_ck4 = best_of(partial(max_disclosure, b, 4), args.repeat)
        rows_out.append({"records": b.n_records, "groups": b.n_groups,
                         "slides_skyline_7_points_seconds": t_sky,
                         "ck_engine_k4_seconds": t_ck4})  # fmt: skip
        print(
            f"{b.n_records:9,d} {b.n_groups:7,d}  the slides' 7-point skyline in one scan: "
            f"{t_sky * 1000:.2f} ms (ck engine, k = 4: {t_ck4 * 1000:.2f} ms)",
            flush=True,
        )
    RESULTS.mkdir(exist_ok=True)
    out = {"hardware": hardware(), "repeat": args.repeat, "rows": rows_out}
    (RESULTS / "skyline.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
