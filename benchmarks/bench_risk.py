"""Time the risk analysis (``airflow-privacy risk``) on Adult and on Adult replicated 10 times,
side by side with the floor (one pyarrow pass: read the CSV and count the groups) and with
pyCANON's nearest model, k-anonymity (the prosecutor's highest risk is ``1 / k``; pyCANON has
no prosecutor/journalist/marketer risk, population uniqueness or SUDA).

Measured, each release (``occupation``, ``occupation-fine`` and Adult's 8 QIs as they are)
on Adult and on 10x Adult (every data row written 10 times):

* **ours, whole step**: the ``risk`` command run in this process (``cli.main``): read, count
  the groups, prosecutor / journalist / marketer risk, population uniqueness (Zayatz, Pitman,
  SNB, Dankar's rule) with a sampling fraction of 0.01, SUDA2 special uniques;
* **ours, without SUDA2** (``--no-suda``): the same minus the row-level SUDA pass;
* **floor**: ``pyarrow.csv.read_csv`` + ``Table.group_by(qis).aggregate(count)``: the one pass
  over the data any risk measure needs;
* **pyCANON, k-anonymity**: ``pandas.read_csv`` + ``pycanon.anonymity.k_anonymity`` in its own
  virtualenv (``benchmarks/pycanon_runner.py``), the reading and the check timed separately.

Usage: ``.venv/bin/python -m benchmarks.bench_risk [--repeat 5] [--repeat-pycanon 3]``.
Results go to ``benchmarks/results/risk.json``; docs/benchmarks.md holds the table.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.bench_classic_vs_pycanon import (
    ROOT,
    ReleaseDef,
    _stats,
    pycanon_python,
    release_by_name,
    run_pycanon,
    write_release_csv,
)
from benchmarks.bench_distribution_vs_pycanon import replicate_csv
from benchmarks.machine import hardware

RESULTS = ROOT / "benchmarks" / "results" / "risk.json"
RELEASES = ("occupation", "occupation-fine", "adult-8-qis")
#: Adult's 8 QIs as they are (12,458 classes, 8,841 of them unique): issue 24's case, where
#: SUDA2 has the most attribute subsets to search
EIGHT_QIS = ReleaseDef(
    "adult-8-qis",
    tuple((q, 0) for q in ("age", "sex", "race", "marital-status", "education",
                           "native-country", "workclass", "salary-class")),
    "occupation",
    "Adult's 8 QIs ungeneralized; occupation sensitive",
)  # fmt: skip
FRACTION = "0.01"


def _time(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def ours(csv_path: Path, rel: ReleaseDef, suda: bool) -> dict[str, Any]:
    """One ``risk`` command in this process; its envelope (for the numbers)."""
    from airflow_privacy.cli import main

    argv = ["risk", str(csv_path), "--delimiter", ";", "--sampling-fraction", FRACTION,
            "--format", "json", "--quiet"]  # fmt: skip
    for q in rel.qis:
        argv += ["--qi", q]
    if not suda:
        argv.append("--no-suda")
    out = io.StringIO()
    code = main(argv, out)
    if code != 0:
        raise RuntimeError(f"risk exited {code}: {out.getvalue()[-2000:]}")
    envelope: dict[str, Any] = json.loads(out.getvalue())
    return envelope


def floor(csv_path: Path, rel: ReleaseDef) -> int:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(
        csv_path,
        parse_options=pacsv.ParseOptions(delimiter=";"),
        convert_options=pacsv.ConvertOptions(
            include_columns=rel.qis, column_types={q: pa.string() for q in rel.qis}
        ),
    )
    groups = table.group_by(rel.qis).aggregate([([], "count_all")])
    return int(groups.num_rows)


def bench(csv_path: Path, rel: ReleaseDef, repeat: int, repeat_pycanon: int) -> dict[str, Any]:
    env = ours(csv_path, rel, True)  # warm-up, and the numbers
    whole = _time(lambda: ours(csv_path, rel, True), repeat)
    no_suda = _time(lambda: ours(csv_path, rel, False), repeat)
    groups = floor(csv_path, rel)
    fl = _time(lambda: floor(csv_path, rel), repeat)
    out: dict[str, Any] = {
        "records": env["release"]["records"],
        "groups": groups,
        "ours_whole": _stats(whole),
        "ours_without_suda": _stats(no_suda),
        "floor": _stats(fl),
    }
    python = pycanon_python()
    if python is not None and repeat_pycanon > 0:
        raw = run_pycanon(python, csv_path, rel, repeat=repeat_pycanon, criteria=("k",))
        k = raw["results"]["k_anonymity"]
        total = [r + c for r, c in zip(raw["read_seconds"], k["seconds"], strict=True)]
        out["pycanon_k"] = {
            "value": k["value"],
            "read_and_check": _stats(total),
            "check": _stats(k["seconds"]),
        }
        smallest = min(_sizes(env))
        assert k["value"] == smallest, (k["value"], smallest)  # the same smallest group
    return out


def _sizes(env: dict[str, Any]) -> list[int]:
    hist = env["details"]["class_sizes"]
    return [int(h["size"]) for h in hist if int(h["groups"]) > 0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="risk analysis vs the floor and pyCANON")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--repeat-pycanon", type=int, default=3)
    args = ap.parse_args(argv)
    report: dict[str, Any] = {"hardware": hardware(), "fraction": FRACTION, "runs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in RELEASES:
            rel = EIGHT_QIS if name == EIGHT_QIS.name else release_by_name(name)
            path = write_release_csv(rel, Path(tmp) / f"{name}.csv")
            big = replicate_csv(path, Path(tmp) / f"{name}-10x.csv", 10)
            for label, csv_path in ((f"adult {name}", path), (f"10x adult {name}", big)):
                r = bench(csv_path, rel, args.repeat, args.repeat_pycanon)
                report["runs"][label] = r
                _print(label, rel, r)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nresults: {RESULTS}")
    return 0


def _print(label: str, rel: ReleaseDef, r: dict[str, Any]) -> None:
    fl = r["floor"]["median_s"]
    print(f"\n== {label}: {r['records']:,} records, {r['groups']:,} groups, QIs {rel.qis}")
    rows = [
        ("floor (pyarrow read + group_by)", fl),
        ("ours: risk, whole step", r["ours_whole"]["median_s"]),
        ("ours: risk --no-suda", r["ours_without_suda"]["median_s"]),
    ]
    if "pycanon_k" in r:
        both = r["pycanon_k"]["read_and_check"]["median_s"]
        rows.append(("pyCANON: read_csv + k_anonymity", both))
        rows.append(("pyCANON: k_anonymity alone", r["pycanon_k"]["check"]["median_s"]))
    for what, s in rows:
        print(f"  {what:40s} {s * 1e3:10.1f} ms  {s / fl:6.1f}x floor")


if __name__ == "__main__":
    sys.exit(main())
