"""Mondrian on Adult for k-anonymity: ours vs anonypy 0.2.1, time and average class size.

Same input for both: the bundled Adult data (30,162 records) written once as a
``;``-separated CSV, 8 QIs (``age`` numeric, the others categorical), Occupation sensitive.
anonypy runs in its own virtualenv (``benchmarks/anonypy_env.sh``) through
``benchmarks/bench_mondrian_anonypy.py``, which times ``Mondrian.partition`` and
``anonypy.anonymize`` inside its process. Ours: ``anonymize(..., "mondrian")`` on the
in-memory table (partitioning, labels, release table, the final re-check of the release and
the manifest), best of ``--repeat`` runs, with the ARX hierarchies for the categorical QIs
and without them (implicit value / ``*`` hierarchy), each with both categorical splits:
``hierarchy`` (along the hierarchy, published as the lowest common ancestor; without a
hierarchy, into single values) and ``halving`` (anonypy's: the values present cut into two
halves, published as the set; in the hierarchy's leaf order, or in text order without
one); and ``auto``, the default, which makes both and publishes the one with more
classes. Ours also runs on the histogram of distinct (QI..., sensitive) tuples (what a backend
returns): same partitions (asserted), time of the partitioning alone. The average class
size says how fine the partitions are; every release is k-anonymous (asserted).

Usage: ``.venv/bin/python -m benchmarks.bench_mondrian [--k 5 10] [--repeat 3]
[--repeat-anonypy 1]``. Writes ``benchmarks/results/mondrian.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from airflow_privacy.core.anonymize import anonymize
from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.anonymize.encoding import encode
from airflow_privacy.core.anonymize.mondrian import mondrian_anonymize
from airflow_privacy.core.datasets import adult_hierarchies, adult_path, load_adult
from benchmarks.machine import hardware

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "benchmarks" / "bench_mondrian_anonypy.py"
ENV_SCRIPT = ROOT / "benchmarks" / "anonypy_env.sh"
RESULTS = ROOT / "benchmarks" / "results" / "mondrian.json"
QIS = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass",
       "salary-class")  # fmt: skip


def anonypy_python() -> Path:
    out = subprocess.run(["bash", str(ENV_SCRIPT)], check=True, capture_output=True, text=True)
    return Path(out.stdout.strip().splitlines()[-1])


def run_anonypy(python: Path, csv: Path, k: int, repeat: int) -> dict[str, Any]:
    cmd = [str(python), str(RUNNER), "--csv", str(csv), "--sep", ";", "--qi", ",".join(QIS),
           "--numeric", "age", "--sa", "occupation", "--k", str(k),
           "--repeat", str(repeat)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=3600)
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def run_ours(k: int, repeat: int, hierarchies: bool, split: str = "hierarchy") -> dict[str, Any]:
    from dataclasses import replace

    import numpy as np

    table = load_adult()
    every = adult_hierarchies()
    h = {q: every[q] for q in QIS} if hierarchies else None  # QIs only (others are refused)
    times = []
    result = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = anonymize(table, list(QIS), "occupation", "mondrian",
                           [("k-anonymity", {"k": k})], h, categorical_split=split)  # fmt: skip
        times.append(time.perf_counter() - t0)
    assert result is not None and result.manifest.safe
    sizes = [p["size"] for p in result.manifest.details["partitions"]]
    assert min(sizes) >= k
    # the same on the histogram of distinct tuples (a backend's GROUP BY)
    cols = [*QIS, "occupation"]
    agg = table.select(cols).group_by(cols).aggregate([([], "count_all")])
    enc = replace(encode(agg.select(cols), list(QIS), "occupation"),
                  weights=np.asarray(agg.column("count_all").to_numpy(), np.int64))  # fmt: skip
    crit = CriteriaSet.parse([("k-anonymity", {"k": k})], ())
    hist_times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        hist = mondrian_anonymize(enc, crit, h, 0, categorical_split=split)
        hist_times.append(time.perf_counter() - t0)
    assert hist.manifest.details["partitions"] == result.manifest.details["partitions"]
    return {
        "categorical_split": split,
        "kept": result.manifest.parameters["categorical_split"],
        "seconds": times,
        "histogram_rows": enc.rows,
        "histogram_seconds": hist_times,
        "partitions": len(sizes),
        "min_size": min(sizes),
        "average_class_size": table.num_rows / len(sizes),
        "loss": result.manifest.utility["loss"],
        "split_attempts": result.manifest.details["split_attempts"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, nargs="+", default=[5, 10])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--repeat-anonypy", type=int, default=1)
    args = ap.parse_args()

    python = anonypy_python()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "adult.csv"
        with gzip.open(adult_path(), "rb") as src, csv.open("wb") as dst:
            shutil.copyfileobj(src, dst)
        for k in args.k:
            ours = run_ours(k, args.repeat, hierarchies=True)
            flat = run_ours(k, args.repeat, hierarchies=False)
            halving = run_ours(k, args.repeat, hierarchies=True, split="halving")
            halving_flat = run_ours(k, args.repeat, hierarchies=False, split="halving")
            auto = run_ours(k, args.repeat, hierarchies=True, split="auto")
            auto_flat = run_ours(k, args.repeat, hierarchies=False, split="auto")
            peer = run_anonypy(python, csv, k, args.repeat_anonypy)
            assert peer["min_size"] >= k
            ours_t = min(ours["seconds"])
            peer_t = statistics.median(peer["partition_seconds"])
            peer_total = statistics.median(
                [
                    a + b
                    for a, b in zip(
                        peer["partition_seconds"], peer["anonymize_seconds"], strict=True
                    )
                ]
            )
            rows.append({"k": k, "ours": ours, "ours_no_hierarchies": flat,
                         "ours_halving": halving, "ours_halving_no_hierarchies": halving_flat,
                         "ours_auto": auto, "ours_auto_no_hierarchies": auto_flat,
                         "anonypy": peer,
                         "ratio_partition": peer_t / ours_t,
                         "ratio_with_output": peer_total / ours_t})  # fmt: skip
            print(f"k={k}: ours {ours_t:.2f} s, {ours['partitions']} partitions "
                  f"(avg class {ours['average_class_size']:.2f}); without hierarchies "
                  f"{min(flat['seconds']):.2f} s, avg class {flat['average_class_size']:.2f}; "
                  f"anonypy partition {peer_t:.2f} s (+ output {peer_total - peer_t:.2f} s), "
                  f"{peer['partitions']} partitions (avg class {peer['average_class_size']:.2f}); "
                  f"ratio {peer_t / ours_t:.1f}x ({peer_total / ours_t:.1f}x with output)",
                  flush=True)  # fmt: skip
            for name, r in (("hierarchy, ARX", ours), ("hierarchy, none", flat),
                            ("halving, ARX order", halving), ("halving, text order", halving_flat),
                            ("auto (default), ARX", auto), ("auto (default), none", auto_flat),
                            ("anonypy", peer)):  # fmt: skip
                secs = min(r.get("seconds", r.get("partition_seconds", [0.0])))
                hist = (
                    f", histogram {min(r['histogram_seconds']):.2f} s"
                    if "histogram_seconds" in r
                    else ""
                )
                print(f"  k={k} {name:20s} {r['partitions']:6d} classes, avg "
                      f"{r['average_class_size']:.2f}, {secs:.2f} s{hist}", flush=True)  # fmt: skip
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"hardware": hardware(), "qis": list(QIS), "rows": rows},
                                  indent=2) + "\n")  # fmt: skip
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
