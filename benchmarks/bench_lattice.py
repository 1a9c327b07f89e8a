"""Full-domain lattice search on Adult: pruning + roll-up vs checking every node from rows.

Adult (30,162 records), 8 QIs with the ARX hierarchies (sex, age, race, marital-status,
education, native-country, workclass, salary-class: a lattice of 4,320 nodes), Occupation
sensitive. For each criterion, in one process:

* **ours**: the search of ``anonymize(..., "lattice")`` (Flash-style binary search over
  paths with predictive tagging, every node's counts rolled up from a finer node), and the
  whole ``anonymize`` call (search, utility of the minimal nodes, release table, re-check);
* **baseline**: every node generalized from the rows (``generalize_table``), counted
  (``Bucketization.from_arrow``) and checked, then the minimal nodes taken;
* two ablations that separate the effects: every node checked with roll-up (no pruning),
  and the pruned search with every check counted from the rows (no roll-up).

All four must find the same minimal nodes (asserted). Times are the best of ``--repeat``
runs (the baseline runs once). Ratio = baseline time / our search time.

Usage: ``.venv/bin/python -m benchmarks.bench_lattice [--repeat 3]``. Writes
``benchmarks/results/lattice.json``.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from airflow_privacy.core.anonymize import anonymize
from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.anonymize.encoding import Encoded, encode
from airflow_privacy.core.anonymize.lattice import LatticeProblem, qi_trees
from airflow_privacy.core.anonymize.release import counts_bucketization
from airflow_privacy.core.anonymize.search import Levels, minimal_nodes, search
from airflow_privacy.core.datasets import adult_hierarchies, load_adult
from airflow_privacy.core.hierarchy import Hierarchy, generalize_table
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from benchmarks.machine import hardware
from benchmarks.timing import best_time

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "lattice.json"
QIS = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass",
       "salary-class")  # fmt: skip
CASES: list[tuple[str, list[tuple[str, dict[str, Any]]], float]] = [
    ("(0.7, 3)-safety", [("ck-safety", {"c": 0.7, "k": 3})], 0.0),
    ("5-anonymity", [("k-anonymity", {"k": 5})], 0.0),
    ("5-anonymity, 1% suppression", [("k-anonymity", {"k": 5})], 0.01),
]


def _problem(enc: Encoded, criteria: Any, limit: float, h: dict[str, Hierarchy]) -> LatticeProblem:
    return LatticeProblem(enc, CriteriaSet.parse(criteria), qi_trees(enc, h),
                          math.floor(limit * enc.n))  # fmt: skip


def _from_rows(problem: LatticeProblem, h: dict[str, Hierarchy]) -> Callable[[Levels], bool]:
    """The node check with the counts read from the rows (no roll-up)."""
    table = problem.enc.table
    spec = ReleaseSpec(problem.enc.sensitive.name, tuple(QIS))
    index = {v: i for i, v in enumerate(problem.values)}

    def check(levels: Levels) -> bool:
        rel = generalize_table(table, h, dict(zip(QIS, levels, strict=True)))
        b = Bucketization.from_arrow(rel, spec)
        cols = [index[v] for v in b.values]
        counts = np.zeros((b.n_groups, len(problem.values)), dtype=np.int64)
        counts[:, cols] = b.counts
        keep = problem.kept(counts, problem.all)
        if keep is None:
            return False
        kept = counts_bucketization(counts[keep], problem.values, spec.sensitive)
        return problem.criteria.passes(kept)

    return check


def run_case(
    name: str,
    criteria: list[tuple[str, dict[str, Any]]],
    limit: float,
    enc: Encoded,
    h: dict[str, Hierarchy],
    repeat: int,
) -> dict[str, Any]:
    table = enc.table

    def ours_search() -> Any:  # a fresh problem each run: no warm roll-up cache
        p = _problem(enc, criteria, limit, h)
        found = search(p.lattice, p.check_monotone if p.monotone else None,
                       p.check_rest if p.rest else None)  # fmt: skip
        return found, p

    def ours_anonymize() -> Any:
        return anonymize(table, list(QIS), "occupation", "lattice", criteria, h,
                         suppression_limit=limit)  # fmt: skip

    t_search, (found, p) = best_time(ours_search, repeat)
    t_full, result = best_time(ours_anonymize, repeat)
    expected = sorted(found.minimal)
    published = sorted(
        tuple(m["levels"].values()) for m in result.manifest.details["minimal_nodes"]
    )
    assert published == expected
    lattice = p.lattice
    nodes = [lattice.levels(i) for i in range(lattice.size)]

    def every_node(check: Callable[[Levels], bool]) -> list[Levels]:
        return sorted(minimal_nodes(lattice, np.asarray([check(n) for n in nodes])))

    from_rows = _from_rows(_problem(enc, criteria, limit, h), h)
    t_base, base_min = best_time(lambda: every_node(from_rows), 1)
    rolled = _problem(enc, criteria, limit, h)
    t_roll, roll_min = best_time(lambda: every_node(rolled.check), 1)
    rows_check = _from_rows(_problem(enc, criteria, limit, h), h)
    t_prune_rows, pruned = best_time(lambda: search(lattice, rows_check, None), 1)
    assert base_min == roll_min == expected == sorted(pruned.minimal), name
    print(f"{name}: {found.nodes_checked} of {lattice.size} nodes checked, {len(expected)} "
          f"minimal; search {t_search:.3f} s (anonymize {t_full:.3f} s) vs every node from "
          f"rows {t_base:.1f} s = {t_base / t_search:.0f}x; every node rolled up "
          f"{t_roll:.2f} s, pruned from rows {t_prune_rows:.2f} s", flush=True)  # fmt: skip
    return {
        "case": name,
        "criteria": criteria,
        "suppression_limit": limit,
        "lattice_size": lattice.size,
        "nodes_checked": found.nodes_checked,
        "inferred_pass": found.inferred_pass,
        "inferred_fail": found.inferred_fail,
        "rollups": p.rollup.rollups,
        "minimal_nodes": len(expected),
        "chosen_levels": result.manifest.details["levels"],
        "suppressed": result.manifest.suppressed,
        "seconds": {
            "ours_search": t_search,
            "ours_anonymize": t_full,
            "baseline_every_node_from_rows": t_base,
            "every_node_rolled_up": t_roll,
            "pruned_from_rows": t_prune_rows,
        },
        "ratio": t_base / t_search,
        "ratio_whole_call": t_base / t_full,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    table = load_adult()
    every = adult_hierarchies()
    h = {q: every[q] for q in QIS}  # a hierarchy for a column that is no QI is refused
    enc = encode(table, QIS, "occupation")
    anonymize(table, list(QIS), "occupation", "lattice", CASES[0][1], h)  # warm-up (imports)
    rows = [run_case(name, crit, limit, enc, h, args.repeat) for name, crit, limit in CASES]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"hardware": hardware(), "qis": list(QIS), "rows": rows},
                                  indent=2) + "\n")  # fmt: skip
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
