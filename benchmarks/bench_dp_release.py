"""A DP release of Adult's marginals at scale, side by side with the plain ``GROUP BY``, and
its utility against the k-anonymous release of the same data.

Data: UCI Adult's 30,162 records resampled with replacement to each size, each value taken
from another record 3 times in 10 (Parquet; each column's distribution is Adult's, and the
combinations keep growing with the size, as real data's do: a plain resample would only
repeat Adult's records, which k-anonymity passes without generalizing anything). Queries:
every 1- and 2-way marginal over the 8 QIs and the sensitive column (occupation): 9 + 36 =
45 marginals over the bundled hierarchies' values.

* **ours**: ``dp-release`` through the gate layer (``DP_RELEASE.run``): the bounded count in
  DuckDB, the count vectors, OpenDP's discrete Gaussian at rho = 1 over all 45 marginals,
  the ledger transaction that records the spend, the file written: wall time;
* **floor**: one DuckDB ``GROUP BY`` of the 9 columns over the same file (the smallest query
  that reads what every marginal needs): wall time. Both in one warm process, alternating,
  the best of ``--repeat``;
* **utility**: the mean absolute error per cell of the same 45 marginals, (a) from the DP
  release (its noisy counts, its consistent estimates, and the counts shown: the estimates
  rounded, never below zero), (b) from the
  k-anonymous release the lattice anonymizer chooses for k = 5 over the 8 QIs at that size
  (full-domain generalization, no suppression), answered by spreading each generalized
  label's count uniformly over the values it covers (a user of the release has no better
  estimate). The true counts are the same bounded count without noise.

Usage: ``.venv/bin/python -m benchmarks.bench_dp_release [--sizes 1000000 10000000]
[--repeat 3] [--rho 1.0]``. Writes ``benchmarks/results/dp_release.json``. Hardware in
``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.machine import hardware

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
SENSITIVE = "occupation"


def generate(n: int, path: Path) -> None:
    from airflow_privacy.core.datasets import load_adult

    adult = load_adult()
    rng = np.random.default_rng(n)
    first = rng.integers(0, adult.num_rows, n)
    second = rng.integers(0, adult.num_rows, n)
    columns = {}
    for c in adult.column_names:
        # each value from the record itself, or (3 times in 10) from another record: the
        # columns' distributions are Adult's, their combinations keep growing with the size
        # (a plain resample repeats Adult's 30,162 records, which any k-anonymity passes)
        rows = np.where(rng.random(n) < 0.3, second, first)
        columns[c] = adult.column(c).dictionary_encode().take(pa.array(rows))
    pq.write_table(pa.table(columns), path)


def marginals(columns: list[str]) -> list[tuple[str, ...]]:
    return [(c,) for c in columns] + list(itertools.combinations(columns, 2))


def floor(path: Path, columns: list[str]) -> float:
    import duckdb

    cols = ", ".join(f'"{c}"' for c in columns)
    con = duckdb.connect()
    t0 = time.perf_counter()
    con.sql(
        f"SELECT {cols}, count(*) FROM read_parquet(?) GROUP BY ALL", params=[str(path)]
    ).arrow()
    dt = time.perf_counter() - t0
    con.close()
    return dt


def ours(path: Path, folder: Path, columns: list[str], rho: float, i: str) -> tuple[float, Path]:
    from airflow_privacy.core.datasets import adult_hierarchy_path
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.refs import ReleaseRef
    from airflow_privacy.gate.steps.dp_release import DP_RELEASE

    out = folder / f"dp-{i}.csv"
    values = {
        "source": ReleaseRef(path=str(path)), "dataset": i,
        "marginals": [",".join(m) for m in marginals(columns)],
        "keys": {c: str(adult_hierarchy_path(c)) for c in columns}, "rho": rho,
        "out": str(out), "ledger": f"sqlite:///{folder / 'ledger.db'}",
    }  # fmt: skip
    t0 = time.perf_counter()
    env = DP_RELEASE.run(DP_RELEASE.request(values), GateContext())
    dt = time.perf_counter() - t0
    assert env.safe is True, env.summary
    return dt, out


def truth(path: Path, columns: list[str]) -> dict[tuple[str, ...], np.ndarray]:
    from airflow_privacy.core.backends.duck import bounded_counts
    from airflow_privacy.core.datasets import adult_hierarchies
    from airflow_privacy.core.dp.marginals import Marginal, count_vectors

    keys = {c: list(h.values) for c, h in adult_hierarchies().items() if c in columns}
    ms = marginals(columns)
    table, counts = bounded_counts(path, columns)
    vectors = count_vectors(table, counts, [Marginal(m) for m in ms], keys)
    return dict(zip(ms, vectors, strict=True))


def kanon_answers(
    path: Path, columns: list[str], true: dict[tuple[str, ...], np.ndarray]
) -> tuple[dict[tuple[str, ...], np.ndarray], dict[str, int]]:
    """The k = 5 lattice release's answers (module doc), from the true counts and the node."""
    from airflow_privacy.core.anonymize import anonymize_histogram
    from airflow_privacy.core.backends.duck import DuckDBBackend
    from airflow_privacy.core.datasets import adult_hierarchies

    qis = [c for c in columns if c != SENSITIVE]
    hier = adult_hierarchies()
    hist = DuckDBBackend().histogram(path, qis, SENSITIVE)
    result = anonymize_histogram(hist, "lattice", [("k-anonymity", {"k": 5})],
                                 {q: hier[q] for q in qis})  # fmt: skip
    levels: dict[str, int] = dict(result.manifest.to_dict()["details"]["levels"])
    assert result.manifest.to_dict()["suppressed"] == 0
    # per column: each value's label at its level and how many values the label covers
    block: dict[str, np.ndarray] = {}
    for c in columns:
        values = list(hier[c].values)
        if c == SENSITIVE:
            block[c] = np.arange(len(values))
            continue
        labels = [hier[c].levels[levels[c]][v] for v in values]
        ids = {lab: i for i, lab in enumerate(dict.fromkeys(labels))}
        block[c] = np.array([ids[lab] for lab in labels])
    out = {}
    for m, vec in true.items():
        shape = [len(block[c]) for c in m]
        grid = vec.reshape(shape).astype(float)
        # the release's count of each label block, spread evenly over the block's cells
        sums: dict[tuple[int, ...], float] = {}
        sizes: dict[tuple[int, ...], int] = {}
        for idx in itertools.product(*[range(s) for s in shape]):
            key = tuple(int(block[c][i]) for c, i in zip(m, idx, strict=True))
            sums[key] = sums.get(key, 0.0) + grid[idx]
            sizes[key] = sizes.get(key, 0) + 1
        est = np.empty(shape)
        for idx in itertools.product(*[range(s) for s in shape]):
            key = tuple(int(block[c][i]) for c, i in zip(m, idx, strict=True))
            est[idx] = sums[key] / sizes[key]
        out[m] = est.reshape(-1)
    return out, levels


def dp_answers(out: Path, columns: list[str]) -> tuple[dict[tuple[str, ...], Any], ...]:
    import pyarrow.csv as pacsv

    t = pacsv.read_csv(out, convert_options=pacsv.ConvertOptions(strings_can_be_null=True))
    name = np.array(t.column("marginal").to_pylist())
    raw, shown = t.column("noisy_count").to_numpy(), t.column("count").to_numpy()
    fitted = t.column("estimate").to_numpy()
    noisy, clamped, consistent = {}, {}, {}
    for m in marginals(columns):
        sel = name == " x ".join(m)
        noisy[m], clamped[m] = raw[sel].astype(float), shown[sel].astype(float)
        consistent[m] = fitted[sel].astype(float)
    return noisy, clamped, consistent


def mae(est: dict[tuple[str, ...], Any], true: dict[tuple[str, ...], np.ndarray]) -> float:
    err = np.concatenate([np.abs(est[m] - true[m].astype(float)) for m in true])
    return float(err.mean())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rho", type=float, default=1.0)
    args = ap.parse_args()
    from airflow_privacy.core.datasets import load_adult

    columns = [c for c in load_adult().column_names]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for n in args.sizes:
            path = folder / f"adult-{n}.parquet"
            generate(n, path)
            floors, mine = [], []
            out = None
            for i in range(args.repeat):
                dataset = f"bench-{n}-{i}"
                _policy(f"sqlite:///{folder / 'ledger.db'}", dataset, args.rho)
                floors.append(floor(path, columns))
                dt, out = ours(path, folder, columns, args.rho, dataset)
                mine.append(dt)
            assert out is not None
            true = truth(path, columns)
            noisy, clamped, consistent = dp_answers(out, columns)
            kanon, levels = kanon_answers(path, columns, true)
            cells = sum(len(v) for v in true.values())
            row = {
                "rows": n, "marginals": len(true), "cells": cells,
                "floor_seconds": min(floors), "dp_seconds": min(mine),
                "ratio": min(mine) / min(floors),
                "mae_dp_noisy": mae(noisy, true), "mae_dp_estimate": mae(consistent, true),
                "mae_dp_shown": mae(clamped, true),
                "mae_kanon": mae(kanon, true), "kanon_levels": levels,
                "mean_true_count": float(np.mean(np.concatenate(list(true.values())))),
            }  # fmt: skip
            rows.append(row)
            print(json.dumps(row))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "dp_release.json").write_text(
        json.dumps({"hardware": hardware(), "rho": args.rho, "rows": rows}, indent=2)
    )


def _policy(url: str, dataset: str, rho: float) -> None:
    """The dataset's policy: a DP budget of ``rho`` (one release spends it)."""
    from airflow_privacy.gate.policy import Policy
    from airflow_privacy.ledger import ReleaseLedger

    with ReleaseLedger(url, create=True) as db:
        db.set_policy(dataset, Policy(dp={"unit": "rho", "cap": rho}).to_dict(), by="bench",
                      reason="benchmark", loosens=lambda _cur: [])  # fmt: skip


if __name__ == "__main__":
    main()
