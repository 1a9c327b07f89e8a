"""Benchmark (c): Martin et al.'s Figure 5 setup on the bundled Adult data.

Age generalized to 20-year intervals (ARX hierarchy level 3), every other QI suppressed,
Occupation sensitive (14 values): maximum disclosure for k = 0..13 basic implications and
k negated atoms, the whole curve in one call, timed against the paper's DP run once per k.

Usage: ``python -m benchmarks.bench_adult_curve``. Writes ``benchmarks/results/adult_curve.json``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from airflow_privacy.core.criteria.worst_case import disclosure_curve
from airflow_privacy.core.datasets import adult_release
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from benchmarks.machine import hardware
from benchmarks.paper_dp import max_disclosure_dp

K_MAX = 13


def main() -> None:
    release = adult_release({"age": 3})
    b = Bucketization.from_arrow(release, ReleaseSpec("occupation", ("age",)))
    t0 = time.perf_counter()
    curve = disclosure_curve(b, K_MAX)
    t_engine = time.perf_counter() - t0
    rows = b.counts.tolist()
    t0 = time.perf_counter()
    dp = [max_disclosure_dp(rows, k) for k in range(K_MAX + 1)]
    t_dp = time.perf_counter() - t0
    print(f"Adult, age in 20-year intervals, other QIs suppressed: {b.n_groups} groups, "
          f"{b.n_records:,} records, {len(b.values)} occupations")  # fmt: skip
    print(f"{'k':>3} {'implications':>13} {'negations':>10}  worst group")
    points = []
    for p, d in zip(curve, dp, strict=True):
        assert abs(p.implications.max_disclosure - d) < 1e-9
        group = b.group_label(p.implications.witness.target.group)
        print(f"{p.k:3d} {p.implications.max_disclosure:13.4f} "
              f"{p.negations.max_disclosure:10.4f}  {group}")  # fmt: skip
        points.append({"k": p.k, "implications": p.implications.max_disclosure,
                       "negations": p.negations.max_disclosure, "group": group})  # fmt: skip
    print(f"whole curve: engine {t_engine * 1000:.1f} ms in one call; paper DP "
          f"{t_dp * 1000:.1f} ms for the 14 values of k ({t_dp / t_engine:.1f}x)")  # fmt: skip
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / "adult_curve.json").write_text(json.dumps({
        "hardware": hardware(), "groups": b.n_groups, "records": b.n_records,
        "curve": points, "engine_seconds": t_engine, "dp_seconds": t_dp}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
