"""A seeded ledger for the UI tests: small real releases of the bundled Adult data, their
reports built by the real :func:`airflow_privacy.report.build_release_report` from real check
results, and strings that must be escaped (``<script>``) in names and reasons."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from airflow_privacy.core.composition.files import read_release_file
from airflow_privacy.core.datasets import adult_release
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.providers.airflow.operators.check import run_checks
from airflow_privacy.providers.airflow.sources import ReleaseRef

SENSITIVE = "occupation"
EVIL = "<script>window.pwned=1</script>"
PUBLISHED_DATASET = "adult"
BLOCKED_DATASET = f"clinic {EVIL}"


@dataclass(frozen=True)
class Seeded:
    url: str
    published: int  # release ids
    blocked: int
    candidate: int
    blocked_reason: str
    files: dict[int, Path]


def _release(tmp: Path, name: str, levels: dict[str, int], start: int, n: int) -> Path:
    groups = list(levels)
    table = adult_release(levels).slice(start, n).select([*groups, SENSITIVE])
    path = tmp / name
    pq.write_table(table, path)
    return path


def _checks(path: Path, groups: list[str], c: float, k: int) -> dict[str, dict[str, Any]]:
    report = run_checks(
        ReleaseRef(str(path)),
        SENSITIVE,
        groups,
        [{"name": "ck-safety", "c": c, "k": k}, {"name": "k-anonymity", "k": 5}],
    )
    return {"check_safety": report}


def seed_ledger(tmp: Path) -> Seeded:
    """Three releases: published (report stored), blocked (report stored, the reason from
    the real check's witness plus a reason carrying ``<script>``), candidate (no report)."""
    from airflow_privacy.report import build_release_report

    tmp.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{tmp / 'ledger.db'}"
    ids: dict[str, int] = {}
    files: dict[int, Path] = {}
    reason = ""
    with ReleaseLedger(url) as ledger:
        specs = [
            ("published", PUBLISHED_DATASET, {"age": 3}, 0, 2000, 0.9, 1),
            ("blocked", BLOCKED_DATASET, {"age": 2, "sex": 0}, 2000, 2000, 0.5, 3),
            ("candidate", PUBLISHED_DATASET, {"age": 2}, 4000, 1500, 0.9, 1),
        ]
        for status, dataset, levels, start, n, c, k in specs:
            groups = list(levels)
            path = _release(tmp, f"{status}.parquet", levels, start, n)
            checks = _checks(path, groups, c, k)
            reasons = list(checks["check_safety"]["reasons"])
            if status == "blocked":
                assert reasons, "the seeded blocked release must fail its check"
                reasons.append(f"reviewer note: {EVIL}")
                reason = reasons[0]
            else:
                assert not reasons, reasons
            cand = read_release_file(path, qis=groups, sensitive=SENSITIVE)
            version = f"2026-{len(ids) + 1:02d}"
            info = ledger.record(dataset, cand.release, version=version, status=status,
                                 reasons=reasons if status == "blocked" else ())  # fmt: skip
            ids[status] = info.id
            files[info.id] = path
            if status == "candidate":
                continue
            report = build_release_report(
                str(path),
                sensitive=SENSITIVE,
                group_columns=groups,
                dataset=dataset,
                version=version,
                release_id=info.id,
                status=status,
                reasons=reasons,
                checks=checks,
                c=c,
                k_max=3,
            )
            ledger.attach_report(info.id, report.to_dict())
    return Seeded(url, ids["published"], ids["blocked"], ids["candidate"], reason, files)
