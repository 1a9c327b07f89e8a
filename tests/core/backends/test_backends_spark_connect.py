"""The Spark backend over Spark Connect: a local Connect server
(``SparkSession.builder.remote("local[1]")``, in a child process, since a Python process
holds either a classic or a Connect session) runs ``histogram``, ``count`` and
``write_release`` (a split row, ``missing_as``, a Parquet folder and a table) on a Parquet
file; the results equal the in-process Arrow path's and a plain count of the rows.

Needs pyspark with its ``connect`` extra and Java: missing, skipped locally, a failure
under ``CI=true``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_privacy.core.anonymize.encoding import encode
from airflow_privacy.core.io import read_release
from airflow_privacy.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
IN_CI = os.environ.get("CI", "").lower() == "true"
ROWS = [
    (31, "a", "flu"), (35, "a", "flu"), (35, "a", "flu"), (39, "b", "cold"), (42, "b", None),
    (44, "c", " "), (44, "c", "hiv"), (51, "a", "cold"), (51, "a", "cold"), (51, "a", "cold"),
]  # fmt: skip

CHILD = r"""
import json, sys
from pathlib import Path
import numpy as np
from pyspark.sql import SparkSession
from airflow_privacy.core.anonymize.plan import Recoding
from airflow_privacy.core.backends import spark as backend
from airflow_privacy.core.model import ReleaseSpec

src, work = Path(sys.argv[1]), Path(sys.argv[2])
spark = (
    SparkSession.builder.remote("local[1]")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "1")
    .config("spark.sql.adaptive.enabled", "false")
    .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
    .config("spark.sql.warehouse.dir", str(work / "warehouse"))
    .getOrCreate()
)
out = {"connect": type(spark).__module__}
try:
    backend.histogram(src, ["age", "zip"], "s", spark=spark)
except Exception as exc:
    out["blank_error"] = str(exc)
h = backend.histogram(src, ["age", "zip"], "s", spark=spark, missing_as="?")
enc = h.encoded()
out["histogram"] = [
    [*[c.values[int(c.codes[r])] for c in [*enc.qis, enc.sensitive]], int(w)]
    for r, w in enumerate(enc.row_weights())
]
df = spark.read.parquet(str(src))
out["dataframe"] = type(df).__module__
b = backend.count(df, ReleaseSpec("s", ("zip",)), spark=spark, missing_as="?")
out["count"] = [[*g, v, int(b.counts[i, j])] for i, g in enumerate(b.groups)
                for j, v in enumerate(b.values) if b.counts[i, j]]
labels = {}
group = []
for r in range(enc.rows):
    age = int(enc.qis[0].values[int(enc.qis[0].codes[r])])
    group.append(labels.setdefault((f"{age // 10 * 10}s",), len(labels)))
rec = Recoding(("age",), tuple(labels), np.arange(enc.rows), np.asarray(group),
               np.asarray(h.counts))
out["written"] = backend.write_release(df, h, rec, str(work / "out"), spark=spark,
                                       missing_as="?")
split_row = int(np.argmax(h.counts))
split = Recoding(("bucket",), (("1",), ("2",)), np.asarray([split_row, split_row]),
                 np.asarray([0, 1]), np.asarray([1, int(h.counts[split_row]) - 1]))
out["split_written"] = backend.write_release(src, h, split, "connect_split", mode="table",
                                             spark=spark, missing_as="?")
for name, source in (("out", spark.read.parquet(str(work / "out"))),
                     ("split", "connect_split")):
    cols = ("age",) if name == "out" else ("bucket",)
    c = backend.count(source, ReleaseSpec("s", cols), spark=spark)
    out[name] = [[*g, v, int(c.counts[i, j])] for i, g in enumerate(c.groups)
                 for j, v in enumerate(c.values) if c.counts[i, j]]
spark.stop()
print("RESULT " + json.dumps(out))
"""


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"the Spark Connect test cannot run under CI: {reason}")
    pytest.skip(reason)


def test_backend_over_spark_connect(tmp_path: Path) -> None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        _unavailable("no Java runtime (install openjdk-17-jre-headless)")
    for module in ("pyspark", "grpc", "grpc_status", "zstandard"):
        if importlib.util.find_spec(module) is None:
            _unavailable(f"{module} is not installed (pip install 'airflow-privacy[spark]')")
    src = tmp_path / "src.parquet"
    pq.write_table(
        pa.table(
            {
                "age": pa.array([r[0] for r in ROWS], pa.int64()),
                "zip": pa.array([r[1] for r in ROWS], pa.string()),
                "s": pa.array([r[2] for r in ROWS], pa.string()),
            }
        ),
        src,
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(src), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    got: dict[str, Any] = json.loads(lines[-1][len("RESULT ") :])
    assert got["connect"].startswith("pyspark.sql.connect")
    assert got["dataframe"].startswith("pyspark.sql.connect")
    # the blank cells refused as the file path refuses them
    with pytest.raises(InputError) as arrow_error:
        read_release(src, ["age", "zip"], sensitive="s")
    assert got["blank_error"] == str(arrow_error.value)
    # the histogram: the Arrow path's labels and a plain count of the rows
    enc = encode(
        read_release(src, ["age", "zip"], sensitive="s", missing_as="?"), ["age", "zip"], "s"
    )
    arrow = Counter(
        tuple(c.values[int(c.codes[r])] for c in [*enc.qis, enc.sensitive]) for r in range(enc.rows)
    )
    by_rows = Counter((str(a), z, "?" if s is None or not s.strip() else s) for a, z, s in ROWS)
    assert {tuple(r[:-1]): r[-1] for r in got["histogram"]} == dict(arrow) == dict(by_rows)
    zips: Counter[tuple[str, str]] = Counter()
    decades: Counter[tuple[str, str]] = Counter()
    for (a, z, s), n in by_rows.items():
        zips[(z, s)] += n
        decades[(f"{int(a) // 10 * 10}s", s)] += n
    assert {tuple(r[:-1]): r[-1] for r in got["count"]} == dict(zips)
    assert got["written"] == len(ROWS)
    assert {tuple(r[:-1]): r[-1] for r in got["out"]} == dict(decades)
    # the split: the most frequent tuple, (51, a, cold) x 3, as 1 + 2 records
    assert got["split_written"] == 3
    assert {tuple(r[:-1]): r[-1] for r in got["split"]} == {("1", "cold"): 1, ("2", "cold"): 2}
