"""Case study and benchmark: the privacy skyline of an l-diverse Adult release.

Chen, LeFevre, Ramakrishnan, "Privacy Skyline: Privacy with Multidimensional Adversarial
Knowledge" (VLDB 2007), the talk's slide "Case Study: l-Diverse Dataset":
Adult, Occupation sensitive, a (c = 3, l = 6)-diverse release candidate, its knowledge
skyline at confidence 0.95. Here:

* the release: the bundled Adult (30,162 records) anonymized by the project's Mondrian
  (``airflow_privacy.core.anonymize``, strict multidimensional partitioning over the seven
  QIs with the ARX hierarchies) under recursive (3, 6)-diversity, the slides' criterion;
* its skyline at c = 0.95 within l, k, m <= 10 (SkylineFind, ``find_skyline``), timed
  against the brute force that evaluates every point of the 11 x 11 x 11 cube (one scan
  for all 1,331 points, ``breach_cube``) and checked equal to it.

Usage: ``python -m benchmarks.bench_skyline_adult [--c 0.95] [--bound 10] [--repeat 5]``.
Writes ``benchmarks/results/skyline_adult.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path
from typing import Any

from airflow_privacy.core.anonymize import AnonymizationResult, anonymize
from airflow_privacy.core.criteria.classic import recursive_cl_diversity
from airflow_privacy.core.criteria.skyline import SkylineResult, breach_cube, find_skyline
from airflow_privacy.core.datasets import ADULT_QIS, adult_hierarchies, load_adult
from airflow_privacy.core.model import Bucketization
from benchmarks.machine import hardware

RESULTS = Path(__file__).resolve().parent / "results"
DIVERSITY = ("recursive-cl-diversity", {"c": 3, "l": 6})
# the slides' skyline of their (3, 6)-diverse Adult candidate at c = 0.95 (45,222 records)
SLIDES = ((0, 4, 0), (1, 3, 1), (2, 2, 2), (3, 1, 2), (2, 1, 3), (4, 0, 3), (3, 0, 4))


def diverse_adult() -> AnonymizationResult:
    """Adult, Occupation sensitive, Mondrian under recursive (3, 6)-diversity."""
    h = adult_hierarchies()
    return anonymize(
        load_adult(), ADULT_QIS, "occupation", "mondrian", [DIVERSITY],
        hierarchies={q: h[q] for q in ADULT_QIS},
    )  # fmt: skip


def brute_force(b: Bucketization, c: float, bound: int) -> set[tuple[int, int, int]]:
    """Maximal safe points by evaluating the whole cube (the baseline): the same scan and
    float breaches as the explorer, at every point."""
    values = breach_cube(b, bound, bound, bound)
    cube = [(l, k, m) for l, k, m in itertools.product(range(bound + 1), repeat=3)]  # noqa: E741
    safe = {p for p in cube if values[p] < c}
    return {
        p
        for p in safe
        if not any(q != p and all(a >= x for a, x in zip(q, p, strict=True)) for q in safe)
    }


def table(result: SkylineResult) -> list[dict[str, Any]]:
    return [
        {"l": r.l, "k": r.k, "m": r.m, "breach": r.breach,
         "exact": f"{r.numerator}/{r.denominator}"}
        for r in result.breaches
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--c", type=float, default=0.95)
    parser.add_argument("--bound", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    t0 = time.perf_counter()
    res = diverse_adult()
    t_anon = time.perf_counter() - t0
    b = res.bucketization
    assert recursive_cl_diversity(b, 3, 6).safe
    sizes = sorted(int(x) for x in b.sizes)
    print(f"Adult, Mondrian under recursive (3, 6)-diversity: {b.n_records:,} records in "
          f"{b.n_groups} groups (sizes {sizes[0]}..{sizes[-1]}, median "
          f"{sizes[len(sizes) // 2]}), anonymized in {t_anon:.2f} s")  # fmt: skip

    bound = args.bound
    explore, cube = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        found = find_skyline(b, args.c, bound, bound, bound)
        explore.append(time.perf_counter() - t0)
    for _ in range(max(1, args.repeat // 2)):
        t0 = time.perf_counter()
        expected = brute_force(b, args.c, bound)
        cube.append(time.perf_counter() - t0)
    assert set(found.points) == expected, (found.points, expected)
    t_e, t_c = min(explore), min(cube)
    print(f"skyline at c = {args.c:g} within l, k, m <= {bound}:")
    print("| l | k | m | max breach |")
    print("| --- | --- | --- | --- |")
    for r in found.breaches:
        print(f"| {r.l} | {r.k} | {r.m} | {r.breach:.4f} |")
    print(f"explorer: {t_e * 1000:.1f} ms, {found.evaluations} breach evaluations; "
          f"brute force over the {(bound + 1) ** 3:,}-point cube: {t_c * 1000:.1f} ms "
          f"({t_c / t_e:.1f}x)")  # fmt: skip
    print(f"slides' skyline (45,222 records): {SLIDES}")
    RESULTS.mkdir(exist_ok=True)
    out = {
        "hardware": hardware(),
        "release": {"records": b.n_records, "groups": b.n_groups, "min_size": sizes[0],
                    "max_size": sizes[-1], "anonymize_seconds": t_anon},
        "c": args.c, "bound": bound, "skyline": table(found),
        "evaluations": found.evaluations, "explorer_seconds": t_e,
        "brute_force_cube_seconds": t_c, "ratio": t_c / t_e,
        "slides_skyline": [list(p) for p in SLIDES],
    }  # fmt: skip
    (RESULTS / "skyline_adult.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
