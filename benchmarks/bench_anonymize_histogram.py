"""The lattice anonymizer on Adult from the table and from its histogram.

Adult (30,162 records), the 8 QIs and cases of ``bench_lattice.py`` (Occupation sensitive,
ARX hierarchies). For each case, in one process:

* **table**: ``anonymize(table, ..., "lattice")``: the in-process histogram, the decision,
  the recoding applied with Arrow and the written release counted again;
* **histogram**: ``anonymize_histogram(histogram)``: the decision alone, from the
  histogram of distinct (QI..., sensitive) tuples (what a push-down backend hands over);
* **count**: the in-process histogram itself (``apply.table_histogram``).

Both must publish the same node with the same manifest (asserted). Times are the best of
``--repeat`` runs. Also reported: the histogram's size (distinct tuples) for 3, 5 and 8 QIs.

Usage: ``.venv/bin/python -m benchmarks.bench_anonymize_histogram [--repeat 3]``. Writes
``benchmarks/results/anonymize_histogram.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from airflow_privacy.core.anonymize import AnonymizationResult, anonymize, anonymize_histogram
from airflow_privacy.core.anonymize.apply import table_histogram
from airflow_privacy.core.datasets import adult_hierarchies, load_adult
from benchmarks.bench_lattice import CASES, QIS
from benchmarks.machine import hardware
from benchmarks.timing import best_time

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "anonymize_histogram.json"
SENSITIVE = "occupation"


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "elapsed_seconds"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    table = load_adult()
    every = adult_hierarchies()
    h = {q: every[q] for q in QIS}
    qis = list(QIS)
    sizes = {}
    for n in (3, 5, len(qis)):
        hist, _ = table_histogram(table, qis[:n], SENSITIVE)
        sizes[n] = hist.keys.num_rows
    count_s, (hist, _) = best_time(lambda: table_histogram(table, qis, SENSITIVE), args.repeat)
    rows = []
    for name, criteria, limit in CASES:

        def from_table(c: Any = criteria, x: float = limit) -> AnonymizationResult:
            return anonymize(table, qis, SENSITIVE, "lattice", c, h, suppression_limit=x)

        def from_histogram(c: Any = criteria, x: float = limit) -> AnonymizationResult:
            return anonymize_histogram(hist, "lattice", c, h, suppression_limit=x)

        table_s, a = best_time(from_table, args.repeat)
        hist_s, b = best_time(from_histogram, args.repeat)
        assert _strip(a.manifest.to_dict()) == _strip(b.manifest.to_dict()), name
        row = {
            "case": name,
            "levels": a.manifest.details["levels"],
            "table_ms": round(table_s * 1e3, 1),
            "histogram_ms": round(hist_s * 1e3, 1),
            "count_ms": round(count_s * 1e3, 1),
        }
        rows.append(row)
        print(
            f"{name}: table {row['table_ms']} ms, histogram {row['histogram_ms']} ms "
            f"(counting the histogram {row['count_ms']} ms)"
        )
    print(f"histogram rows: {sizes} of {table.num_rows} records")
    out = {"hardware": hardware(), "qis": qis, "records": table.num_rows,
           "histogram_rows": sizes, "rows": rows}  # fmt: skip
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
