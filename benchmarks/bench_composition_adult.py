"""Ganta, Kasiviswanathan, Smith (KDD 2008), section 3, on the bundled Adult data.

The paper's experiment: two random subsets of Adult (30,162 records) overlapping in
P = 5,000 records, each anonymized independently by Mondrian with k = k1 = k2, 7 QIs
(age, workclass, education, marital status, race, sex, native country), Occupation
sensitive (14 values); the intersection attack on the overlap. Reported: PVP_C for
C = 100% (Figure 1(a): "around 12% of the population is vulnerable to a perfect breach for
k1 = k2 = 5"), 50%, 33%, 25% (Figure 2(a): "more than 60%" at 25%), the average partition
size and effective anonymities (Figure 3(a)), the average drop in effective anonymity
(Figure 4(a)), and, as in section 3.6 (done there on IPUMS), n = 2, 3, 4 releases.

Mondrian is the project's (airflow_privacy.core.anonymize, LeFevre et al. 2006: numeric
age split at medians and published as ``lo-hi``, the six categorical QIs split along their
ARX hierarchies and published as hierarchy labels). The paper does not give the subset
sizes: we use 5,000 + 10,000 own records per subset for n = 2 (15,000 each) and
5,000 + 6,000 for the n = 2, 3, 4 comparison (4 x 6,000 + 5,000 <= 30,162). The overlap is
known (the paper's P); each seed draws new subsets.

Performance: the engine (vectorized locating + Algorithm 1 + posterior) against the
straightforward implementation of Algorithm 1 (a Python loop over individuals, releases,
groups and QIs with pre-parsed labels, labelled ``baseline`` below), on the same inputs,
results asserted equal.

Usage: ``python -m benchmarks.bench_composition_adult [--seeds 3] [--quick]``. Writes
``benchmarks/results/composition_adult.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from airflow_privacy.core.anonymize import anonymize
from airflow_privacy.core.composition import (
    CompositionResult,
    Population,
    PublishedRelease,
    composition_audit,
    hash_identifiers,
)
from airflow_privacy.core.composition.descriptors import Label, hierarchy_covers, parse_label
from airflow_privacy.core.datasets import ADULT_QIS, adult_hierarchies, load_adult
from airflow_privacy.core.hierarchy import Hierarchy
from benchmarks.machine import hardware

SENSITIVE = "occupation"
OVERLAP = 5000
KS = (5, 10, 15, 20, 25, 50)
CONFIDENCES = (1.0, 0.5, 1 / 3, 0.25)
PAPER = {"pvp100_k5": 12.0, "pvp25_k5": 60.0}
KEY = b"benchmark-only-key-0123456789abcdefghijklmnop"  # >= 32 bytes, >= 10 distinct


def subsets(
    n_rows: int, n: int, own: int, rng: np.random.Generator
) -> tuple[np.ndarray, list[np.ndarray]]:
    perm = rng.permutation(n_rows)
    overlap = perm[:OVERLAP]
    parts = []
    for j in range(n):
        mine = perm[OVERLAP + j * own : OVERLAP + (j + 1) * own]
        parts.append(rng.permutation(np.concatenate([overlap, mine])))
    return overlap, parts


def mondrian(
    table: pa.Table, rows: np.ndarray, k: int, hier: Mapping[str, Hierarchy], name: str
) -> tuple[PublishedRelease, float]:
    t0 = time.perf_counter()
    res = anonymize(
        table.take(pa.array(rows)),
        list(ADULT_QIS),
        SENSITIVE,
        method="mondrian",
        criteria=[("k-anonymity", {"k": k})],
        hierarchies=hier,
    )
    elapsed = time.perf_counter() - t0
    return PublishedRelease.from_arrow(res.release, ADULT_QIS, SENSITIVE, name=name), elapsed


def audit(
    table: pa.Table,
    overlap: np.ndarray,
    parts: Sequence[np.ndarray],
    releases: Sequence[PublishedRelease],
    hier: Mapping[str, Hierarchy],
) -> tuple[CompositionResult, Population, float]:
    ids = [str(i) for i in overlap.tolist()]
    pop = Population.from_arrow(table.take(pa.array(overlap)), ADULT_QIS)
    pop = Population(pop.columns, pop.n, tuple(hash_identifiers(ids, KEY)))
    members = [frozenset(hash_identifiers([str(i) for i in p.tolist()], KEY)) for p in parts[1:]]
    t0 = time.perf_counter()
    res = composition_audit(
        pop,
        releases[0],
        releases[1:],
        overlap="known",
        prior_members=members,
        hierarchies=hier,
        confidences=CONFIDENCES,
    )
    return res, pop, time.perf_counter() - t0


def _predicate(lab: Label) -> Callable[[str, float | None], bool]:
    """A plain-Python test of one label (same meaning as the engine's, no numpy)."""
    text = lab.text.strip()
    if lab.kind == "any":
        return lambda v, x: True
    if lab.kind == "hierarchy":
        return lambda v, x: v == text or v in lab.covers
    if lab.kind == "mask":
        return lambda v, x: v == text or (len(v) == lab.length and v.startswith(lab.prefix))
    if lab.kind == "interval":
        lo, hi, lc, hc = lab.low, lab.high, lab.low_closed, lab.high_closed

        def interval(v: str, x: float | None) -> bool:
            if v == text:
                return True
            if x is None:
                return False
            return (x >= lo if lc else x > lo) and (x <= hi if hc else x < hi)

        return interval
    exact = _num(text)
    return lambda v, x: v == text or (exact is not None and x == exact)


def _num(v: str) -> float | None:
    try:
        return float(v)
    except ValueError:
        return None


def baseline(
    pop: Population, releases: Sequence[PublishedRelease], hier: Mapping[str, Hierarchy]
) -> list[frozenset[str]]:
    """Algorithm 1 as written: for each individual, each release, each group, each QI
    (labels parsed once; plain Python predicates that stop at the first QI that fails)."""
    covers = {q: hierarchy_covers(h) for q, h in hier.items()}
    parsed = []
    for r in releases:
        groups = []
        for g, key in enumerate(r.keys):
            tests = [
                (ADULT_QIS.index(q), _predicate(parse_label(lbl, q, covers.get(q))))
                for q, lbl in zip(r.qis, key, strict=True)
            ]
            groups.append((tests, frozenset(r.multiset(g))))
        parsed.append(groups)
    out = []
    for i in range(pop.n):
        qi = [pop.columns[q][i] for q in ADULT_QIS]
        nums = [_num(v) for v in qi]
        result: frozenset[str] | None = None
        for groups in parsed:
            s: set[str] = set()
            for tests, values in groups:
                if all(test(qi[c], nums[c]) for c, test in tests):
                    s |= values
            result = frozenset(s) if result is None else result & s
        out.append(result or frozenset())
    return out


def summarize(res: CompositionResult) -> dict[str, Any]:
    av = res.averages
    return {
        "overlap": res.overlap_size,
        "pvp": {f"{c:.4f}": res.pvp_c(c) for c in CONFIDENCES},
        "posterior_pvp": {f"{c:.4f}": res.pvp_c(c, "posterior") for c in CONFIDENCES},
        "alone_pvp": {f"{c:.4f}": res.pvp_c(c, alone=True) for c in CONFIDENCES},
        "alone_posterior_pvp": {
            f"{c:.4f}": res.pvp_c(c, "posterior", alone=True) for c in CONFIDENCES
        },
        "vp_percent": 100 * res.vp / max(res.overlap_size, 1),
        "avg_partition_size": [r.avg_group_size for r in res.releases],
        "avg_prior_ea": [r.avg_ea for r in res.releases],
        "avg_min_prior_ea": av["min_prior_ea"],
        "avg_posterior_ea": av["posterior_ea"],
        "avg_anon_drop": av["anon_drop"],
        "relative_drop": av["relative_drop"],
        "ambiguous": [r.ambiguous for r in res.releases],
        "unlocatable": [r.present_unlocatable for r in res.releases],
    }


def mean_of(rows: list[dict[str, Any]], path: Sequence[str]) -> float:
    vals = []
    for r in rows:
        x: Any = r
        for p in path:
            x = x[p]
        vals.append(float(x))
    return statistics.fmean(vals)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3, help="independent draws per setting")
    ap.add_argument("--quick", action="store_true", help="k = 5 only, one seed")
    args = ap.parse_args()
    seeds = 1 if args.quick else args.seeds
    ks = (5,) if args.quick else KS
    table = load_adult()
    h = adult_hierarchies()
    hier = {q: h[q] for q in ADULT_QIS if q != "age"}  # age is numeric: Mondrian intervals
    print(
        f"Adult: {table.num_rows:,} records, QIs {', '.join(ADULT_QIS)}; sensitive "
        f"{SENSITIVE}; overlap {OVERLAP:,}; {seeds} seed(s) per setting"
    )

    # ---- n = 2, 15,000 records per subset, k sweep (Figures 1-4)
    two: dict[int, list[dict[str, Any]]] = {}
    timing: dict[str, list[float]] = {"mondrian": [], "audit": []}
    perf: dict[str, Any] = {}
    for k in ks:
        two[k] = []
        for seed in range(seeds):
            rng = np.random.default_rng(1000 + seed)
            overlap, parts = subsets(table.num_rows, 2, 10_000, rng)
            rels = []
            for j, p in enumerate(parts):
                rel, t_m = mondrian(table, p, k, hier, f"subset {j + 1}")
                rels.append(rel)
                timing["mondrian"].append(t_m)
            res, pop, t_a = audit(table, overlap, parts, rels, hier)
            timing["audit"].append(t_a)
            two[k].append(summarize(res))
            if k == 5 and seed == 0:
                t0 = time.perf_counter()
                base = baseline(pop, rels, hier)
                t_b = time.perf_counter() - t0
                ours = [
                    frozenset(v for v, ok in zip(res.values, row, strict=True) if ok)
                    for row in res.intersections
                ]
                assert base == ours, "baseline and engine disagree"
                perf = {
                    "individuals": pop.n,
                    "groups": [r.n_groups for r in rels],
                    "engine_seconds": t_a,
                    "baseline_seconds": t_b,
                    "speedup": t_b / t_a,
                }
    print("\nn = 2 releases (15,000 records each), Mondrian k1 = k2 = k, known overlap")
    print(
        f"{'k':>3} {'PVP100':>7} {'PVP50':>7} {'PVP33':>7} {'PVP25':>7} {'alone25':>8} "
        f"{'post50':>7} {'alone50':>8} {'size':>6} {'EA1':>5} {'EA2':>5} {'EA^':>5} "
        f"{'drop':>5} {'drop%':>6}"
    )
    rows_out: list[dict[str, Any]] = []
    for k in ks:
        runs = two[k]
        row: dict[str, Any] = {
            "k": k,
            "pvp100": mean_of(runs, ["pvp", "1.0000"]),
            "pvp50": mean_of(runs, ["pvp", "0.5000"]),
            "pvp33": mean_of(runs, ["pvp", "0.3333"]),
            "pvp25": mean_of(runs, ["pvp", "0.2500"]),
            "posterior_pvp100": mean_of(runs, ["posterior_pvp", "1.0000"]),
            "posterior_pvp50": mean_of(runs, ["posterior_pvp", "0.5000"]),
            "alone_pvp25": mean_of(runs, ["alone_pvp", "0.2500"]),
            "alone_posterior_pvp50": mean_of(runs, ["alone_posterior_pvp", "0.5000"]),
            "avg_partition_size": statistics.fmean(
                statistics.fmean(r["avg_partition_size"]) for r in runs
            ),
            "avg_prior_ea": [statistics.fmean(r["avg_prior_ea"][j] for r in runs) for j in (0, 1)],
            "avg_posterior_ea": mean_of(runs, ["avg_posterior_ea"]),
            "avg_anon_drop": mean_of(runs, ["avg_anon_drop"]),
            "relative_drop": mean_of(runs, ["relative_drop"]),
            "pvp100_range": [
                min(r["pvp"]["1.0000"] for r in runs),
                max(r["pvp"]["1.0000"] for r in runs),
            ],
            "runs": runs,
        }
        rows_out.append(row)
        print(
            f"{k:3d} {row['pvp100']:7.2f} {row['pvp50']:7.2f} {row['pvp33']:7.2f} "
            f"{row['pvp25']:7.2f} {row['alone_pvp25']:8.2f} {row['posterior_pvp50']:7.2f} "
            f"{row['alone_posterior_pvp50']:8.2f} {row['avg_partition_size']:6.1f} "
            f"{row['avg_prior_ea'][0]:5.2f} {row['avg_prior_ea'][1]:5.2f} "
            f"{row['avg_posterior_ea']:5.2f} {row['avg_anon_drop']:5.2f} "
            f"{100 * row['relative_drop']:5.1f}%"
        )
    print(
        f"paper (Adult, k = 5): PVP100 about {PAPER['pvp100_k5']:.0f}%, PVP25 more than "
        f"{PAPER['pvp25_k5']:.0f}%; ours: {rows_out[0]['pvp100']:.2f}% "
        f"(seeds {rows_out[0]['pvp100_range'][0]:.2f}-{rows_out[0]['pvp100_range'][1]:.2f}), "
        f"{rows_out[0]['pvp25']:.2f}%"
    )

    # ---- n = 2, 3, 4 releases, 11,000 records each (section 3.6)
    multi: list[dict[str, Any]] = []
    print("\nn releases (5,000 + 6,000 records each), known overlap")
    print(f"{'n':>2} {'k':>3} {'PVP100':>7} {'PVP25':>7} {'post100':>8} {'drop':>5} {'drop%':>6}")
    for k in (5, 10) if not args.quick else (5,):
        for n in (2, 3, 4):
            runs = []
            for seed in range(seeds):
                rng = np.random.default_rng(2000 + seed)
                overlap, parts = subsets(table.num_rows, n, 6000, rng)
                rels = [
                    mondrian(table, p, k, hier, f"subset {j + 1}")[0] for j, p in enumerate(parts)
                ]
                runs.append(summarize(audit(table, overlap, parts, rels, hier)[0]))
            row = {
                "n": n,
                "k": k,
                "pvp100": mean_of(runs, ["pvp", "1.0000"]),
                "pvp25": mean_of(runs, ["pvp", "0.2500"]),
                "posterior_pvp100": mean_of(runs, ["posterior_pvp", "1.0000"]),
                "avg_anon_drop": mean_of(runs, ["avg_anon_drop"]),
                "relative_drop": mean_of(runs, ["relative_drop"]),
                "runs": runs,
            }
            multi.append(row)
            print(
                f"{n:2d} {k:3d} {row['pvp100']:7.2f} {row['pvp25']:7.2f} "
                f"{row['posterior_pvp100']:8.2f} {row['avg_anon_drop']:5.2f} "
                f"{100 * row['relative_drop']:5.1f}%"
            )

    print(
        f"\nperformance (k = 5, n = 2, {perf['individuals']:,} individuals, "
        f"{perf['groups']} groups): engine {perf['engine_seconds'] * 1000:.0f} ms, "
        f"baseline Algorithm 1 loop {perf['baseline_seconds']:.2f} s "
        f"({perf['speedup']:.0f}x); Mondrian per release "
        f"{statistics.fmean(timing['mondrian']):.2f} s"
    )
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / "composition_adult.json").write_text(
        json.dumps(
            {
                "hardware": hardware(),
                "seeds": seeds,
                "overlap": OVERLAP,
                "paper": PAPER,
                "two_releases": rows_out,
                "n_releases": multi,
                "performance": perf,
                "mondrian_seconds_mean": statistics.fmean(timing["mondrian"]),
                "audit_seconds_mean": statistics.fmean(timing["audit"]),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
