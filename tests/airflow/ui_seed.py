"""A seeded ledger for the UI tests, written through the ledger's lifecycle API: small real
releases of the bundled Adult data, each with an attempt whose checks are the envelopes of the
real check service (:func:`airflow_privacy.gate.steps.check.run_check`), decided by the real gate
(:meth:`ReleaseLedger.decide`), and reports built by the real
:func:`airflow_privacy.report.build_release_report` from those envelopes. Names and reasons
carry strings that must be escaped (``<script>``).

Four releases (ids in this order):

* **published**: ``adult`` v2026-01, first release, its check passed, the gate published it;
  report stored;
* **blocked**: ``clinic <script>...`` v2026-02, first release, its (c,k)-safety check failed
  (the real witness is the first reason) and a steward added a note carrying ``<script>``;
  report stored;
* **candidate**: ``adult`` v2026-03, an open attempt with a passing check, not yet decided;
  no report;
* **superseded**: ``adult`` v2026-04, blocked (a required check has no result) and then
  superseded by a steward (who, when and why are kept, the reason carries ``<script>``);
  no report.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from airflow_privacy.core.composition.files import read_release_file
from airflow_privacy.core.datasets import adult_release
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.envelope import Envelope
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.steps.check import CheckRequest, run_check
from airflow_privacy.ledger import ReleaseLedger
from tests.ledger.support import DIGEST, gate_rules

SENSITIVE = "occupation"
EVIL = "<script>window.pwned=1</script>"
PUBLISHED_DATASET = "adult"
BLOCKED_DATASET = f"clinic {EVIL}"
CHECK = "check_safety"
STEWARD = f"officer {EVIL}"
SUPERSEDE_REASON = f"the hierarchy was wrong; re-run with the fixed one {EVIL}"


@dataclass(frozen=True)
class Seeded:
    url: str
    published: int  # release ids
    blocked: int
    candidate: int
    superseded: int
    blocked_reason: str  # the first reason of the blocked attempt (the real check's witness)
    uuids: dict[int, str]  # release id -> release uuid
    files: dict[int, Path]

    @property
    def all(self) -> list[int]:
        return [self.published, self.blocked, self.candidate, self.superseded]

    def uuid(self, release_id: int) -> str:
        return self.uuids[release_id]


def _release(tmp: Path, name: str, levels: dict[str, int], start: int, n: int) -> Path:
    groups = list(levels)
    table = adult_release(levels).slice(start, n).select([*groups, SENSITIVE])
    path = tmp / name
    pq.write_table(table, path)
    return path


def _check(path: Path, groups: list[str], c: float, k: int) -> Envelope:
    """The real check service's envelope ((c,k)-safety and 5-anonymity), not recorded."""
    return run_check(
        CheckRequest(
            release=ReleaseRef(path=str(path)),
            sensitive=SENSITIVE,
            group_columns=groups,
            criteria=[{"name": "ck-safety", "c": c, "k": k}, {"name": "k-anonymity", "k": 5}],
            name=CHECK,
        ),
        GateContext(),
    )


def _record(ledger: ReleaseLedger, attempt: str, env: Envelope) -> None:
    ledger.record_check(
        attempt,
        name=env.name,
        step=env.step,
        safe=env.safe,
        outcome=env.outcome,
        envelope=env.to_dict(),
        content_digest=DIGEST,
    )


def seed_ledger(tmp: Path) -> Seeded:
    """The four releases of the module doc, in a SQLite ledger under ``tmp``."""
    from airflow_privacy.report import build_release_report

    tmp.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{tmp / 'ledger.db'}"
    ids: dict[str, int] = {}
    uuids: dict[int, str] = {}
    files: dict[int, Path] = {}
    reason = ""
    specs = [
        # name, dataset, levels, first record, records, c, k, required checks
        ("published", PUBLISHED_DATASET, {"age": 3}, 0, 2000, 0.9, 1, [CHECK]),
        ("blocked", BLOCKED_DATASET, {"age": 2, "sex": 0}, 2000, 2000, 0.5, 3, [CHECK]),
        ("candidate", PUBLISHED_DATASET, {"age": 2}, 4000, 1500, 0.9, 1, [CHECK]),
        ("superseded", PUBLISHED_DATASET, {"age": 4}, 6000, 1000, 0.9, 1,
         [CHECK, "composition_audit"]),
    ]  # fmt: skip
    with ReleaseLedger(url) as ledger:
        for n, (name, dataset, levels, start, size, c, k, required) in enumerate(specs, 1):
            groups = list(levels)
            path = _release(tmp, f"{name}.parquet", levels, start, size)
            env = _check(path, groups, c, k)
            assert env.safe is (name != "blocked"), (name, env.reasons)
            cand = read_release_file(path, qis=groups, sensitive=SENSITIVE)
            version = f"2026-{n:02d}"
            attempt = ledger.open_attempt(
                dataset,
                cand.release,
                required=required,
                version=version,
                first_release=dataset not in {s[1] for s in specs[: n - 1]},
                origin={"front_end": "test", "user": "ui_seed"},
                content_digest=DIGEST,
            )
            rid = attempt.release.id
            ids[name], uuids[rid], files[rid] = rid, attempt.release.uuid, path
            _record(ledger, attempt.uuid, env)
            if name == "candidate":
                continue  # open, undecided: no report
            decided = ledger.decide(
                attempt.uuid, rules=gate_rules, destination=str(tmp / "published")
            )
            if name == "published":
                assert decided.status == "publishing", decided.reasons
                decided = ledger.finish_publish(attempt.uuid)
            else:
                assert decided.status == "blocked", decided.status
            if name == "blocked":
                decided = ledger.block(attempt.uuid, [f"reviewer note: {EVIL}"], by="officer")
                reason = decided.reasons[0]
            if name == "superseded":
                ledger.supersede(attempt.uuid, SUPERSEDE_REASON, by=STEWARD)
                continue  # no report: the page shows the attempts
            report = build_release_report(
                str(path),
                sensitive=SENSITIVE,
                group_columns=groups,
                dataset=dataset,
                version=version,
                release_id=rid,
                status="published" if name == "published" else "blocked",
                reasons=[] if name == "published" else decided.reasons,
                checks=[env],
                c=c,
                k_max=3,
            )
            ledger.attach_report(attempt.uuid, report.to_dict())
    return Seeded(
        url,
        ids["published"],
        ids["blocked"],
        ids["candidate"],
        ids["superseded"],
        reason,
        uuids,
        files,
    )
