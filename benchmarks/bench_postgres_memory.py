"""PostgreSQL end to end, the core part: the anonymizer's memory does not grow with the rows.

An Adult-shaped table of N rows (Adult's 30,162 records sampled with replacement, seeded;
``age`` an INTEGER column, the others TEXT) is loaded into PostgreSQL with ``COPY`` from a
generated CSV. Then, in a fresh process (its peak resident set size, ``ru_maxrss`` from
``os.wait4``, is its own), the steps of an anonymization that the SQL backend
(:mod:`airflow_privacy.core.backends.sql`) pushes down:

1. ``histogram``: ``GROUP BY`` the seven QIs and the sensitive column in PostgreSQL; only the
   distinct tuples and their counts come back (at most Adult's distinct tuples, whatever N);
2. the decision: ``--shape lattice`` (default first) the lattice search itself
   (:func:`airflow_privacy.core.anonymize.anonymize_histogram`, 5-anonymity over Adult's ARX
   hierarchies with 1% suppression); ``generalize``, a fixed level of those hierarchies with
   groups of fewer than k = 5 records suppressed; ``split``, a bucketization-shaped recoding
   (every tuple's records dealt over 8 buckets, so records of one tuple are numbered with
   ``ROW_NUMBER``); each a :class:`~airflow_privacy.core.anonymize.plan.Recoding`;
3. ``write_release``: the release created in PostgreSQL (mapping table joined to the source,
   one transaction);
4. ``count``: the release re-counted by PostgreSQL (``GROUP BY`` its group columns and the
   sensitive column) and compared with what the recoding decided.

Usage: ``.venv/bin/python -m benchmarks.bench_postgres_memory --url
postgresql+psycopg://USER:PASSWORD@HOST/DB [--rows 100000 10000000] [--shape lattice
generalize split]``. Without ``--url``, ``AIRFLOW_PRIVACY_BENCH_PG_URL``. Writes
``benchmarks/results/postgres_memory.json``; docs/warehouses.md has the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.machine import hardware

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "airflow_privacy" / "data" / "adult" / "adult.csv.gz"
RESULTS = ROOT / "benchmarks" / "results" / "postgres_memory.json"
QIS = ["age", "sex", "race", "marital-status", "education", "native-country", "workclass"]
SENSITIVE = "occupation"
LEVELS = {"age": 2, "sex": 0, "race": 1, "marital-status": 1, "education": 1,
          "native-country": 1, "workclass": 1}  # fmt: skip
K = 5
BUCKETS = 8
CHUNK = 1_000_000


def load(url: str, table: str, rows: int, seed: int = 2007) -> float:
    """Create ``table`` with ``rows`` sampled Adult records (COPY from a CSV file); returns
    the seconds taken."""
    import numpy as np
    import psycopg
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import sqlalchemy as sa

    from airflow_privacy.core.io import read_release

    start = time.perf_counter()
    adult = read_release(ADULT, [*QIS, SENSITIVE])
    adult = adult.set_column(0, "age", adult.column("age").cast(pa.int64()))
    rng = np.random.default_rng(seed)
    md = sa.MetaData()
    t = sa.Table(table, md, *[sa.Column(c, sa.Integer if c == "age" else sa.Text)
                              for c in adult.column_names])  # fmt: skip
    engine = sa.create_engine(url)
    with engine.begin() as sa_conn:
        t.drop(sa_conn, checkfirst=True)
        t.create(sa_conn)
    engine.dispose()
    u = sa.engine.make_url(url)
    cols = ", ".join('"' + c.replace('"', '""') + '"' for c in adult.column_names)
    with tempfile.TemporaryDirectory(prefix="bench-pg-") as folder:
        path = Path(folder) / "adult.csv"
        with pacsv.CSVWriter(path, adult.schema) as writer:
            done = 0
            while done < rows:
                n = min(CHUNK, rows - done)
                writer.write_table(adult.take(rng.integers(0, adult.num_rows, n)))
                done += n
        with psycopg.connect(
            host=u.host, port=u.port or 5432, user=u.username, password=u.password,
            dbname=u.database,
        ) as conn, conn.cursor() as cur:  # fmt: skip
            with (
                cur.copy(
                    f'COPY "{table}" ({cols}) FROM STDIN WITH (FORMAT csv, HEADER true)'
                ) as copy,
                path.open("rb") as fh,
            ):
                while block := fh.read(1 << 20):
                    copy.write(block)
            cur.execute(f'ANALYZE "{table}"')
    return time.perf_counter() - start


def recoding_of(h: Any, shape: str) -> Any:
    """The decision (module doc): a fixed hierarchy level with small groups suppressed, or
    every tuple dealt over :data:`BUCKETS` buckets."""
    from collections import Counter

    import numpy as np

    from airflow_privacy.core.anonymize.plan import Recoding
    from airflow_privacy.core.datasets import adult_hierarchies

    if shape == "lattice":  # the lattice search itself, from the histogram
        from airflow_privacy.core.anonymize import anonymize_histogram

        hier = {q: v for q, v in adult_hierarchies().items() if q in QIS}
        result = anonymize_histogram(h, "lattice", [("k-anonymity", {"k": K})], hier,
                                     suppression_limit=0.01)  # fmt: skip
        return result.recoding
    enc = h.encoded()
    w = enc.row_weights()
    if shape == "split":
        rows, groups, counts = [], [], []
        turn = 0
        for r, c in enumerate(w.tolist()):
            per = [c // BUCKETS + (1 if (b - turn) % BUCKETS < c % BUCKETS else 0)
                   for b in range(BUCKETS)]  # fmt: skip
            turn = (turn + c) % BUCKETS
            for b, n in enumerate(per):
                if n:
                    rows.append(r)
                    groups.append(b)
                    counts.append(n)
        return Recoding(
            ("bucket",), tuple((f"B{b}",) for b in range(BUCKETS)),
            np.asarray(rows, np.int64), np.asarray(groups, np.int64),
            np.asarray(counts, np.int64),
        )  # fmt: skip
    hier = adult_hierarchies()
    cols = []
    for q in enc.qis:
        mapped = [hier[q.name].generalize_value(v, LEVELS[q.name]) for v in q.values]
        cols.append([mapped[int(c)] for c in q.codes])
    keys = list(zip(*cols, strict=True))
    size: Counter[tuple[str, ...]] = Counter()
    for r, k in enumerate(keys):
        size[k] += int(w[r])
    group_of = {k: i for i, k in enumerate(sorted(k for k, n in size.items() if n >= K))}
    rows = [r for r, k in enumerate(keys) if k in group_of]
    return Recoding(
        enc.qi_names, tuple(group_of), np.asarray(rows, np.int64),
        np.asarray([group_of[keys[r]] for r in rows], np.int64),
        np.asarray([int(w[r]) for r in rows], np.int64),
    )  # fmt: skip


def child(url: str, table: str, shape: str) -> None:
    """One measurement in its own process; prints JSON."""
    import sqlalchemy as sa

    from airflow_privacy.core.backends import sql
    from airflow_privacy.core.model import ReleaseSpec

    def rss() -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    engine = sa.create_engine(url)
    out: dict[str, Any] = {"imports_peak_rss_mib": rss()}
    t = time.perf_counter()
    h = sql.histogram(engine, table, QIS, SENSITIVE)
    out.update(histogram_seconds=time.perf_counter() - t, histogram_rows=int(h.counts.shape[0]),
               records=h.records, histogram_peak_rss_mib=rss())  # fmt: skip
    t = time.perf_counter()
    rec = recoding_of(h, shape)
    out.update(decision_seconds=time.perf_counter() - t, groups=len(rec.labels),
               recoding_entries=int(rec.row.shape[0]), decision_peak_rss_mib=rss())  # fmt: skip
    t = time.perf_counter()
    target = f"{table}_release"
    written = sql.write_release(engine, table, h, rec, target)
    out.update(write_seconds=time.perf_counter() - t, written=written,
               write_peak_rss_mib=rss())  # fmt: skip
    t = time.perf_counter()
    b = sql.count(engine, target, ReleaseSpec(sensitive=SENSITIVE, group_columns=rec.columns))
    out.update(count_seconds=time.perf_counter() - t, count_peak_rss_mib=rss())
    # the re-count equals the recoding's per-group counts
    assert int(b.counts.sum()) == written == rec.records
    per_group = dict(zip(b.groups, b.counts.sum(axis=1).tolist(), strict=True))
    want: dict[tuple[str, ...], int] = {}
    for g, c in zip(rec.group.tolist(), rec.count.tolist(), strict=True):
        want[rec.labels[g]] = want.get(rec.labels[g], 0) + c
    assert per_group == want, "the re-count differs from the recoding"
    with engine.begin() as conn:
        conn.execute(sa.text(f'DROP TABLE "{target}"'))
    engine.dispose()
    print(json.dumps(out))


def measure(url: str, table: str, shape: str) -> dict[str, Any]:
    argv = [sys.executable, "-m", "benchmarks.bench_postgres_memory", "--child", table, shape,
            "--url", url]  # fmt: skip
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read() if proc.stdout else b""
    err = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"measurement failed: {err.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    result.update(process_seconds=time.perf_counter() - start, peak_rss_mib=usage.ru_maxrss / 1024)
    return result


def _run(*argv: str, url: str) -> str:
    """This script in a subprocess; its last line of output."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_postgres_memory", *argv, "--url", url],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    lines = proc.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("AIRFLOW_PRIVACY_BENCH_PG_URL"))
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 10_000_000])
    parser.add_argument("--shape", nargs="+", default=["lattice", "generalize", "split"],
                        choices=("lattice", "generalize", "split"))  # fmt: skip
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--child", nargs=2, metavar=("TABLE", "SHAPE"))
    parser.add_argument("--keep", action="store_true", help="keep the loaded tables")
    parser.add_argument("--load", nargs=2, metavar=("TABLE", "ROWS"))
    parser.add_argument("--drop", metavar="TABLE")
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("give --url or set AIRFLOW_PRIVACY_BENCH_PG_URL")
    if args.child:
        child(args.url, *args.child)
        return 0
    if args.load:
        print(json.dumps(load(args.url, args.load[0], int(args.load[1]))))
        return 0
    if args.drop:
        import sqlalchemy as sa

        engine = sa.create_engine(args.url)
        with engine.begin() as conn:
            conn.execute(sa.text(f'DROP TABLE IF EXISTS "{args.drop}"'))
        engine.dispose()
        return 0
    runs = []
    for rows in args.rows:
        table = f"adult_{rows}"
        # loading and dropping in subprocesses: on Linux a child's peak RSS starts at its
        # parent's (fork copies the high-water mark), so this process stays small
        seconds = float(_run("--load", table, str(rows), url=args.url))
        print(f"{rows:,} rows loaded (COPY) in {seconds:.1f} s", flush=True)
        for shape in args.shape:
            r = measure(args.url, table, shape)
            runs.append({"rows": rows, "shape": shape, "load_seconds": seconds, **r})
            print(f"  {shape:10} histogram {r['histogram_rows']:,} rows "
                  f"{r['histogram_seconds']:.2f} s, write {r['written']:,} records "
                  f"{r['write_seconds']:.2f} s, count {r['count_seconds']:.2f} s; "
                  f"peak RSS {r['peak_rss_mib']:.0f} MiB", flush=True)  # fmt: skip
        if not args.keep:
            _run("--drop", table, url=args.url)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"hardware": hardware(), "runs": runs}, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
