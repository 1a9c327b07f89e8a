"""The Spark backend in local mode against the in-process backends, on Adult and on an
Adult-shaped Parquet file of 10^6 rows (Adult's records sampled with replacement, seeded:
:func:`benchmarks.bench_backends.generate`).

One process, one local SparkSession (``local[2]``, two shuffle partitions, no UI): its
start-up (the JVM) is reported apart, and one warm-up query runs before the timings (the
first query of a session also loads Spark's classes). Then, per file, the best of
``--repeat`` runs of:

* **spark histogram**: :func:`airflow_privacy.core.backends.spark.histogram` of the seven
  QIs and the sensitive column (the anonymizers' input);
* **spark count**: :func:`airflow_privacy.core.backends.spark.count` (the ``check`` step's
  per-group counts), and the same counts by the DuckDB and the Arrow backends;
* **spark write**: :func:`airflow_privacy.core.backends.spark.write_release` of a fixed
  recoding (age to its decade, the other QIs kept), as a Parquet folder.

Usage: ``.venv/bin/python -m benchmarks.bench_spark [--rows 1000000] [--repeat 3]``.
Prints one JSON document (pyspark and a Java runtime needed).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.bench_backends import ADULT, GROUPS, SENSITIVE, generate


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return round(min(times), 3)


def decades(hist: Any) -> Any:
    """Age to its decade, the other QIs kept: one group per distinct generalized tuple."""
    from airflow_privacy.core.anonymize.plan import Recoding

    enc = hist.encoded()
    groups: dict[tuple[str, ...], int] = {}
    group = np.empty(enc.rows, dtype=np.int64)
    for r in range(enc.rows):
        labels = [c.values[int(c.codes[r])] for c in enc.qis]
        low = int(labels[0]) // 10 * 10
        key = (f"{low}-{low + 9}", *labels[1:])
        group[r] = groups.setdefault(key, len(groups))
    return Recoding(
        tuple(GROUPS),
        tuple(groups),
        np.arange(enc.rows, dtype=np.int64),
        group,
        np.asarray(hist.counts, dtype=np.int64),
    )


def measure(spark: Any, path: Path, repeat: int, work: Path) -> dict[str, Any]:
    from airflow_privacy.core.backends import ArrowBackend
    from airflow_privacy.core.backends import spark as backend
    from airflow_privacy.core.backends.duck import DuckDBBackend
    from airflow_privacy.core.model import ReleaseSpec

    spec = ReleaseSpec(SENSITIVE, tuple(GROUPS))
    hist = backend.histogram(path, GROUPS, SENSITIVE, spark=spark)
    recoding = decades(hist)
    runs = iter(range(10**6))

    def write() -> None:
        target = work / f"out{next(runs)}"
        backend.write_release(path, hist, recoding, str(target), spark=spark)
        shutil.rmtree(target)

    return {
        "rows": hist.records,
        "distinct_tuples": hist.keys.num_rows,
        "groups_written": len(recoding.labels),
        "spark_histogram_s": best(
            lambda: backend.histogram(path, GROUPS, SENSITIVE, spark=spark), repeat
        ),
        "spark_count_s": best(lambda: backend.count(path, spec, spark=spark), repeat),
        "duckdb_count_s": best(lambda: DuckDBBackend().count(path, spec), repeat),
        "arrow_count_s": best(lambda: ArrowBackend().count(path, spec), repeat),
        "spark_write_s": best(write, repeat),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import pyarrow.parquet as pq
    from pyspark.sql import SparkSession

    from airflow_privacy.core.io import read_release

    work = Path(tempfile.mkdtemp(prefix="bench-spark-"))
    try:
        adult = work / "adult.parquet"
        pq.write_table(read_release(ADULT, [*GROUPS, SENSITIVE]), adult)
        big = work / "big.parquet"
        generate(big, args.rows)
        t = time.perf_counter()
        spark = (
            SparkSession.builder.master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.warehouse.dir", str(work / "warehouse"))
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        started = time.perf_counter() - t
        t = time.perf_counter()
        spark.read.parquet(str(adult)).groupBy("sex").count().collect()
        warm = time.perf_counter() - t
        out = {
            "spark": spark.version,
            "session_start_s": round(started, 3),
            "first_query_s": round(warm, 3),
            "adult": measure(spark, adult, args.repeat, work),
            f"generated_{args.rows}": measure(spark, big, args.repeat, work),
        }
        spark.stop()
        print(json.dumps(out, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
