"""The composition audit at scale, side by side with one DuckDB join of the same tables.

Synthetic people (age 17-90, a 300-value zip, sex; 12 sensitive values), a candidate release
of everyone (age in 10-year bands, zip in bands of 10, sex) and three priors of random
halves, each generalized differently (5-year/20-zip bands, 20-year/5-zip, 15/15); the
releases as the ledger keeps them (groups and counts, ``PublishedRelease.to_dict``), the
population as a Parquet file of original records. Measured in a fresh process each, the
two sides alternating:

* **ours**: read the population file (``read_population_file``), load the four releases,
  ``composition_audit`` (worst-case overlap): wall time of the whole process's work after
  its imports, and its peak RSS (``VmHWM``);
* **floor**: DuckDB joins the population file with the candidate's records (a positional
  join: the same rows) and counts each (QI values, sensitive value) combination, the
  smallest query that reads both tables: wall time and peak RSS of its process.

Reported per size: both times, the ratio, both peak memories, and the growth exponent of
time and memory between sizes (a log-log slope). Hardware in ``docs/benchmarks.md``.

Usage: ``.venv/bin/python -m benchmarks.bench_composition_scale [--sizes 100000 1000000
10000000] [--repeat 3]``. Writes ``benchmarks/results/composition_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchmarks.machine import hardware

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
QIS = ("age", "zip", "sex")
PRIORS = ((5, 20), (20, 5), (15, 15))


def _bands(values: np.ndarray, width: int) -> pa.Array:
    lo = values // width * width
    return pc.binary_join_element_wise(
        pa.array(lo.astype(str)), pa.array((lo + width - 1).astype(str)), "-"
    )


def generate(n: int, folder: Path) -> None:
    """The population Parquet, the candidate's records (for the floor) and the four releases
    as the ledger keeps them (JSON)."""
    from airflow_privacy.core.composition.release import PublishedRelease

    rng = np.random.default_rng(n)
    age = rng.integers(17, 91, n)
    zipc = rng.integers(0, 300, n)
    sex = rng.integers(0, 2, n)
    dis = rng.integers(0, 12, n)
    pq.write_table(
        pa.table({"age": age, "zip": zipc, "sex": pa.array(sex.astype(str))}),
        folder / "population.parquet",
    )

    def release(idx: np.ndarray, width: int, zwidth: int, name: str) -> PublishedRelease:
        t = pa.table({
            "age": _bands(age[idx], width), "zip": _bands(zipc[idx], zwidth),
            "sex": pa.array(sex[idx].astype(str)),
            "d": pc.binary_join_element_wise("v", pa.array(dis[idx].astype(str)), ""),
        })  # fmt: skip
        if name == "candidate":
            pq.write_table(t.select(["d"]), folder / "candidate_records.parquet")
        return PublishedRelease.from_arrow(t, QIS, "d", name=name)

    rels = [release(np.arange(n), 10, 10, "candidate")]
    rels += [
        release(np.sort(rng.choice(n, n // 2, replace=False)), w, z, f"prior{i}")
        for i, (w, z) in enumerate(PRIORS)
    ]
    (folder / "releases.json").write_text(json.dumps([r.to_dict() for r in rels]))


PEAK = """
def peak():
    # VmHWM: this process's own high-water mark (ru_maxrss would count the parent's pages
    # at fork time, before exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")
"""

OURS = (
    PEAK
    + """
import json, sys, time
from pathlib import Path
from airflow_privacy.core.composition.attack import composition_audit
from airflow_privacy.core.composition.files import read_population_file
from airflow_privacy.core.composition.release import PublishedRelease
folder = Path(sys.argv[1])
t0 = time.perf_counter()
pop = read_population_file(folder / "population.parquet", ["age", "zip", "sex"])
rels = [PublishedRelease.from_dict(d) for d in json.loads((folder / "releases.json").read_text())]
res = composition_audit(pop, rels[0], rels[1:])
wall = time.perf_counter() - t0
rss = peak()
print(json.dumps({"seconds": wall, "peak_rss": rss, "overlap": res.overlap_size,
                  "pvp_100": res.pvp_c(1.0)}))
"""
)

FLOOR = (
    PEAK
    + """
import json, sys, time
from pathlib import Path
import duckdb
folder = Path(sys.argv[1])
t0 = time.perf_counter()
con = duckdb.connect()
con.execute("SET threads TO 1")
n = con.execute(
    "SELECT count(*) FROM (SELECT p.age, p.zip, p.sex, c.d, count(*) AS n "
    "FROM read_parquet(?) p POSITIONAL JOIN read_parquet(?) c GROUP BY ALL)",
    [str(folder / "population.parquet"), str(folder / "candidate_records.parquet")],
).fetchone()[0]
wall = time.perf_counter() - t0
rss = peak()
print(json.dumps({"seconds": wall, "peak_rss": rss, "cells": n}))
"""
)


def measure(code: str, folder: Path) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True,
                          text=True, check=True, cwd=ROOT)  # fmt: skip
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def slope(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < 2:
        return None
    lx, ly = np.log(xs), np.log(ys)
    return float(np.polyfit(lx, ly, 1)[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    hw = hardware()
    print(f"hardware: {hw['nproc']} CPUs, {hw['cpu']}, {hw['ram_gib']} GiB RAM")
    rows: list[dict[str, Any]] = []
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            t0 = time.perf_counter()
            generate(n, folder)
            print(f"\n{n:,} people: inputs generated in {time.perf_counter() - t0:.1f} s")
            ours, floor = [], []
            for _ in range(args.repeat):  # alternating: both sides see the same machine
                ours.append(measure(OURS, folder))
                floor.append(measure(FLOOR, folder))
        row = {
            "people": n,
            "ours_s": statistics.median(r["seconds"] for r in ours),
            "floor_s": statistics.median(r["seconds"] for r in floor),
            "ours_peak_mib": max(r["peak_rss"] for r in ours) / 2**20,
            "floor_peak_mib": max(r["peak_rss"] for r in floor) / 2**20,
            "overlap": ours[0]["overlap"],
            "pvp_100": ours[0]["pvp_100"],
        }
        row["ratio"] = row["ours_s"] / row["floor_s"]
        rows.append(row)
        print(f"ours {row['ours_s']:.2f} s, {row['ours_peak_mib']:.0f} MiB peak; DuckDB join "
              f"{row['floor_s']:.2f} s, {row['floor_peak_mib']:.0f} MiB; ratio "
              f"{row['ratio']:.2f}; overlap {row['overlap']:,}, PVP_100 "
              f"{row['pvp_100']:.3f}%")  # fmt: skip
    growth = {
        "time": slope([r["people"] for r in rows], [r["ours_s"] for r in rows]),
        "memory": slope([r["people"] for r in rows], [r["ours_peak_mib"] for r in rows]),
    }
    if growth["time"] is not None and growth["memory"] is not None:
        print(f"\ngrowth (log-log slope over the sizes): time N^{growth['time']:.2f}, "
              f"peak memory N^{growth['memory']:.2f}")  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    out = {"hardware": hw, "sizes": rows, "growth": growth, "repeat": args.repeat}
    (RESULTS / "composition_scale.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {RESULTS / 'composition_scale.json'}")
    return 0 if all(math.isfinite(r["ratio"]) for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
