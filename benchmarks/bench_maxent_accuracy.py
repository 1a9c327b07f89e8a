"""Privacy-MaxEnt, Figure 5 and Figure 6 of Du et al. 2008 on the bundled Adult data.

Set-up of section 7: Education sensitive, the 8 other attributes as QIs, 2,842 buckets of 5
records with 5 distinct Education values (airflow_privacy.core.maxent.diverse_buckets),
association rules with support >= 3 records mined from the original (bucketed) records.

* Figure 5: estimation accuracy (weighted KL, section 7.1) against K for the top-K positive
  rules only, the top-K negative rules only, and K/2 of each; for rules over any subset of
  the QI attributes (the default) and, second panel, for single-attribute rules (T = 1).
* Figure 6: accuracy against the number T of QI attributes in the rules, K = 100 mixed.

Each K sweep warm-starts from the previous K's solution (the top-K lists are nested).
Usage: ``python -m benchmarks.bench_maxent_accuracy [--ks 0,10,...] [--plot docs/x.svg]``.
Writes ``benchmarks/results/maxent_accuracy.json`` and the plot.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from airflow_privacy.core.maxent import BucketRelease, estimate
from airflow_privacy.core.maxent.diverse_buckets import ADULT_QIS, ADULT_SENSITIVE, adult_section7
from airflow_privacy.core.maxent.result import MaxEntResult
from benchmarks.machine import hardware

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent
KINDS = ("positive", "negative", "mixed")


def split(kind: str, k: int) -> tuple[int, int]:
    if kind == "positive":
        return k, 0
    if kind == "negative":
        return 0, k
    return k // 2, k - k // 2


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ks", default="0,10,20,50,100,150,200,300,400,500")
    parser.add_argument("--min-support", type=int, default=3)
    parser.add_argument("--plot", default=str(ROOT / "docs" / "maxent_accuracy.svg"))
    args = parser.parse_args()
    ks = [int(k) for k in args.ks.split(",")]

    original, release = adult_section7()
    rel = BucketRelease.from_arrow(release, ADULT_QIS, ADULT_SENSITIVE, "bucket")
    orig = original.drop(["bucket"])
    print(f"{rel.n_records:,} records, {rel.n_buckets:,} buckets, {len(rel.values)} values")
    panels: dict[str, Any] = {}
    for panel, widths in (("any subset of QIs", None), ("T = 1", [1])):
        curves: dict[str, list[dict[str, Any]]] = {}
        for kind in KINDS:
            points: list[dict[str, Any]] = []
            previous: MaxEntResult | None = None
            for k in ks:
                kp, kn = split(kind, k)
                t0 = time.perf_counter()
                res = estimate(
                    rel, original=orig, top_positive=kp, top_negative=kn,
                    min_support=args.min_support, rule_widths=widths,
                    warm_start=previous.solution if previous is not None else None,
                )  # fmt: skip
                secs = time.perf_counter() - t0
                previous = res
                st = res.solution.stats
                points.append({
                    "k": k, "accuracy": res.accuracy, "max_posterior": res.max_posterior,
                    "seconds": secs, "newton_iterations": st.newton_iterations,
                    "buckets_solved": st.buckets_solved, "residual": st.residual,
                })  # fmt: skip
                print(f"{panel:>18} {kind:>8} K={k:4d}  accuracy {res.accuracy:.5f}  "
                      f"max posterior {res.max_posterior:.3f}  {secs:6.2f} s  "
                      f"{st.buckets_solved:5d} buckets solved", flush=True)  # fmt: skip
            curves[kind] = points
        panels[panel] = curves
    # Figure 6: rule width T, K = 100 (50 + 50)
    by_width = []
    for t in range(1, len(ADULT_QIS) + 1):
        res = estimate(rel, original=orig, top_positive=50, top_negative=50,
                       min_support=args.min_support, rule_widths=[t])  # fmt: skip
        by_width.append({"T": t, "accuracy": res.accuracy})
        print(f"T = {t}: accuracy {res.accuracy:.5f}", flush=True)
    out = {
        "hardware": hardware(),
        "setup": {
            "records": rel.n_records,
            "buckets": rel.n_buckets,
            "min_support": args.min_support,
            "unit": "nats",
        },
        "figure5": panels,
        "figure6": by_width,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "maxent_accuracy.json").write_text(json.dumps(out, indent=2))
    plot(out, Path(args.plot))
    print(f"wrote {RESULTS / 'maxent_accuracy.json'} and {args.plot}")


def plot(out: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = out["figure5"]
    fig, axes = plt.subplots(1, len(panels) + 1, figsize=(14, 4.2))
    styles = {"positive": ("K+ only", "o-"), "negative": ("K- only", "s-"),
              "mixed": ("(K/2)+ and (K/2)-", "^-")}  # fmt: skip
    for ax, (title, curves) in zip(axes, panels.items(), strict=False):
        for kind, points in curves.items():
            label, style = styles[kind]
            ax.plot([p["k"] for p in points], [p["accuracy"] for p in points], style,
                    label=label, markersize=4)  # fmt: skip
        ax.set_xlabel("K (number of association rules)")
        ax.set_ylabel("estimation accuracy (weighted KL, nats)")
        ax.set_title(f"Figure 5: rules over {title}")
        ax.grid(alpha=0.3)
        ax.legend()
    ax = axes[-1]
    ax.plot([p["T"] for p in out["figure6"]], [p["accuracy"] for p in out["figure6"]], "d-")
    ax.set_xlabel("T (QI attributes in each rule)")
    ax.set_ylabel("estimation accuracy (weighted KL, nats)")
    ax.set_title("Figure 6: K = 100 (50+ / 50-)")
    ax.grid(alpha=0.3)
    setup = out["setup"]
    fig.suptitle(
        f"Privacy-MaxEnt on Adult: {setup['records']:,} records in {setup['buckets']:,} "
        f"5-diverse buckets, Education sensitive, min support {setup['min_support']}"
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp" + path.suffix)
    fig.savefig(tmp, format=path.suffix.lstrip(".") or "svg")
    tmp.replace(path)
    plt.close(fig)


if __name__ == "__main__":
    main()
