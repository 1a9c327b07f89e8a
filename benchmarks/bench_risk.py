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

* **floor without Acero**: ``pyarrow.csv.read_csv``, Arrow's dictionary encoding of each QI
  column, one integer key per row in numpy and ``np.unique``: the same count without
  importing Arrow's Acero engine (``Table.group_by`` imports it: about 0.35 s of a process).

And as whole processes (``--repeat-process``, default 7; the three run alternately, the
median of each; interpreter start-up and imports included, as a user's command pays them):
``python -m airflow_privacy.cli risk ...`` against each floor run as ``python -c``.

Usage: ``.venv/bin/python -m benchmarks.bench_risk [--repeat 5] [--repeat-pycanon 3]
[--repeat-process 7]``.
Results go to ``benchmarks/results/risk.json``; docs/benchmarks.md holds the table.
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import subprocess
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


LEAN_FLOOR = """
import sys
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

def lean_floor(path, qis):
    table = pacsv.read_csv(
        path,
        parse_options=pacsv.ParseOptions(delimiter=";"),
        convert_options=pacsv.ConvertOptions(
            include_columns=qis, column_types={q: pa.string() for q in qis}
        ),
    )
    key = np.zeros(table.num_rows, dtype=np.int64)
    for q in qis:
        enc = pc.dictionary_encode(table.column(q).combine_chunks())
        codes = np.frombuffer(enc.indices.buffers()[1], dtype=np.int32, count=len(enc))
        key = key * len(enc.dictionary) + codes
    return int(np.unique(key).size)
"""
"""The floor without Acero, as source: run in this process and as ``python -c`` (the key's
radix product stays in int64 for these releases: 93 million combinations at most)."""

GROUP_BY_FLOOR = """
import sys
import pyarrow as pa
import pyarrow.csv as pacsv

path, qis = sys.argv[1], sys.argv[2:]
table = pacsv.read_csv(
    path,
    parse_options=pacsv.ParseOptions(delimiter=";"),
    convert_options=pacsv.ConvertOptions(
        include_columns=qis, column_types={q: pa.string() for q in qis}
    ),
)
print(table.group_by(qis).aggregate([([], "count_all")]).num_rows)
"""


@functools.cache
def _lean_floor() -> Callable[[Path, list[str]], int]:
    scope: dict[str, Any] = {}
    exec(LEAN_FLOOR, scope)  # this module's own source text, compiled once
    fn: Callable[[Path, list[str]], int] = scope["lean_floor"]
    return fn


def lean_floor(csv_path: Path, rel: ReleaseDef) -> int:
    return _lean_floor()(csv_path, list(rel.qis))


def processes(csv_path: Path, rel: ReleaseDef, repeat: int) -> dict[str, Any]:
    """The risk command and the two floors as whole processes, run alternately."""
    qis = list(rel.qis)
    ours_argv = [sys.executable, "-m", "airflow_privacy.cli", "risk", str(csv_path),
                 "--delimiter", ";", "--sampling-fraction", FRACTION, "--format", "json",
                 "--quiet"]  # fmt: skip
    for q in qis:
        ours_argv += ["--qi", q]
    lean = LEAN_FLOOR + "\nprint(lean_floor(sys.argv[1], sys.argv[2:]))\n"
    runs: dict[str, list[float]] = {"ours": [], "floor": [], "lean_floor": []}
    argvs = {
        "ours": ours_argv,
        "floor": [sys.executable, "-c", GROUP_BY_FLOOR, str(csv_path), *qis],
        "lean_floor": [sys.executable, "-c", lean, str(csv_path), *qis],
    }
    for argv in argvs.values():  # warm-up: the page cache and the bytecode
        subprocess.run(argv, capture_output=True, check=True)
    for _ in range(repeat):
        for name, argv in argvs.items():
            t0 = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=True)
            runs[name].append(time.perf_counter() - t0)
    return {name: _stats(r) for name, r in runs.items()}


def bench(
    csv_path: Path, rel: ReleaseDef, repeat: int, repeat_pycanon: int, repeat_process: int
) -> dict[str, Any]:
    env = ours(csv_path, rel, True)  # warm-up, and the numbers
    whole = _time(lambda: ours(csv_path, rel, True), repeat)
    no_suda = _time(lambda: ours(csv_path, rel, False), repeat)
    groups = floor(csv_path, rel)
    fl = _time(lambda: floor(csv_path, rel), repeat)
    assert lean_floor(csv_path, rel) == groups
    lean = _time(lambda: lean_floor(csv_path, rel), repeat)
    out: dict[str, Any] = {
        "records": env["release"]["records"],
        "groups": groups,
        "ours_whole": _stats(whole),
        "ours_without_suda": _stats(no_suda),
        "floor": _stats(fl),
        "lean_floor": _stats(lean),
    }
    if repeat_process > 0:
        out["processes"] = processes(csv_path, rel, repeat_process)
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
    ap.add_argument("--repeat-process", type=int, default=7)
    args = ap.parse_args(argv)
    report: dict[str, Any] = {"hardware": hardware(), "fraction": FRACTION, "runs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in RELEASES:
            rel = EIGHT_QIS if name == EIGHT_QIS.name else release_by_name(name)
            path = write_release_csv(rel, Path(tmp) / f"{name}.csv")
            big = replicate_csv(path, Path(tmp) / f"{name}-10x.csv", 10)
            for label, csv_path in ((f"adult {name}", path), (f"10x adult {name}", big)):
                r = bench(csv_path, rel, args.repeat, args.repeat_pycanon, args.repeat_process)
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
        ("floor without Acero (numpy count)", r["lean_floor"]["median_s"]),
        ("ours: risk, whole step", r["ours_whole"]["median_s"]),
        ("ours: risk --no-suda", r["ours_without_suda"]["median_s"]),
    ]
    if "pycanon_k" in r:
        both = r["pycanon_k"]["read_and_check"]["median_s"]
        rows.append(("pyCANON: read_csv + k_anonymity", both))
        rows.append(("pyCANON: k_anonymity alone", r["pycanon_k"]["check"]["median_s"]))
    for what, s in rows:
        print(f"  {what:40s} {s * 1e3:10.1f} ms  {s / fl:6.1f}x floor")
    if "processes" in r:
        p = r["processes"]
        mine = p["ours"]["median_s"]
        print(f"  as processes: risk {mine * 1e3:.0f} ms, floor {p['floor']['median_s'] * 1e3:.0f}"
              f" ms ({mine / p['floor']['median_s']:.2f}x), floor without Acero "
              f"{p['lean_floor']['median_s'] * 1e3:.0f} ms "
              f"({mine / p['lean_floor']['median_s']:.2f}x)")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
