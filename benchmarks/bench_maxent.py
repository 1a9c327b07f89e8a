"""Privacy-MaxEnt performance, Figure 7 of Du et al. 2008, on the section 7 Adult set-up.

Baselines and ours in the same run, reported as ratios:

* **split vs joint**: the Theorem 5 closed form for buckets no knowledge touches, the solver
  for the rest (ours) vs every bucket in one maximum-entropy problem (the paper's Figure 7
  runs "have not applied the optimization techniques discussed in Section 5.5");
* **Schur vs sparse LU**: Newton's linear solve by per-bucket elimination and a Schur
  complement over the knowledge rows vs a sparse LU of the whole dual Hessian (the solver's
  ``auto`` choice between them is timed as "joint").

(a) time and Newton iterations vs the number of knowledge constraints (2,842 buckets), for
rules over any QI subset (each touches few buckets) and single-attribute rules (each spans
the release: the worst case); (b) time vs the number of buckets with 100 rules;
(c) the whole ``airflow-privacy maxent`` process on 2,842 buckets with 100 rules.

Usage: ``python -m benchmarks.bench_maxent [--ks 0,25,...] [--buckets 500,...]``.
Writes ``benchmarks/results/maxent.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from airflow_privacy.core.maxent import BucketRelease, SolverOptions
from airflow_privacy.core.maxent.constraints import build_system
from airflow_privacy.core.maxent.diverse_buckets import ADULT_QIS, ADULT_SENSITIVE, adult_section7
from airflow_privacy.core.maxent.rules import mine_rules, rules_knowledge
from airflow_privacy.core.maxent.solver import Solution, solve
from benchmarks.machine import hardware

RESULTS = Path(__file__).resolve().parent / "results"
FAMILIES: dict[str, list[int] | None] = {"any-subset": None, "single-attribute": [1]}


def timed_solve(system: Any, options: SolverOptions, repeat: int = 3) -> tuple[float, Solution]:
    """Best of ``repeat`` runs."""
    best = float("inf")
    sol = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        sol = solve(system, options)
        best = min(best, time.perf_counter() - t0)
    assert sol is not None
    return best, sol


def setup(n_buckets: int) -> tuple[Any, BucketRelease]:
    original, release = adult_section7(n_buckets=n_buckets)
    rel = BucketRelease.from_arrow(release, ADULT_QIS, ADULT_SENSITIVE, "bucket")
    return original.drop(["bucket"]), rel


def knowledge_for(orig: Any, k: int, widths: Sequence[int] | None) -> tuple[float, Any]:
    t0 = time.perf_counter()
    pos, neg = mine_rules(orig, ADULT_QIS, ADULT_SENSITIVE, k // 2, k - k // 2, 3, widths)
    return time.perf_counter() - t0, rules_knowledge(pos + neg)


def run_point(rel: BucketRelease, know: Any, lu_limit: int, k: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    system = build_system(rel, know)
    build = time.perf_counter() - t0
    t_split, sol = timed_solve(system, SolverOptions())
    t_joint, joint = timed_solve(system, SolverOptions(split=False))
    diff = float(abs(sol.x - joint.x).max())
    assert diff < 1e-8, diff
    st, sj = sol.stats, joint.stats
    row: dict[str, Any] = {
        "k": k, "buckets": rel.n_buckets, "build_seconds": build,
        "split_seconds": t_split, "joint_seconds": t_joint, "joint_over_split": t_joint / t_split,
        "split_iterations": st.newton_iterations, "joint_iterations": sj.newton_iterations,
        "buckets_solved": st.buckets_solved, "forced_zero": st.forced_zero,
        "knowledge_nonzeros": int(system.knowledge.nnz),
        "residual": max(st.residual, sj.residual), "lp_fallback": st.lp_fallback,
    }  # fmt: skip
    if k and k <= lu_limit:
        t_lu, lu = timed_solve(system, SolverOptions(split=False, linear="lu"))
        t_schur, schur = timed_solve(system, SolverOptions(split=False, linear="schur"))
        for other in (lu, schur):
            assert float(abs(other.x - joint.x).max()) < 1e-8
        row["joint_lu_seconds"] = t_lu
        row["joint_schur_seconds"] = t_schur
        row["lu_over_schur"] = t_lu / t_schur
    return row


def show(row: dict[str, Any], label: str) -> None:
    lu = (f"  [joint: LU {row['joint_lu_seconds']:5.2f} s, Schur {row['joint_schur_seconds']:5.2f}"
          f" s: {row['lu_over_schur']:4.1f}x]" if "joint_lu_seconds" in row else "")  # fmt: skip
    print(
        f"{label:>16} K={row['k']:4d} B={row['buckets']:5d}  split {row['split_seconds']:6.2f} s"
        f" ({row['split_iterations']:2d} it, {row['buckets_solved']:4d} solved)  joint "
        f"{row['joint_seconds']:6.2f} s ({row['joint_iterations']:2d} it) "
        f"= {row['joint_over_split']:5.1f}x{lu}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ks", default="0,25,50,100,200,400")
    parser.add_argument("--buckets", default="500,1000,2000,2842,4000")
    parser.add_argument("--k-for-buckets", type=int, default=100)
    parser.add_argument("--lu-limit", type=int, default=400,
                        help="run the sparse-LU baseline up to this K")  # fmt: skip
    args = parser.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    sizes = [int(b) for b in args.buckets.split(",")]

    orig, rel = setup(2842)
    _, warm = knowledge_for(orig, 10, None)  # imports and caches before timing
    solve(build_system(rel, warm))
    by_k: dict[str, list[dict[str, Any]]] = {}
    for family, widths in FAMILIES.items():
        rows = []
        for k in ks:
            mine_s, know = knowledge_for(orig, k, widths)
            row = run_point(rel, know, args.lu_limit, k)
            row["mine_seconds"] = mine_s
            rows.append(row)
            show(row, family)
        by_k[family] = rows
    by_buckets: dict[str, list[dict[str, Any]]] = {}
    for family, widths in FAMILIES.items():
        rows = []
        for nb in sizes:
            o, r = setup(nb)
            mine_s, know = knowledge_for(o, args.k_for_buckets, widths)
            row = run_point(r, know, 0, args.k_for_buckets)
            row["mine_seconds"] = mine_s
            rows.append(row)
            show(row, family)
        by_buckets[family] = rows
    process = cli_process(orig, rel)
    out = {"hardware": hardware(), "by_knowledge": by_k, "by_buckets": by_buckets,
           "process": process}  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "maxent.json").write_text(json.dumps(out, indent=2))
    print(f"wrote {RESULTS / 'maxent.json'}")


def cli_process(orig: Any, rel: BucketRelease) -> dict[str, Any]:
    """The whole command (start-up, reading Parquet, mining, solving, output) for 100 rules
    of each family on the 2,842-bucket release."""
    import pyarrow.parquet as pq

    _, release = adult_section7()
    exe = Path(sys.executable).with_name("airflow-privacy")
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        rel_path, orig_path = Path(tmp) / "release.parquet", Path(tmp) / "original.parquet"
        pq.write_table(release, rel_path)
        pq.write_table(orig, orig_path)
        for family, widths in FAMILIES.items():
            argv = [str(exe), "maxent", str(rel_path), "--sensitive", ADULT_SENSITIVE,
                    "--bucket", "bucket", "--original", str(orig_path), "--top-positive", "50",
                    "--top-negative", "50", "--quiet", "--format", "json"]  # fmt: skip
            for w in widths or []:
                argv += ["--rule-width", str(w)]
            walls = []
            for _ in range(3):
                t0 = time.perf_counter()
                proc = subprocess.run(argv, capture_output=True, text=True)
                walls.append(time.perf_counter() - t0)
                assert proc.returncode == 0, proc.stderr
            solver = json.loads(proc.stdout)["details"]["solver"]  # the report envelope
            out[family] = {"process_seconds": min(walls), "solver_seconds": solver["seconds"],
                           "buckets_solved": solver["buckets_solved"]}  # fmt: skip
            print(f"whole process, 100 {family} rules on {rel.n_buckets:,} buckets: "
                  f"{min(walls):.2f} s (solver {solver['seconds']:.2f} s)", flush=True)  # fmt: skip
    return out


if __name__ == "__main__":
    main()
