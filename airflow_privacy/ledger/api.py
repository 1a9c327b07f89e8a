"""``ReleaseLedger``: what was published, when, and why it was allowed or blocked.

The composition audit (Ganta et al. 2008, papers/003_*) needs every earlier release of a
population; the ledger remembers them. It stores only what was published (group
descriptors and sensitive multisets, spec, manifest, criteria results, content hash,
status with reasons), optionally keyed identifier hashes, and the release report a privacy
officer reads (one per release, replaced when the DAG runs again), never raw records. Every
write is one transaction (a crash leaves no partial release), all SQL is bound parameters
(ORM / Core constructs), and recording identical content twice returns the first record
(idempotent by content hash).

An Airflow hook builds it from a connection: ``ReleaseLedger(engine)`` or
``ReleaseLedger("postgresql+psycopg://...")``; the default is a SQLite file.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError
from sqlalchemy.orm import Session

from airflow_privacy.core.composition.identifiers import (
    DEFAULT_KEY_ENV,
    hash_identifiers,
    key_fingerprint,
    key_from_env,
)
from airflow_privacy.core.composition.release import PublishedRelease
from airflow_privacy.errors import InputError
from airflow_privacy.ledger.engine import configure, make_engine, safe_url
from airflow_privacy.ledger.migrate import upgrade
from airflow_privacy.ledger.models import STATUSES, GroupRow, MemberRow, ReleaseRow, ReportRow

_RETRIES = 20
_BATCH = 5000


@dataclass(frozen=True)
class ReleaseInfo:
    """A release's metadata (without its groups)."""

    id: int
    dataset: str
    version: str
    status: str
    created_at: str
    updated_at: str
    kind: str
    sensitive: str
    qis: list[str]
    content_hash: str
    records: int
    groups: int
    members: int | None
    key_fingerprint: str | None
    reasons: list[str]
    spec: Any
    manifest: Any
    criteria: Any
    created: bool = False  # set by record(): True when this call wrote it

    @property
    def name(self) -> str:
        return f"{self.dataset} v{self.version}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "dataset": self.dataset,
            "version": self.version,
            "status": self.status,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "kind": self.kind,
            "sensitive": self.sensitive,
            "qis": self.qis,
            "content_hash": self.content_hash,
            "records": self.records,
            "groups": self.groups,
            "members": self.members,
            "key_fingerprint": self.key_fingerprint,
            "reasons": self.reasons,
            "spec": self.spec,
            "manifest": self.manifest,
            "criteria": self.criteria,
        }


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(ts: datetime) -> str:
    if ts.tzinfo is None:  # SQLite returns naive datetimes: they were stored as UTC
        ts = ts.replace(tzinfo=UTC)
    return ts.isoformat(timespec="seconds")


def _plain(value: Any, what: str) -> Any:
    """JSON-compatible copy (numpy scalars -> Python, inf -> "inf"); errors name ``what``."""

    def default(o: Any) -> Any:
        if hasattr(o, "item"):
            return o.item()
        if hasattr(o, "tolist"):
            return o.tolist()
        if hasattr(o, "to_dict"):
            return o.to_dict()
        raise TypeError(type(o).__name__)

    def finite(o: Any) -> Any:
        if isinstance(o, float) and not math.isfinite(o):
            return None if math.isnan(o) else ("inf" if o > 0 else "-inf")
        if isinstance(o, dict):
            return {str(k): finite(v) for k, v in o.items()}
        if isinstance(o, list | tuple):
            return [finite(v) for v in o]
        return o

    if value is None:
        return None
    try:
        return finite(json.loads(json.dumps(value, default=default)))
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what} is not JSON-serializable: {exc}") from None


def _info(row: ReleaseRow, created: bool = False) -> ReleaseInfo:
    return ReleaseInfo(
        id=row.id,
        dataset=row.dataset,
        version=row.version,
        status=row.status,
        created_at=_iso(row.created_at),
        updated_at=_iso(row.updated_at),
        kind=row.kind,
        sensitive=row.sensitive,
        qis=list(row.qis),
        content_hash=row.content_hash,
        records=row.n_records,
        groups=row.n_groups,
        members=row.n_members,
        key_fingerprint=row.key_fingerprint,
        reasons=list(row.reasons or []),
        spec=row.spec,
        manifest=row.manifest,
        criteria=row.criteria,
        created=created,
    )


class ReleaseLedger:
    """The release ledger on a SQLAlchemy database.

    ``target``: a URL (``sqlite:///ledger.db``, ``postgresql+psycopg://...``, a file path),
    an :class:`~sqlalchemy.engine.Engine`, or None for the default (see
    :mod:`airflow_privacy.ledger.engine`). The schema is migrated to the newest revision on
    first use (``migrate=False`` skips it). ``create=False`` refuses to create a missing
    SQLite file (read-only commands). Identifier hashes use ``hash_key`` or the key in the
    environment variable ``key_env``.
    """

    def __init__(
        self,
        target: str | URL | Engine | None = None,
        *,
        migrate: bool = True,
        create: bool = True,
        key_env: str = DEFAULT_KEY_ENV,
        hash_key: bytes | None = None,
    ) -> None:
        self.engine = (
            configure(target) if isinstance(target, Engine) else make_engine(target, create)
        )
        self.url = safe_url(self.engine.url)
        self.key_env = key_env
        self._hash_key = hash_key
        if migrate:
            try:
                upgrade(self.engine)
            except (OperationalError, ProgrammingError) as exc:
                raise InputError(f"cannot open ledger {self.url}: {_first_line(exc)}") from None

    @classmethod
    def from_url(cls, url: str | URL, **kwargs: Any) -> ReleaseLedger:
        return cls(url, **kwargs)

    @classmethod
    def from_engine(cls, engine: Engine, **kwargs: Any) -> ReleaseLedger:
        return cls(engine, **kwargs)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> ReleaseLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------- identifiers
    def hash_key(self, required: bool = True) -> bytes | None:
        if self._hash_key is not None:
            return self._hash_key
        return key_from_env(self.key_env, required=required)

    def hash_identifiers(self, identifiers: Iterable[str]) -> list[str]:
        key = self.hash_key()
        assert key is not None
        return hash_identifiers(identifiers, key)

    # ------------------------------------------------------------------ writes
    def record(
        self,
        dataset: str,
        release: PublishedRelease,
        *,
        version: str | None = None,
        status: str = "candidate",
        spec: Mapping[str, Any] | None = None,
        manifest: Mapping[str, Any] | None = None,
        criteria: Sequence[Mapping[str, Any]] | None = None,
        reasons: Sequence[str] = (),
        identifiers: Iterable[str] | None = None,
        member_hashes: Iterable[str] | None = None,
    ) -> ReleaseInfo:
        """Record ``release`` of ``dataset`` in one transaction and return it.

        ``version``: a label (default: the next whole number for the dataset). Identical
        content (same groups, multisets, QIs, sensitive attribute and identifier hashes) of
        the same dataset is recorded once: the existing release is returned (``created`` is
        False), moved from candidate to ``status`` published/blocked when asked.
        ``identifiers`` are hashed here with the ledger's key (``member_hashes``: already
        hashed with it).
        """
        dataset = _check_text(dataset, "dataset name")
        if version is not None:
            version = _check_text(str(version), "version")
        if status not in STATUSES:
            raise InputError(f"unknown status {status!r} (known: {', '.join(STATUSES)})")
        if status == "blocked" and not reasons:
            raise InputError("a blocked release needs at least one reason")
        hashes: list[str] | None = None
        fingerprint: str | None = None
        if identifiers is not None and member_hashes is not None:
            raise InputError("pass identifiers or member_hashes, not both")
        if identifiers is not None or member_hashes is not None:
            key = self.hash_key()
            assert key is not None
            fingerprint = key_fingerprint(key)
            if identifiers is not None:
                hashes = sorted(set(hash_identifiers(identifiers, key)))
            else:
                hashes = sorted(set(str(h) for h in member_hashes or ()))
            if not hashes:
                raise InputError("the identifier column is empty")
        content = release.content_hash(hashes or ())
        payload = {
            "spec": _plain(dict(spec) if spec is not None else None, "spec"),
            "manifest": _plain(dict(manifest) if manifest is not None else None, "manifest"),
            "criteria": _plain(
                [dict(c) for c in criteria] if criteria is not None else None, "criteria results"
            ),
            "reasons": [_check_text(str(r), "reason") for r in reasons],
        }
        groups = [
            {
                "position": g,
                "descriptor": rec["descriptor"],
                "size": rec["size"],
                "sensitive": rec["sensitive"],
                "members": rec.get("members"),
            }
            for g, rec in enumerate(release.group_records())
        ]
        last: Exception | None = None
        for attempt in range(_RETRIES):
            try:
                return self._record_once(
                    dataset,
                    version,
                    status,
                    release,
                    content,
                    payload,
                    groups,
                    hashes,
                    fingerprint,
                )
            except IntegrityError as exc:  # a concurrent writer took the version or content
                last = exc
                time.sleep(random.uniform(0, 0.005 * (attempt + 1)))
        raise InputError(
            f"could not record {dataset!r}: concurrent writers kept conflicting "
            f"({_first_line(last) if last else 'unknown'})"
        )

    def _record_once(
        self,
        dataset: str,
        version: str | None,
        status: str,
        release: PublishedRelease,
        content: str,
        payload: dict[str, Any],
        groups: list[dict[str, Any]],
        hashes: list[str] | None,
        fingerprint: str | None,
    ) -> ReleaseInfo:
        with Session(self.engine) as s, s.begin():
            existing = s.scalars(
                select(ReleaseRow).where(
                    ReleaseRow.dataset == dataset, ReleaseRow.content_hash == content
                )
            ).first()
            if existing is not None:
                self._transition(s, existing, status, payload["reasons"])
                return _info(existing)
            if version is None:
                n = s.scalar(
                    select(func.count())
                    .select_from(ReleaseRow)
                    .where(ReleaseRow.dataset == dataset)
                )
                taken = set(
                    s.scalars(select(ReleaseRow.version).where(ReleaseRow.dataset == dataset))
                )
                k = int(n or 0) + 1
                while str(k) in taken:
                    k += 1
                label = str(k)
            else:
                label = version
                clash = s.scalars(
                    select(ReleaseRow).where(
                        ReleaseRow.dataset == dataset, ReleaseRow.version == label
                    )
                ).first()
                if clash is not None:
                    raise InputError(
                        f"{dataset!r} version {label!r} is already recorded with different "
                        f"content (release #{clash.id}, hash {clash.content_hash[:12]}); "
                        "choose another version"
                    )
            now = _now()
            row = ReleaseRow(
                dataset=dataset,
                version=label,
                created_at=now,
                updated_at=now,
                status=status,
                kind=release.kind,
                sensitive=release.sensitive,
                qis=list(release.qis),
                spec=payload["spec"],
                manifest=payload["manifest"],
                criteria=payload["criteria"],
                reasons=payload["reasons"],
                content_hash=content,
                n_records=release.n_records,
                n_groups=release.n_groups,
                n_members=len(hashes) if hashes is not None else None,
                key_fingerprint=fingerprint,
            )
            s.add(row)
            s.flush()
            rid = row.id
            for start in range(0, len(groups), _BATCH):
                s.execute(
                    insert(GroupRow),
                    [{"release_id": rid, **g} for g in groups[start : start + _BATCH]],
                )
            if hashes:
                for start in range(0, len(hashes), _BATCH):
                    s.execute(
                        insert(MemberRow),
                        [{"release_id": rid, "id_hash": h} for h in hashes[start : start + _BATCH]],
                    )
            return _info(row, created=True)

    def _transition(self, s: Session, row: ReleaseRow, status: str, reasons: list[str]) -> None:
        """Move an existing release to ``status`` when that is a legal step."""
        if row.status == status or status == "candidate":
            return
        if row.status == "published":
            if status == "blocked":
                raise InputError(
                    f"release #{row.id} ({row.dataset} v{row.version}) is already published; "
                    "it cannot be blocked any more"
                )
            return
        if row.status == "blocked" and status == "published":
            why = "; ".join(row.reasons or []) or "no reason recorded"
            raise InputError(
                f"release #{row.id} ({row.dataset} v{row.version}) was blocked ({why}); "
                "it cannot be published"
            )
        row.status = status
        if status == "blocked":
            row.reasons = list(reasons)
        row.updated_at = _now()

    def mark_published(self, release_id: int) -> ReleaseInfo:
        """candidate -> published (a no-op when already published)."""
        with Session(self.engine) as s, s.begin():
            row = self._row(s, release_id)
            self._transition(s, row, "published", [])
            return _info(row)

    def mark_blocked(self, release_id: int, reasons: Sequence[str]) -> ReleaseInfo:
        """candidate -> blocked with ``reasons``."""
        if not reasons:
            raise InputError("a blocked release needs at least one reason")
        clean = [_check_text(str(r), "reason") for r in reasons]
        with Session(self.engine) as s, s.begin():
            row = self._row(s, release_id)
            if row.status == "blocked":
                row.reasons = list(row.reasons or []) + [r for r in clean if r not in row.reasons]
                row.updated_at = _now()
            else:
                self._transition(s, row, "blocked", clean)
            return _info(row)

    def delete(self, release_id: int) -> None:
        """Remove a candidate or blocked release (published ones are history: refused)."""
        with Session(self.engine) as s, s.begin():
            row = self._row(s, release_id)
            if row.status == "published":
                raise InputError(f"release #{release_id} is published; it cannot be deleted")
            s.execute(delete(ReportRow).where(ReportRow.release_id == release_id))
            s.execute(delete(MemberRow).where(MemberRow.release_id == release_id))
            s.execute(delete(GroupRow).where(GroupRow.release_id == release_id))
            s.execute(delete(ReleaseRow).where(ReleaseRow.id == release_id))

    # ----------------------------------------------------------------- reports
    def attach_report(self, release_id: int, report: Mapping[str, Any]) -> str:
        """Store the release report of ``release_id`` (a JSON-compatible mapping, e.g.
        ``ReleaseReport.to_dict()``), replacing an earlier one, in one transaction.
        Returns the time it was stored (ISO 8601, UTC)."""
        if not isinstance(report, Mapping):
            raise InputError(f"a release report is a mapping, got {type(report).__name__}")
        payload = _plain(dict(report), "the release report")
        for attempt in range(_RETRIES):
            try:
                with Session(self.engine) as s, s.begin():
                    self._row(s, release_id)
                    now = _now()
                    row = s.get(ReportRow, release_id)
                    if row is None:
                        s.add(ReportRow(release_id=release_id, created_at=now, report=payload))
                    else:
                        row.report = payload
                        row.created_at = now
                    return _iso(now)
            except IntegrityError:  # a concurrent writer inserted it first: replace theirs
                time.sleep(random.uniform(0, 0.005 * (attempt + 1)))
        raise InputError(f"could not store the report of release #{release_id}: "
                         "concurrent writers kept conflicting")  # fmt: skip

    def report(self, release_id: int) -> dict[str, Any] | None:
        """The stored release report of ``release_id`` (None when none was stored)."""
        with Session(self.engine) as s, s.begin():
            self._row(s, release_id)
            row = s.get(ReportRow, release_id)
            return dict(row.report) if row is not None else None

    def report_times(self, release_ids: Iterable[int] | None = None) -> dict[int, str]:
        """``{release id: when its report was stored}`` for the releases that have one."""
        q = select(ReportRow.release_id, ReportRow.created_at)
        if release_ids is not None:
            q = q.where(ReportRow.release_id.in_([int(r) for r in release_ids]))
        with Session(self.engine) as s, s.begin():
            return {int(rid): _iso(ts) for rid, ts in s.execute(q)}

    # ------------------------------------------------------------------- reads
    def _row(self, s: Session, release_id: int) -> ReleaseRow:
        if isinstance(release_id, bool) or not isinstance(release_id, int):
            raise InputError(f"a release id is a whole number, got {release_id!r}")
        row = s.get(ReleaseRow, release_id)
        if row is None:
            raise InputError(f"release #{release_id} does not exist in ledger {self.url}")
        return row

    def info(self, release_id: int) -> ReleaseInfo:
        with Session(self.engine) as s, s.begin():
            return _info(self._row(s, release_id))

    def find(self, dataset: str, version: str) -> ReleaseInfo:
        with Session(self.engine) as s, s.begin():
            row = s.scalars(
                select(ReleaseRow).where(
                    ReleaseRow.dataset == dataset, ReleaseRow.version == str(version)
                )
            ).first()
            if row is None:
                raise InputError(f"{dataset!r} version {version!r} is not in ledger {self.url}")
            return _info(row)

    def resolve(self, ref: str) -> ReleaseInfo:
        """A release by ``ID`` / ``#ID`` or ``DATASET@VERSION``."""
        text = ref.strip()
        if "@" in text:
            dataset, _, version = text.rpartition("@")
            return self.find(dataset, version)
        try:
            rid = int(text.lstrip("#"))
        except ValueError:
            raise InputError(
                f"{ref!r} is not a release reference (use an id such as 3, or DATASET@VERSION)"
            ) from None
        return self.info(rid)

    def list(
        self,
        dataset: str | None = None,
        status: str | None = None,
        datasets: Sequence[str] | None = None,
    ) -> list[ReleaseInfo]:
        """Releases, oldest first, optionally of one dataset / several / one status."""
        if status is not None and status not in STATUSES:
            raise InputError(f"unknown status {status!r} (known: {', '.join(STATUSES)})")
        q = select(ReleaseRow).order_by(ReleaseRow.id)
        if dataset is not None:
            q = q.where(ReleaseRow.dataset == dataset)
        if datasets:
            q = q.where(ReleaseRow.dataset.in_(list(datasets)))
        if status is not None:
            q = q.where(ReleaseRow.status == status)
        with Session(self.engine) as s, s.begin():
            return [_info(r) for r in s.scalars(q)]

    def release(self, release_id: int) -> PublishedRelease:
        """The published groups of a release, named ``DATASET vVERSION``."""
        with Session(self.engine) as s, s.begin():
            row = self._row(s, release_id)
            rows = s.scalars(
                select(GroupRow)
                .where(GroupRow.release_id == release_id)
                .order_by(GroupRow.position)
            ).all()
            groups = [(g.descriptor, g.sensitive) for g in rows]
            members = [g.members for g in rows] if row.kind == "bucketized" else None
            return PublishedRelease.from_groups(
                row.qis,
                row.sensitive,
                groups,
                row.kind,
                [[(q, m) for q, m in grp] for grp in members] if members is not None else None,
                name=f"{row.dataset} v{row.version}",
            )

    def member_hashes(self, release_id: int) -> frozenset[str] | None:
        """The identifier hashes of a release (None when none were recorded). Refuses hashes
        made with another key than this ledger's (they could not be compared)."""
        with Session(self.engine) as s, s.begin():
            row = self._row(s, release_id)
            if row.n_members is None:
                return None
            key = self.hash_key(required=True)
            assert key is not None
            if row.key_fingerprint != key_fingerprint(key):
                raise InputError(
                    f"release #{row.id} ({row.dataset} v{row.version}) was hashed with another "
                    f"key (fingerprint {row.key_fingerprint}, ours {key_fingerprint(key)}); "
                    f"set {self.key_env} to the key used then"
                )
            return frozenset(
                s.scalars(select(MemberRow.id_hash).where(MemberRow.release_id == release_id))
            )

    def verify(self, release_id: int) -> bool:
        """True when the stored groups (and hashes) still hash to the stored content hash."""
        info = self.info(release_id)
        rel = self.release(release_id)
        with Session(self.engine) as s, s.begin():
            hashes = list(
                s.scalars(select(MemberRow.id_hash).where(MemberRow.release_id == release_id))
            )
        return rel.content_hash(hashes) == info.content_hash


def _check_text(value: str, what: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"the {what} must be text, got {type(value).__name__}")
    if not value.strip():
        raise InputError(f"the {what} is empty")
    if len(value) > 255 and what in ("dataset name", "version"):
        raise InputError(f"the {what} is longer than 255 characters")
    if "\x00" in value:
        raise InputError(f"the {what} contains a NUL character")
    return value


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
