"""The release ledger's write and read paths on a realistic release.

A Mondrian k = 5 release of 15,000 Adult records (about 1,500 groups) with 15,000 identifier
hashes: ``record`` (one transaction, bulk executemany inserts), recording it again
(idempotent: one indexed lookup), reading the groups back and the identifier hashes. The
baseline is the same write done the obvious ORM way: one ``session.add`` per group and per
hash in one transaction. SQLite always; PostgreSQL too when ``AIRFLOW_PRIVACY_BENCH_PG_URL``
names a database the benchmark may write to (tables are created by the ledger).

Usage: ``python -m benchmarks.bench_composition_ledger``. Writes
``benchmarks/results/composition_ledger.json``.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from sqlalchemy import delete
from sqlalchemy.orm import Session

from airflow_privacy.core.anonymize import anonymize
from airflow_privacy.core.composition import PublishedRelease
from airflow_privacy.core.datasets import ADULT_QIS, adult_hierarchies, load_adult
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.ledger.models import GroupRow, MemberRow, ReleaseRow
from benchmarks.machine import hardware

KEY = b"benchmark-only-key-0123456789abcdefghijklmnop"  # >= 32 bytes, >= 10 distinct
REPEAT = 3


def release() -> tuple[PublishedRelease, list[str]]:
    table = load_adult()
    rows = np.random.default_rng(0).permutation(table.num_rows)[:15_000]
    h = adult_hierarchies()
    res = anonymize(
        table.take(pa.array(rows)),
        list(ADULT_QIS),
        "occupation",
        method="mondrian",
        criteria=[("k-anonymity", {"k": 5})],
        hierarchies={q: h[q] for q in ADULT_QIS if q != "age"},
    )
    rel = PublishedRelease.from_arrow(res.release, ADULT_QIS, "occupation", name="adult")
    return rel, [f"person-{i}" for i in rows.tolist()]


def orm_baseline(ledger: ReleaseLedger, rel: PublishedRelease, hashes: list[str]) -> float:
    """The obvious ORM write: one object per group and per hash, one transaction."""
    t0 = time.perf_counter()
    now = datetime.now(UTC)
    with Session(ledger.engine) as s, s.begin():
        row = ReleaseRow(
            uuid=str(uuid.uuid4()),
            dataset="baseline",
            version="1",
            created_at=now,
            updated_at=now,
            status="published",
            kind=rel.kind,
            sensitive=rel.sensitive,
            qis=list(rel.qis),
            spec=None,
            manifest=None,
            criteria=None,
            reasons=[],
            content_hash=rel.content_hash(),
            n_records=rel.n_records,
            n_groups=rel.n_groups,
            n_members=len(hashes),
            key_fingerprint=None,
        )
        s.add(row)
        s.flush()
        for g, rec in enumerate(rel.group_records()):
            s.add(
                GroupRow(
                    release_id=row.id,
                    position=g,
                    descriptor=rec["descriptor"],
                    size=rec["size"],
                    sensitive=rec["sensitive"],
                )
            )
        for h in hashes:
            s.add(MemberRow(release_id=row.id, id_hash=h))
    elapsed = time.perf_counter() - t0
    with Session(ledger.engine) as s, s.begin():
        s.execute(delete(MemberRow))
        s.execute(delete(GroupRow))
        s.execute(delete(ReleaseRow).where(ReleaseRow.dataset == "baseline"))
    return elapsed


def measure(url: str, rel: PublishedRelease, ids: list[str]) -> dict[str, Any]:
    ledger = ReleaseLedger(url, hash_key=KEY)
    hashes = ledger.hash_identifiers(ids)
    base, ours, again, read, members = [], [], [], [], []
    for i in range(REPEAT):
        base.append(orm_baseline(ledger, rel, hashes))
        t0 = time.perf_counter()
        info = ledger.record(f"adult-{i}", rel, member_hashes=hashes, status="published")
        ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        assert not ledger.record(f"adult-{i}", rel, member_hashes=hashes).created
        again.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        back = ledger.release(info.id)
        read.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        got = ledger.member_hashes(info.id)
        members.append(time.perf_counter() - t0)
        assert back.content_hash() == info.content_hash  # the content alone (revision 0005)
        assert got is not None and len(got) == len(hashes)
    ledger.close()
    return {
        "orm_baseline_s": statistics.median(base),
        "record_s": statistics.median(ours),
        "ratio": statistics.median(base) / statistics.median(ours),
        "record_again_s": statistics.median(again),
        "read_groups_s": statistics.median(read),
        "read_hashes_s": statistics.median(members),
    }


def main() -> None:
    rel, ids = release()
    print(f"release: {rel.n_records:,} records, {rel.n_groups:,} groups, {len(ids):,} identifiers")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        results["sqlite"] = measure(f"sqlite:///{Path(tmp) / 'bench.db'}", rel, ids)
    pg = os.environ.get("AIRFLOW_PRIVACY_BENCH_PG_URL")
    if pg:
        results["postgresql"] = measure(pg, rel, ids)
    for backend, r in results.items():
        print(
            f"{backend:>10}: record {r['record_s'] * 1000:.0f} ms (ORM one-by-one "
            f"{r['orm_baseline_s'] * 1000:.0f} ms, {r['ratio']:.1f}x); again (idempotent) "
            f"{r['record_again_s'] * 1000:.1f} ms; read groups {r['read_groups_s'] * 1000:.0f} ms; "
            f"read hashes {r['read_hashes_s'] * 1000:.0f} ms"
        )
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / "composition_ledger.json").write_text(
        json.dumps(
            {
                "hardware": hardware(),
                "groups": rel.n_groups,
                "identifiers": len(ids),
                "results": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
