"""``ReleaseLedger``: what was published, what was attempted, and why it was allowed or
blocked.

The composition audit (Ganta et al. 2008) needs every earlier release of a population; the
ledger remembers them. It stores only the published form of a release (group descriptors and
sensitive multisets, spec, manifest, content hash), optionally keyed identifier hashes, the
report envelopes of every check of every attempt, and the release reports. Never raw
records. Every write is one transaction (a crash leaves nothing half-written), all values are
bound parameters (ORM / Core constructs; the groups and hashes of a release go in through the
driver's bulk path, PostgreSQL ``COPY`` / SQLite ``executemany``, with fixed statement text and
JSON serialized before the lock is taken, so a large release holds the lock briefly).

The lifecycle (docs/design.md): content is recorded once per dataset (idempotent by content
hash); an *attempt* to publish it names the checks it requires; checks record their
envelopes under the attempt; the gate (:meth:`ReleaseLedger.decide`) reads them back and
either blocks the attempt with every reason or moves it to ``publishing`` (the content now
counts as published for every later audit) and, once the files are in place, to
``published``. Blocked is final *for the attempt*: a later attempt of the same content is
judged afresh; a steward can supersede a blocked attempt with a reason the ledger keeps.

Writers of one dataset are serialized by a row lock on the dataset (versions are numbered,
content is deduplicated and the gate decides under it: no conflicts, no retry storms); on
PostgreSQL a writer waits for a lock at most ``AIRFLOW_PRIVACY_LEDGER_LOCK_TIMEOUT`` seconds
(SQLite: its busy timeout). A race that is lost all the same (a unique key violated by a
concurrent writer) is :class:`LedgerUnavailable`, retryable, never bad input. Readers never
take the write lock and never create a ledger (``create=False``).
"""

from __future__ import annotations

import hashlib
import json
import math
import secrets
import uuid as uuidlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import column, delete, func, insert, or_, select, table
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from airflow_privacy.core.composition.identifiers import (
    DEFAULT_KEY_ENV,
    DERIVED_PREFIX,
    derive_key,
    derived_fingerprint,
    derived_matches,
    fingerprint_matches,
    hash_identifiers,
    key_from_env,
    wrap_hashes,
)
from airflow_privacy.core.composition.release import PublishedRelease
from airflow_privacy.core.redaction import redact
from airflow_privacy.errors import (
    BudgetOverdrawn,
    IllegalTransition,
    InputError,
    PrivacyGateError,
    opt,
)
from airflow_privacy.ledger import budget, policies
from airflow_privacy.ledger.budget import Budget, Cap, Spend
from airflow_privacy.ledger.engine import (
    MAX_ID,
    READ,
    classify,
    configure,
    lock_timeout,
    make_engine,
    safe_url,
    url_secrets,
)
from airflow_privacy.ledger.integrity import CorruptValue
from airflow_privacy.ledger.migrate import ensure
from airflow_privacy.ledger.models import (
    DP_KIND,
    STATUSES,
    AttemptRow,
    Base,
    CheckRow,
    DatasetRow,
    DPSpendRow,
    GroupRow,
    MemberRow,
    ReleaseRow,
    ReportRow,
    SettingRow,
)
from airflow_privacy.ledger.policies import PolicyInfo

_BATCH = 5000
_GROUP_COLUMNS = ("release_id", "position", "descriptor", "size", "sensitive", "members")
_MEMBER_COLUMNS = ("release_id", "id_hash")
T = TypeVar("T")


@dataclass(frozen=True)
class ReleaseInfo:
    """A release's metadata (without its groups). ``status`` is what it is shown as:
    ``published``, else its latest attempt's ``blocked`` / ``superseded``, else
    ``candidate``."""

    id: int
    uuid: str
    dataset: str
    version: str
    status: str
    content_status: str
    created_at: str
    updated_at: str
    published_at: str | None
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
    created: bool = False  # set by the writers: True when this call recorded the content

    @property
    def name(self) -> str:
        return f"{self.dataset} v{self.version}"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("created")
        d["key_fingerprint"] = "recorded" if self.key_fingerprint else None  # never the value
        return d


@dataclass(frozen=True)
class CheckInfo:
    """One check of an attempt: its verdict and its report envelope."""

    name: str
    step: str
    safe: bool | None
    outcome: str
    created_at: str
    envelope: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AttemptInfo:
    """An attempt at publishing a release, with the checks recorded for it."""

    id: int
    uuid: str
    status: str
    release: ReleaseInfo
    required: list[str]
    first_release: bool
    origin: dict[str, Any]
    reasons: list[str]
    destination: str | None
    created_at: str
    updated_at: str
    decided_at: str | None
    superseded_at: str | None
    superseded_by: str | None
    supersede_reason: str | None
    checks: list[CheckInfo] = field(default_factory=list)
    #: ``sha256:HEX`` of the file the attempt was opened on (None: a table, or an old ledger)
    content_digest: str | None = None
    #: the policy version the gate decided it under (None: no policy, or not decided)
    policy_version: int | None = None
    #: an override of its block (``requested_by`` ... ``outcome``: pending, approved, rejected)
    override: dict[str, Any] | None = None

    @property
    def decided(self) -> bool:
        return self.status != "open"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["release"] = self.release.to_dict()
        return d

    def public_dict(self) -> dict[str, Any]:
        """The attempt as the CLI's ``ledger show --format json`` and the UI's JSON API give
        it: its decision and checks (verdict, summary, reasons), not the checks' full
        envelopes; reasons pass :func:`airflow_privacy.core.redaction.redact`."""
        return {
            "uuid": self.uuid,
            "status": self.status,
            "required": list(self.required),
            "first_release": self.first_release,
            "reasons": [redact(r) for r in self.reasons],
            "destination": self.destination,
            "origin": dict(self.origin),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "decided_at": self.decided_at,
            "superseded_at": self.superseded_at,
            "superseded_by": self.superseded_by,
            "supersede_reason": self.supersede_reason,
            "policy_version": self.policy_version,
            "override": dict(self.override) if self.override else None,
            "checks": [
                {
                    "name": c.name,
                    "step": c.step,
                    "safe": c.safe,
                    "outcome": c.outcome,
                    "created_at": c.created_at,
                    "summary": redact(str(c.envelope.get("summary") or "")),
                    "reasons": [redact(str(r)) for r in c.envelope.get("reasons") or []],
                }
                for c in self.checks
            ],
        }


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(ts: datetime | None) -> str | None:
    if ts is None:
        return None
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


def _display(row: ReleaseRow, latest: str | None) -> str:
    if row.status == "published":
        return "published"
    if latest in ("blocked", "superseded"):
        return latest
    return "candidate"


def _info(row: ReleaseRow, latest: str | None = None, created: bool = False) -> ReleaseInfo:
    return ReleaseInfo(
        id=row.id,
        uuid=row.uuid,
        dataset=row.dataset,
        version=row.version,
        status=_display(row, latest),
        content_status=row.status,
        created_at=_iso(row.created_at) or "",
        updated_at=_iso(row.updated_at) or "",
        published_at=_iso(row.published_at),
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


def _check_info(c: CheckRow) -> CheckInfo:
    return CheckInfo(
        name=c.name,
        step=c.step,
        safe=c.safe,
        outcome=c.outcome,
        created_at=_iso(c.created_at) or "",
        envelope=dict(c.envelope or {}),
    )


@dataclass
class _Prepared:
    """A release made ready for recording (hashes, JSON payload, group rows)."""

    release: PublishedRelease
    content: str
    payload: dict[str, Any]
    groups: list[tuple[int, str, int, str, str | None]]  # position, JSON..., without the id
    hashes: list[str] | None
    fingerprint: str | None


def _release_of(s: Session, a: AttemptRow, *, lock: bool = False) -> ReleaseRow:
    """The release of attempt ``a`` (``lock``: locked for update, read afresh); one that does
    not exist is a corrupted ledger, named by the session (:mod:`.integrity`)."""
    row = (
        s.get(ReleaseRow, a.release_id, with_for_update=True, populate_existing=True)
        if lock
        else s.get(ReleaseRow, a.release_id)
    )
    if row is None:
        raise CorruptValue("an attempt's release does not exist")
    return row


_SALT = "identifier_key_salt"  # the ledger_settings row of the scrypt salt


class ReleaseLedger:
    """The release ledger on a SQLAlchemy database.

    ``target``: a URL (``sqlite:///ledger.db``, ``postgresql+psycopg://...``, a file path),
    an :class:`~sqlalchemy.engine.Engine`, or None for the resolved default
    (:mod:`airflow_privacy.ledger.location`). ``create=False`` (readers) refuses a ledger that
    does not exist yet (a missing SQLite file, a database without ledger tables); an existing
    ledger is migrated to the newest schema on open (``migrate=False`` skips that).
    Identifier hashes use ``hash_key`` or the key in the environment variable ``key_env``.
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
        if target is None:
            from airflow_privacy.ledger.location import resolve

            location = resolve()
            target, key_env = location.url, location.key_env
        self._lock_ms = max(1, int(lock_timeout() * 1000))  # a bad setting fails first
        self.engine = (
            configure(target) if isinstance(target, Engine) else make_engine(target, create)
        )
        self._reader = self.engine.execution_options(**READ)
        self.url = safe_url(self.engine.url)
        self._secrets = url_secrets(self.engine.url)
        self.key_env = key_env
        self._hash_key = hash_key
        self._derived: bytes | None = None
        if migrate:
            try:
                ensure(self.engine, create=create, where=self.url)
            except PrivacyGateError:
                self.engine.dispose()
                raise
            except Exception as exc:
                self.engine.dispose()
                mapped = classify(exc, self.url, self._secrets)
                if mapped is None:
                    raise
                raise mapped from None

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

    # ------------------------------------------------------------------ sessions
    @contextmanager
    def _session(self, write: bool) -> Iterator[Session]:
        """One transaction: writers take the SQLite write lock, readers do not; database
        errors become :class:`LedgerUnavailable` / :class:`InputError`."""
        try:
            with Session(self.engine if write else self._reader) as s, s.begin():
                if write and s.get_bind().dialect.name == "postgresql":
                    # wait for a row lock no longer than SQLite writers wait for theirs
                    s.execute(select(func.set_config("lock_timeout", f"{self._lock_ms}ms", True)))
                yield s
        except PrivacyGateError:
            raise
        except (ValueError, TypeError):
            # a value the ledger cannot read (text in an integer column, broken JSON, a
            # timestamp that is not one: airflow_privacy.ledger.integrity) is named, not a crash
            from airflow_privacy.ledger.integrity import LedgerCorrupt, diagnose

            problem = diagnose(self.engine, Base.metadata)
            if problem is None:
                raise
            raise LedgerCorrupt(
                f"the ledger {safe_url(self.url)!r} holds a value it cannot read: {problem}; "
                "restore the ledger from a backup"
            ) from None
        except Exception as exc:
            # a unique key violated by a concurrent writer (IntegrityError) is a lost race:
            # LedgerUnavailable, like a lock waited for too long
            mapped = classify(exc, self.url, self._secrets)
            if mapped is None:
                raise
            raise mapped from None

    def _read(self, fn: Callable[[Session], T]) -> T:
        with self._session(write=False) as s:
            return fn(s)

    # ------------------------------------------------------------- identifiers
    def hash_key(self, required: bool = True) -> bytes | None:
        if self._hash_key is not None:
            return self._hash_key
        return key_from_env(self.key_env, required=required)

    def hash_identifiers(self, identifiers: Iterable[str]) -> list[str]:
        """``HMAC(key, identifier)``: the hashes as everything outside the ledger has them
        (what :meth:`stored_hashes` turns into what the ledger stores)."""
        key = self.hash_key()
        assert key is not None
        return hash_identifiers(identifiers, key)

    def stored_hashes(self, hashes: Iterable[str]) -> list[str]:
        """Identifier hashes (``HMAC(key, identifier)``) as this ledger stores and compares
        them: wrapped with the key derived through scrypt and this ledger's salt
        (:func:`~airflow_privacy.core.composition.identifiers.wrap_hashes`)."""
        return wrap_hashes(hashes, self._derived_key())

    def hash_wrapper(self) -> Callable[[Iterable[str]], list[str]]:
        """:meth:`stored_hashes` as a function that needs no open ledger (the derived key is
        computed now)."""
        derived = self._derived_key()
        return lambda hashes: wrap_hashes(hashes, derived)

    def _derived_key(self) -> bytes:
        """``scrypt(key, this ledger's salt)``, computed once. The first call also wraps the
        hashes stored unwrapped under this key (ledgers written before the derivation)."""
        if self._derived is not None:
            return self._derived
        key = self.hash_key()
        assert key is not None
        value = self._read(
            lambda s: s.scalar(select(SettingRow.value).where(SettingRow.name == _SALT))
        )
        if value is None:  # a ledger whose schema was made without the migration's row
            with self._session(write=True) as s:
                row = s.get(SettingRow, _SALT, with_for_update=True)
                if row is None:
                    row = SettingRow(name=_SALT, value=secrets.token_hex(16))
                    s.add(row)
                value = row.value
        derived = derive_key(key, value)
        self._wrap_unwrapped(key, derived)
        self._derived = derived
        return derived

    def _wrap_unwrapped(self, key: bytes, derived: bytes) -> None:
        """Wrap, in place and in one transaction, the hashes of every release stored
        unwrapped under ``key``; hashes of another key are left as they are (reading them
        is refused, naming the key)."""
        unwrapped = or_(
            ReleaseRow.key_fingerprint.is_(None),
            ~ReleaseRow.key_fingerprint.startswith(f"{DERIVED_PREFIX}$"),
        )
        with_hashes = ReleaseRow.id.in_(select(MemberRow.release_id).distinct())
        if not self._read(lambda s: s.scalar(select(ReleaseRow.id).where(with_hashes, unwrapped))):
            return
        fingerprint = derived_fingerprint(derived)
        with self._session(write=True) as s:
            self._lock_datasets(s)  # no writer records hashes meanwhile
            rows = s.scalars(
                select(ReleaseRow).where(with_hashes, unwrapped).order_by(ReleaseRow.id)
            ).all()
            for row in rows:
                if not fingerprint_matches(row.key_fingerprint, key):
                    continue
                old = s.scalars(select(MemberRow.id_hash).where(MemberRow.release_id == row.id))
                new = sorted(set(wrap_hashes(old.all(), derived)))
                s.execute(delete(MemberRow).where(MemberRow.release_id == row.id))
                _bulk_insert(
                    s, MemberRow.__tablename__, _MEMBER_COLUMNS, [(row.id, h) for h in new]
                )
                row.key_fingerprint = fingerprint
                row.updated_at = _now()

    # ----------------------------------------------------------------- content
    def _prepare(
        self,
        release: PublishedRelease,
        *,
        spec: Mapping[str, Any] | None,
        manifest: Mapping[str, Any] | None,
        criteria: Sequence[Mapping[str, Any]] | None,
        identifiers: Iterable[str] | None,
        member_hashes: Iterable[str] | None,
    ) -> _Prepared:
        hashes: list[str] | None = None
        fingerprint: str | None = None
        if identifiers is not None and member_hashes is not None:
            raise InputError("pass identifiers or member_hashes, not both")
        if identifiers is not None or member_hashes is not None:
            key = self.hash_key()
            assert key is not None
            derived = self._derived_key()
            fingerprint = derived_fingerprint(derived)
            if identifiers is not None:
                inner = hash_identifiers(identifiers, key)
            else:
                inner = [str(h) for h in member_hashes or ()]
            hashes = sorted(set(wrap_hashes(inner, derived)))
            if not hashes:
                raise InputError("the identifier column is empty")
        payload = {
            "spec": _plain(dict(spec) if spec is not None else None, "spec"),
            "manifest": _plain(dict(manifest) if manifest is not None else None, "manifest"),
            "criteria": _plain(
                [dict(c) for c in criteria] if criteria is not None else None, "criteria results"
            ),
        }
        dumps = json.dumps
        groups = [
            (
                g,
                dumps(rec["descriptor"]),
                int(rec["size"]),
                dumps(rec["sensitive"]),
                dumps(rec["members"]) if rec.get("members") is not None else None,
            )
            for g, rec in enumerate(release.group_records())
        ]
        return _Prepared(release, release.content_hash(), payload, groups, hashes, fingerprint)

    def _lock_dataset(self, s: Session, dataset: str) -> DatasetRow:
        """The dataset's row, created if new, locked until the transaction ends (PostgreSQL
        ``FOR UPDATE``; SQLite writers already hold the database's write lock)."""
        dialect = s.get_bind().dialect.name
        values = {"name": dataset, "next_version": 1, "created_at": _now()}
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            s.execute(pg_insert(DatasetRow).values(**values).on_conflict_do_nothing())
        elif dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert as sqlite_insert

            s.execute(sqlite_insert(DatasetRow).values(**values).on_conflict_do_nothing())
        elif s.get(DatasetRow, dataset) is None:  # pragma: no cover - other databases
            s.add(DatasetRow(**values))
            s.flush()
        row = s.scalars(
            select(DatasetRow).where(DatasetRow.name == dataset).with_for_update()
        ).one()
        return row

    def _lock_datasets(self, s: Session) -> None:
        """Every dataset's row, locked in name order until the transaction ends (the
        datasets an audit may have read; PostgreSQL ``FOR UPDATE``)."""
        s.scalars(select(DatasetRow).order_by(DatasetRow.name).with_for_update()).all()

    def _dataset_of(self, s: Session, a: AttemptRow) -> str:
        """The dataset of an attempt (read without a lock: it never changes)."""
        dataset = s.scalar(select(ReleaseRow.dataset).where(ReleaseRow.id == a.release_id))
        assert dataset is not None
        return dataset

    def _label(self, s: Session, ds: DatasetRow) -> str:
        taken = set(s.scalars(select(ReleaseRow.version).where(ReleaseRow.dataset == ds.name)))
        n = ds.next_version
        while str(n) in taken:
            n += 1
        ds.next_version = n + 1
        return str(n)

    def _content(
        self, s: Session, ds: DatasetRow, prep: _Prepared, version: str | None
    ) -> tuple[ReleaseRow, bool]:
        """The release row of this content (recorded now when new), under the dataset lock."""
        existing = s.scalars(
            select(ReleaseRow).where(
                ReleaseRow.dataset == ds.name, ReleaseRow.content_hash == prep.content
            )
        ).first()
        relabel = (
            existing is not None
            and version is not None
            and version != existing.version
            and existing.status != "published"
        )
        if version is not None and (existing is None or relabel):
            clash = _published_under(s, ds.name, version)
            if clash is not None:
                raise InputError(
                    f"{ds.name!r} version {version!r} is already published with different "
                    f"content (release #{clash}); choose another version"
                )
        if existing is not None:
            self._attach_members(s, existing, prep)
            if relabel:
                assert version is not None
                existing.version = version  # a label of unpublished content may change
                existing.updated_at = _now()
            return existing, False
        label = version if version is not None else self._label(s, ds)
        now = _now()
        rel = prep.release
        row = ReleaseRow(
            uuid=str(uuidlib.uuid4()),
            dataset=ds.name,
            version=label,
            created_at=now,
            updated_at=now,
            published_at=None,
            status="candidate",
            kind=rel.kind,
            sensitive=rel.sensitive,
            qis=list(rel.qis),
            spec=prep.payload["spec"],
            manifest=prep.payload["manifest"],
            criteria=prep.payload["criteria"],
            reasons=[],
            content_hash=prep.content,
            n_records=rel.n_records,
            n_groups=rel.n_groups,
            n_members=len(prep.hashes) if prep.hashes is not None else None,
            key_fingerprint=prep.fingerprint,
        )
        s.add(row)
        s.flush()
        rid = row.id
        _bulk_insert(s, GroupRow.__tablename__, _GROUP_COLUMNS, [(rid, *g) for g in prep.groups])
        if prep.hashes:
            _bulk_insert(
                s, MemberRow.__tablename__, _MEMBER_COLUMNS, [(rid, h) for h in prep.hashes]
            )
        return row, True

    def _attach_members(self, s: Session, row: ReleaseRow, prep: _Prepared) -> None:
        """Content identity is the content: identifier hashes given for content recorded
        without them are attached to it; hashes that differ from the recorded ones are
        refused (the same published groups cannot be two sets of people)."""
        if prep.hashes is None:
            return
        if row.n_members is None:
            row.n_members = len(prep.hashes)
            row.key_fingerprint = prep.fingerprint
            row.updated_at = _now()
            _bulk_insert(
                s, MemberRow.__tablename__, _MEMBER_COLUMNS, [(row.id, h) for h in prep.hashes]
            )
            return
        stored = sorted(
            s.scalars(select(MemberRow.id_hash).where(MemberRow.release_id == row.id)).all()
        )
        other_key = not derived_matches(row.key_fingerprint, self._derived_key())
        if other_key or stored != prep.hashes:
            raise InputError(
                f"{row.dataset} v{row.version} (release #{row.id}) holds this content with "
                f"other identifier hashes ({row.n_members:,} people recorded, "
                f"{len(prep.hashes):,} given" + (", another key" if other_key else "") + "): "
                "one content is one set of people; check the population and its identifier "
                "column"
            )

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
        identifiers: Iterable[str] | None = None,
        member_hashes: Iterable[str] | None = None,
        origin: Mapping[str, Any] | None = None,
    ) -> ReleaseInfo:
        """Record content of ``dataset`` in one transaction and return it.

        ``status="candidate"`` records the content only (publishing it takes an attempt whose
        checks pass). ``status="published"`` records a release that was *already published
        elsewhere* (importing history): it counts for every later audit, and an attempt with
        origin ``import`` says so. Identical content is recorded once (the existing release is
        returned, ``created`` False). ``version``: a label (default: the next number of the
        dataset, allocated under the dataset's lock).
        """
        dataset = _check_text(dataset, "dataset name")
        version = _check_text(str(version), "version") if version is not None else None
        if status not in ("candidate", "published"):
            raise InputError(
                f"content is recorded as candidate or published, not {status!r}: a block "
                "belongs to an attempt (the gate records it; `ledger mark-blocked` by hand)"
            )
        prep = self._prepare(
            release,
            spec=spec,
            manifest=manifest,
            criteria=criteria,
            identifiers=identifiers,
            member_hashes=member_hashes,
        )
        with self._session(write=True) as s:
            ds = self._lock_dataset(s, dataset)
            row, created = self._content(s, ds, prep, version)
            latest = None
            if status == "published" and row.status != "published":
                gated = s.scalars(
                    select(AttemptRow.uuid).where(AttemptRow.release_id == row.id).limit(1)
                ).first()
                if gated is not None:
                    raise IllegalTransition(
                        f"{row.dataset} v{row.version} (release #{row.id}) is in this ledger with "
                        f"attempt(s) to publish it (e.g. {gated}): importing it as published "
                        "history would go around the gate; publish it through its attempt"
                    )
                clash = _published_under(s, row.dataset, row.version, other_than=row.id)
                if clash is not None:
                    raise InputError(
                        f"{row.dataset!r} version {row.version!r} is already published with "
                        f"different content (release #{clash}); choose another version"
                    )
                now = _now()
                row.status, row.published_at, row.updated_at = "published", now, now
                s.add(
                    AttemptRow(
                        uuid=str(uuidlib.uuid4()),
                        release_id=row.id,
                        status="published",
                        required=[],
                        first_release=False,
                        origin=dict(origin or {}) | {"import": True},
                        reasons=["recorded as already published (imported history)"],
                        created_at=now,
                        updated_at=now,
                        decided_at=now,
                    )
                )
                latest = "published"
            else:
                latest = self._latest_status(s, row.id)
            return _info(row, latest, created=created)

    # ---------------------------------------------------------------- attempts
    def open_attempt(
        self,
        dataset: str,
        release: PublishedRelease,
        *,
        required: Sequence[str],
        version: str | None = None,
        first_release: bool = False,
        origin: Mapping[str, Any] | None = None,
        spec: Mapping[str, Any] | None = None,
        manifest: Mapping[str, Any] | None = None,
        criteria: Sequence[Mapping[str, Any]] | None = None,
        identifiers: Iterable[str] | None = None,
        member_hashes: Iterable[str] | None = None,
        content_digest: str | None = None,
    ) -> AttemptInfo:
        """Record the content (once) and open an attempt to publish it, requiring the checks
        named in ``required``. ``content_digest``: ``sha256:HEX`` of the file it was opened
        on; every check and the gate must then have read the same bytes.

        A dataset without a published release needs ``first_release=True`` (a typo in a
        dataset name must not start a new history); a dataset with one refuses it. Content
        that is already published gets an attempt in status ``already-published``: nothing is
        checked or published again, and every step says so.
        """
        dataset = _check_text(dataset, "dataset name")
        version = _check_text(str(version), "version") if version is not None else None
        names = _required(required)
        digest = _check_digest(content_digest)
        prep = self._prepare(
            release,
            spec=spec,
            manifest=manifest,
            criteria=criteria,
            identifiers=identifiers,
            member_hashes=member_hashes,
        )
        with self._session(write=True) as s:
            ds = self._lock_dataset(s, dataset)
            published = s.scalar(  # a DP release is no earlier release to audit against
                select(func.count())
                .select_from(ReleaseRow)
                .where(
                    ReleaseRow.dataset == dataset,
                    ReleaseRow.status == "published",
                    ReleaseRow.kind != DP_KIND,
                )
            )
            row, created = self._content(s, ds, prep, version)
            now = _now()
            attempt = AttemptRow(
                uuid=str(uuidlib.uuid4()),
                release_id=row.id,
                status="open",
                required=names,
                first_release=bool(first_release),
                origin=_plain(dict(origin or {}), "origin") or {},
                reasons=[],
                created_at=now,
                updated_at=now,
                content_digest=digest,
            )
            if row.status == "published":
                attempt.status = "already-published"
                attempt.decided_at = now
                attempt.reasons = [
                    f"already published as release #{row.id} ({row.dataset} v{row.version}) "
                    f"on {_iso(row.published_at)}; nothing was checked or published again"
                ]
            elif not published and not first_release:
                known = sorted(
                    set(
                        s.scalars(
                            select(ReleaseRow.dataset).where(ReleaseRow.status == "published")
                        )
                    )
                )
                raise InputError(
                    f"dataset {dataset!r} has no published release in ledger {self.url}"
                    + (f" (datasets with published releases: {', '.join(known)})" if known else "")
                    + ": a typo? If this is its first release, declare it with "
                    + f"{opt('first_release')} (no earlier release of it is then expected)"
                )
            elif published and first_release:
                raise InputError(
                    f"{opt('first_release')} is declared, but dataset {dataset!r} already has "
                    f"{published} published release(s) to audit against: remove "
                    f"{opt('first_release')}"
                )
            s.add(attempt)
            s.flush()
            return self._attempt_info(s, attempt, row, created=created)

    def open_dp_attempt(
        self,
        dataset: str,
        *,
        columns: Sequence[str],
        spec: Mapping[str, Any],
        mechanism: str,
        rho: float,
        epsilon: float | None,
        cap: Callable[[PolicyInfo | None], Cap | None],
        draw: Callable[[float, str], str],
        envelope: Callable[[AttemptInfo, Budget], Mapping[str, Any]],
        name: str,
        version: str | None = None,
        origin: Mapping[str, Any] | None = None,
        member_hashes: Iterable[str] | None = None,
    ) -> tuple[AttemptInfo | None, Budget]:
        """A differentially private release (:mod:`airflow_privacy.ledger.budget`), in one
        transaction under the dataset's lock: ``cap`` (the gate's reading of the dataset's
        policy) and the spends recorded decide whether ``rho`` (or ``epsilon``, under a
        pure-DP cap) fits; when it does not, nothing is recorded, ``draw`` is not called
        (no noise is drawn) and the attempt is None. Otherwise ``draw(room, unit)`` draws
        the noise through a privacy filter holding ``room`` in the cap's ``unit``
        (:func:`budget.room`; a filter that
        refuses raises :class:`BudgetOverdrawn`, read as a refusal) and returns the
        ``sha256:HEX`` digest of the file to publish; the release (kind
        ``dp-marginals``: no groups, no records), an open attempt requiring check ``name``,
        the spend and that check (``envelope(attempt, budget after)``, a pass) are recorded
        together: a spend never exists without its release, nor a release without its
        spend. Publishing it is the gate's, like any attempt. ``member_hashes``: the keyed
        hashes of its people, stored with it; the spend must then also fit the cap for each
        of them, over every DP release that recorded them (:func:`budget.people_spent`)."""
        dataset = _check_text(dataset, "dataset name")
        version = _check_text(str(version), "version") if version is not None else None
        given = [str(h) for h in member_hashes] if member_hashes is not None else None
        derived = self._derived_key() if given else None
        hashes = sorted(set(wrap_hashes(given, derived))) if given and derived else None
        try:
            with self._session(write=True) as s:
                if hashes:  # a person's spends span datasets: every dataset's row, in name order
                    self._lock_datasets(s)
                ds = self._lock_dataset(s, dataset)
                held = policies.active(s, dataset)
                line = cap(policies.info(held) if held is not None else None)
                before = budget.budget(s, dataset, line)
                cost = rho if line is None or line.unit == "rho" else epsilon
                if line is None or cost is None or not budget.fits(before.spent, cost, line):
                    raise _Refused(before)
                now = _now()
                row = self._dp_row(s, ds, version, columns, spec, now)
                if hashes:
                    assert derived is not None
                    row.key_fingerprint = derived_fingerprint(derived)
                    _bulk_insert(s, MemberRow.__tablename__, _MEMBER_COLUMNS,
                                 [(row.id, h) for h in hashes])  # fmt: skip
                    before = replace(before, people=budget.people_spent(s, row.id, line.unit))
                    if not budget.fits(before.people or 0.0, cost, line):
                        raise _Refused(before)
                try:  # the noise: only now, only when it fits, through OpenDP's filter
                    digest = _check_digest(draw(budget.room(before, line), line.unit))
                except BudgetOverdrawn:
                    raise _Refused(before) from None
                assert digest is not None
                row.content_hash = hashlib.sha256(f"{digest} {row.uuid}".encode()).hexdigest()
                a = AttemptRow(
                    uuid=str(uuidlib.uuid4()), release_id=row.id, status="open",
                    required=_required([name]), first_release=False,
                    origin=_plain(dict(origin or {}), "origin") or {}, reasons=[],
                    created_at=now, updated_at=now, content_digest=digest,
                )  # fmt: skip
                s.add(a)
                s.flush()
                budget.record(s, dataset=dataset, release_id=row.id, attempt_id=a.id,
                              mechanism=mechanism, rho=rho, epsilon=epsilon, now=now)  # fmt: skip
                after = budget.budget(s, dataset, line)
                if before.people is not None:
                    after = replace(after, people=before.people + cost)
                env = _plain(dict(envelope(self._attempt_info(s, a, row), after)), "the report")
                s.add(
                    CheckRow(attempt_id=a.id, name=_check_text(name, "check name", limit=255),
                             step=str(env["step"]), safe=env["safe"], outcome=str(env["outcome"]),
                             envelope=env, created_at=now)
                )  # fmt: skip
                s.flush()
                return self._attempt_info(s, a, row), after
        except _Refused as refused:  # rolled back: not even the dataset's row is left
            return None, refused.budget

    def _dp_row(
        self,
        s: Session,
        ds: DatasetRow,
        version: str | None,
        columns: Sequence[str],
        spec: Mapping[str, Any],
        now: datetime,
    ) -> ReleaseRow:
        """A DP release's row (no groups, no records; the number of its people is not
        published), its content hash pending until the noise is drawn."""
        if version is not None:
            clash = _published_under(s, ds.name, version)
            if clash is not None:
                raise InputError(
                    f"{ds.name!r} version {version!r} is already published (release "
                    f"#{clash}); choose another version"
                )
        uuid = str(uuidlib.uuid4())
        row = ReleaseRow(
            uuid=uuid, dataset=ds.name, version=version or self._label(s, ds), created_at=now,
            updated_at=now, published_at=None, status="candidate", kind=DP_KIND, sensitive="",
            qis=list(columns), spec=_plain(dict(spec), "spec"), manifest=None, criteria=None,
            reasons=[], content_hash=hashlib.sha256(f"pending {uuid}".encode()).hexdigest(),
            n_records=0, n_groups=0, n_members=None, key_fingerprint=None,
        )  # fmt: skip
        s.add(row)
        s.flush()
        return row

    def dp_budget(self, dataset: str, cap: Callable[[PolicyInfo | None], Cap | None]) -> Budget:
        """``dataset``'s DP budget now (``cap``: the gate's reading of its policy)."""

        def read(s: Session) -> Budget:
            held = policies.active(s, dataset)
            return budget.budget(s, dataset, cap(policies.info(held) if held else None))

        return self._read(read)

    def dp_spends(self, dataset: str) -> list[Spend]:
        """Every DP release's spend of ``dataset``, oldest first."""
        return self._read(lambda s: budget.history(s, dataset))

    def _attempt_row(self, s: Session, ref: str | int, lock: bool = False) -> AttemptRow:
        q = select(AttemptRow)
        if isinstance(ref, int) and not isinstance(ref, bool):
            _check_id(ref, "attempt id")
            q = q.where(AttemptRow.id == ref)
        else:
            text = str(ref).strip()
            if _decimal(text):
                rid = int(text)
                _check_id(rid, "attempt id")
                q = q.where(AttemptRow.id == rid)
            else:
                q = q.where(AttemptRow.uuid == _check_uuid(text, "attempt"))
        if lock:
            q = q.with_for_update().execution_options(populate_existing=True)
        row = s.scalars(q).first()
        if row is None:
            raise InputError(f"attempt {ref!r} does not exist in ledger {self.url}")
        return row

    def _attempt_info(
        self, s: Session, a: AttemptRow, row: ReleaseRow | None = None, created: bool = False
    ) -> AttemptInfo:
        rel = row or _release_of(s, a)
        checks = s.scalars(
            select(CheckRow).where(CheckRow.attempt_id == a.id).order_by(CheckRow.id)
        ).all()
        return AttemptInfo(
            id=a.id,
            uuid=a.uuid,
            status=a.status,
            release=_info(rel, self._latest_status(s, rel.id), created=created),
            required=list(a.required or []),
            first_release=bool(a.first_release),
            origin=dict(a.origin or {}),
            reasons=[redact(str(r)) for r in a.reasons or []],
            destination=a.destination,
            created_at=_iso(a.created_at) or "",
            updated_at=_iso(a.updated_at) or "",
            decided_at=_iso(a.decided_at),
            superseded_at=_iso(a.superseded_at),
            superseded_by=a.superseded_by,
            supersede_reason=a.supersede_reason,
            checks=[_check_info(c) for c in checks],
            content_digest=a.content_digest,
            policy_version=a.policy_version,
            override=dict(a.override) if a.override else None,
        )

    def _latest_status(self, s: Session, release_id: int) -> str | None:
        return s.scalars(
            select(AttemptRow.status)
            .where(AttemptRow.release_id == release_id)
            .order_by(AttemptRow.id.desc())
            .limit(1)
        ).first()

    def run_attempts(self, dag_id: str, run_id: str) -> list[AttemptInfo]:
        """The attempts an Airflow run opened (their origin names the DAG and the run),
        newest first."""

        def read(s: Session) -> list[AttemptInfo]:
            q = (
                select(AttemptRow)
                .where(
                    AttemptRow.origin["dag_id"].as_string() == str(dag_id),
                    AttemptRow.origin["run_id"].as_string() == str(run_id),
                )
                .order_by(AttemptRow.id.desc())
                .limit(100)
            )
            return [self._attempt_info(s, a) for a in s.scalars(q).all()]

        return self._read(read)

    def attempt(self, ref: str | int) -> AttemptInfo:
        """An attempt by UUID or id, with its checks."""
        return self._read(lambda s: self._attempt_info(s, self._attempt_row(s, ref)))

    def attempts(self, release_id: int) -> list[AttemptInfo]:
        """Every attempt of a release, oldest first."""

        def go(s: Session) -> list[AttemptInfo]:
            row = self._row(s, release_id)
            rows = s.scalars(
                select(AttemptRow).where(AttemptRow.release_id == row.id).order_by(AttemptRow.id)
            ).all()
            return [self._attempt_info(s, a, row) for a in rows]

        return self._read(go)

    def record_check(
        self,
        attempt: str | int,
        *,
        name: str,
        step: str,
        safe: bool | None,
        outcome: str,
        envelope: Mapping[str, Any],
        content_digest: str | None = None,
        reads_release: bool = True,
    ) -> AttemptInfo:
        """Record (or replace) check ``name`` of an open attempt. A decided attempt takes no
        more checks (:class:`IllegalTransition`); an ``already-published`` one ignores them.

        The check must have read the attempt's file: with a ``content_digest`` recorded at
        opening, ``content_digest`` (``sha256:HEX`` of the bytes the check read) must equal
        it (a check of a table, None, is refused under an attempt on a file);
        ``reads_release=False`` (a custom check of something else, e.g. the source data)
        is not compared. A failed verdict
        stands: it is never replaced by a later run of the same check (a new attempt judges
        afresh). ``safe`` and ``outcome`` must be the envelope's own."""
        name = _check_text(name, "check name", limit=255)
        step = _check_text(step, "step", limit=32)
        outcome = _check_text(outcome, "outcome", limit=32)
        if safe is not None and not isinstance(safe, bool):
            raise InputError(f"a verdict is true, false or none, got {safe!r}")
        if envelope.get("safe", safe) is not safe or envelope.get("outcome", outcome) != outcome:
            raise InputError(
                f"check {name!r}: the verdict recorded ({safe!r}, {outcome!r}) is not its "
                f"report's ({envelope.get('safe')!r}, {envelope.get('outcome')!r})"
            )
        digest = _check_digest(content_digest)
        payload = _plain(dict(envelope), "the check's report")
        with self._session(write=True) as s:
            a = self._attempt_row(s, attempt, lock=True)
            if a.status == "already-published":
                return self._attempt_info(s, a)
            if a.status != "open":
                raise IllegalTransition(
                    f"attempt {a.uuid} was already decided ({a.status} at {_iso(a.decided_at)}): "
                    "a decided attempt takes no more checks; open a new attempt"
                )
            if reads_release and a.content_digest is not None and digest != a.content_digest:
                raise InputError(
                    f"check {name!r} did not read the file attempt {a.uuid} was opened on "
                    + ("(it read a table)" if digest is None else "(other bytes)")
                    + ": a check of another file is not a check of this attempt; give the "
                    "check the attempt's release"
                )
            earlier = s.scalars(
                select(CheckRow).where(CheckRow.attempt_id == a.id, CheckRow.name == name)
            ).first()
            if earlier is not None and earlier.safe is False:
                raise IllegalTransition(
                    f"check {name!r} of attempt {a.uuid} already failed "
                    f"({_iso(earlier.created_at)}): a failed verdict stands for its attempt; "
                    "open a new attempt to judge the content afresh"
                )
            if earlier is not None:
                s.delete(earlier)
                s.flush()
            s.add(
                CheckRow(
                    attempt_id=a.id,
                    name=name,
                    step=step,
                    safe=safe,
                    outcome=outcome,
                    envelope=payload,
                    created_at=_now(),
                )
            )
            a.updated_at = _now()
            s.flush()
            return self._attempt_info(s, a)

    def decide(
        self,
        attempt: str | int,
        *,
        rules: Callable[[AttemptInfo, PolicyInfo | None], Sequence[str]],
        reasons: Sequence[str] = (),
        destination: str | None = None,
    ) -> AttemptInfo:
        """The gate: read back every check of the attempt and decide, in one transaction.

        Blocked (with every reason) when the caller found a problem (``reasons``, e.g. the
        file to publish is not the one checked), when ``rules`` (the gate's blocking rules,
        :func:`airflow_privacy.gate.rules.reasons`, given the attempt as this transaction
        reads it and its dataset's active policy) name one, or when what the checks read is
        no longer the ledger's state.
        Otherwise the attempt moves to ``publishing`` and the content to ``published`` (from
        now on it counts in every audit); :meth:`finish_publish` completes it once the files
        are in place. A decided attempt is returned as it is (a re-run of the gate is
        idempotent).

        Locks: the dataset's row, and with a composition audit among the checks every
        dataset's row (in name order, like every writer: no deadlock), so that two attempts
        in each other's audit scope never both publish (PostgreSQL reads at READ COMMITTED).
        """
        with self._session(write=True) as s:
            # the dataset's lock first (like every writer of the dataset: no deadlock), so
            # that no other writer publishes under the same label between check and write
            unlocked = self._attempt_row(s, attempt)  # read once, without a lock: what to lock
            audited = s.scalar(
                select(func.count())
                .select_from(CheckRow)
                .where(CheckRow.attempt_id == unlocked.id, CheckRow.step == "audit")
            )
            if audited:
                self._lock_datasets(s)
            else:
                self._lock_dataset(s, self._dataset_of(s, unlocked))
            a = self._attempt_row(s, attempt, lock=True)
            if a.status == "superseded":
                raise IllegalTransition(
                    f"attempt {a.uuid} was blocked and then superseded by {a.superseded_by}: "
                    "open a new attempt"
                )
            if a.status != "open":
                return self._attempt_info(s, a)
            row = _release_of(s, a, lock=True)
            now = _now()
            if row.status == "published":  # another attempt of the same content published it
                a.status, a.updated_at, a.decided_at = "already-published", now, now
                a.reasons = [
                    f"already published as release #{row.id} ({row.dataset} v{row.version}) "
                    f"on {_iso(row.published_at)} by another attempt; nothing was published "
                    "again"
                ]
                s.flush()
                return self._attempt_info(s, a, row)
            checks = s.scalars(
                select(CheckRow).where(CheckRow.attempt_id == a.id).order_by(CheckRow.id)
            ).all()
            problems = [_check_text(str(r), "reason") for r in reasons]
            policy = policies.active(s, row.dataset)
            a.policy_version = policy.version if policy is not None else None
            found = [
                str(r)
                for r in rules(
                    self._attempt_info(s, a, row),
                    policies.info(policy) if policy is not None else None,
                )
            ]
            reasons = problems + found + self._stale_reasons(s, a, row, checks)
            if not reasons:
                clash = _published_under(s, row.dataset, row.version, other_than=row.id)
                if clash is not None:
                    reasons = [
                        f"version {row.version!r} of {row.dataset!r} is already published "
                        f"(release #{clash}): open the attempt under another version"
                    ]
            a.updated_at = a.decided_at = now
            if reasons:
                a.status, a.reasons = "blocked", reasons
            else:
                a.status, a.destination = "publishing", destination
                row.status, row.published_at, row.updated_at = "published", now, now
            s.flush()
            return self._attempt_info(s, a, row)

    def _stale_reasons(
        self, s: Session, a: AttemptRow, row: ReleaseRow, checks: Sequence[CheckRow]
    ) -> list[str]:
        """Why what the checks saw is no longer the ledger's state (under the dataset lock):
        a release published since a declared first release was opened, or since a
        composition audit read the ledger (it was not audited against)."""
        reasons: list[str] = []
        # a DP release composes by its budget, not by intersection: no audit reads it
        others = select(ReleaseRow.id, ReleaseRow.dataset, ReleaseRow.version).where(
            ReleaseRow.status == "published", ReleaseRow.id != row.id, ReleaseRow.kind != DP_KIND
        )
        if a.first_release:
            since = s.execute(others.where(ReleaseRow.dataset == row.dataset)).first()
            if since is not None:
                reasons.append(
                    f"declared a first release, but release #{since[0]} ({since[1]} "
                    f"v{since[2]}) was published since the attempt was opened: open a new "
                    "attempt (it is audited against that release)"
                )
        own = others.where(ReleaseRow.dataset == row.dataset).order_by(ReleaseRow.id)
        sharing = _sharing(s, row.id) if row.n_members else []
        for c in checks:
            env = c.envelope if isinstance(c.envelope, dict) else {}
            scope = (env.get("details") or {}).get("ledger_scope")
            if c.step != "audit" or not isinstance(scope, dict):
                continue
            seen = {int(i) for i in scope.get("seen") or []}
            # the scope is people: a published release sharing people with this one
            # (whatever its dataset's name) must have been audited against
            unseen = [i for i in sharing if i not in seen]
            if unseen:
                named = s.execute(
                    select(ReleaseRow.id, ReleaseRow.dataset, ReleaseRow.version).where(
                        ReleaseRow.id.in_(unseen[:5])
                    )
                ).all()
                names = ", ".join(f"#{r[0]} ({r[1]} v{r[2]})" for r in named)
                reasons.append(
                    f"{c.name}: published release(s) {names} share people with this release "
                    "(by their identifier hashes) but the audit did not read them: audit "
                    "against them (under this attempt the audit includes them by itself)"
                )
            if scope.get("fixed"):
                # releases named by hand: every published release of its own dataset among them
                missed = [r for r in s.execute(own).all() if r[0] not in seen]
                if missed:
                    names = ", ".join(f"#{r[0]} ({r[1]} v{r[2]})" for r in missed[:5])
                    reasons.append(
                        f"{c.name}: the audit's releases leave out published release(s) "
                        f"{names} of the attempt's own dataset: audit against them too"
                    )
                continue
            q = others
            if scope.get("datasets") is not None:
                q = q.where(ReleaseRow.dataset.in_([str(d) for d in scope["datasets"]]))
            new = [r for r in s.execute(q.order_by(ReleaseRow.id)).all() if r[0] not in seen]
            if new:
                names = ", ".join(f"#{r[0]} ({r[1]} v{r[2]})" for r in new[:5])
                reasons.append(
                    f"{c.name}: release(s) {names} were published after this audit read the "
                    "ledger, so the candidate was not audited against them: open a new attempt"
                )
        return reasons

    def finish_publish(self, attempt: str | int) -> AttemptInfo:
        """``publishing`` -> ``published`` once the files are in place (idempotent)."""
        with self._session(write=True) as s:
            a = self._attempt_row(s, attempt, lock=True)
            if a.status in ("published", "already-published"):
                return self._attempt_info(s, a)
            if a.status != "publishing":
                raise IllegalTransition(
                    f"attempt {a.uuid} is {a.status}, not publishing: only the gate publishes"
                )
            a.status, a.updated_at = "published", _now()
            return self._attempt_info(s, a)

    def block(
        self, attempt: str | int, reasons: Sequence[str], by: str | None = None
    ) -> AttemptInfo:
        """Block an open attempt by hand (a steward's decision), with reasons."""
        clean = [_check_text(str(r), "reason") for r in reasons]
        if not clean:
            raise InputError("a block needs at least one reason")
        if by:
            clean.append(f"blocked by {_check_text(by, 'name')}")
        with self._session(write=True) as s:
            a = self._attempt_row(s, attempt, lock=True)
            if a.status == "blocked":
                a.reasons = list(a.reasons or []) + [r for r in clean if r not in (a.reasons or [])]
            elif a.status == "open":
                a.status, a.reasons, a.decided_at = "blocked", clean, _now()
            else:
                raise IllegalTransition(
                    f"attempt {a.uuid} is {a.status}: only an open attempt can be blocked"
                )
            a.updated_at = _now()
            return self._attempt_info(s, a)

    def supersede(self, attempt: str | int, reason: str, by: str) -> AttemptInfo:
        """A steward sets a blocked attempt aside (who, when and why are kept); the release
        is no longer shown as blocked, and a new attempt judges it afresh.

        Four eyes: when the dataset has a policy, this only *asks* (the attempt stays
        blocked, the request is pending in ``override`` with ``kind="supersede"``); it takes
        effect when a second, different person approves it (:meth:`decide_override`). A
        dataset without a policy (recorded before policies existed) is set aside at once."""
        reason = _check_text(reason, "reason")
        by = _check_text(by, "steward name")
        with self._session(write=True) as s:
            a = self._attempt_row(s, attempt, lock=True)
            if a.status != "blocked":
                raise IllegalTransition(
                    f"attempt {a.uuid} is {a.status}: only a blocked attempt can be superseded"
                )
            self._refuse_pending(a)
            row = _release_of(s, a)
            now = _now()
            if policies.active(s, row.dataset) is not None:
                a.override = {
                    "kind": "supersede", "requested_by": by, "requested_at": _iso(now),
                    "request_reason": reason, "outcome": "pending",
                }  # fmt: skip
                a.updated_at = now
                s.flush()
                return self._attempt_info(s, a, row)
            a.status, a.superseded_at, a.superseded_by = "superseded", now, by
            a.supersede_reason, a.updated_at = reason, now
            return self._attempt_info(s, a, row)

    @staticmethod
    def _refuse_pending(a: AttemptRow) -> None:
        pending = a.override or {}
        if pending.get("outcome") == "pending":
            raise IllegalTransition(
                f"a {pending.get('kind') or 'override'} of attempt {a.uuid} asked by "
                f"{pending.get('requested_by')} is waiting for a second person: approve or "
                "reject it first"
            )

    # -------------------------------------------------------------------- overrides
    def request_override(self, attempt: str | int, *, by: str, reason: str) -> AttemptInfo:
        """Ask to publish a blocked attempt despite its reasons (a steward's decision that
        takes effect only when a second, different person approves it)."""
        by = _check_text(by, "name", limit=255)
        reason = _check_text(reason, "reason")
        with self._session(write=True) as s:
            a = self._attempt_row(s, attempt, lock=True)
            if a.status != "blocked":
                raise IllegalTransition(
                    f"attempt {a.uuid} is {a.status}: only a blocked attempt can be overridden"
                )
            self._refuse_pending(a)
            a.override = {
                "kind": "override", "requested_by": by, "requested_at": _iso(_now()),
                "request_reason": reason, "outcome": "pending",
            }  # fmt: skip
            a.updated_at = _now()
            s.flush()
            return self._attempt_info(s, a)

    def decide_override(
        self,
        attempt: str | int,
        *,
        approve: bool,
        by: str,
        reason: str,
        destination: str | None = None,
        set_aside: bool = False,
    ) -> AttemptInfo:
        """A second person approves (an override: the attempt moves to ``publishing`` and its
        content to ``published``, :meth:`finish_publish` completes it; a supersede: the
        attempt is set aside) or rejects a pending override or supersede.
        ``set_aside``: the second person approves a pending override as a supersede instead
        (the steward's third answer: the block no longer stands, nothing is published; the
        request is recorded as a supersede, ``asked_as`` override).
        Never by the person who asked; when the dataset's policy names approvers, only by
        one of them. The policy version in force is recorded."""
        by = _check_text(by, "name", limit=255)
        reason = _check_text(reason, "reason")
        with self._session(write=True) as s:
            self._lock_datasets(s)
            a = self._attempt_row(s, attempt, lock=True)
            pending = dict(a.override or {})
            if a.status != "blocked" or pending.get("outcome") != "pending":
                raise IllegalTransition(
                    f"attempt {a.uuid} has no override or supersede waiting for a decision "
                    f"({a.status})"
                )
            asked = str(pending.get("requested_by") or "")
            kind = str(pending.get("kind") or "override")
            if by.strip().casefold() == asked.strip().casefold():
                raise IllegalTransition(
                    f"the {kind} of attempt {a.uuid} was asked by {asked}: a second, "
                    "different person approves or rejects it (four eyes)"
                )
            row = _release_of(s, a, lock=True)
            policy = policies.active(s, row.dataset)
            approvers = (
                [str(x) for x in ((policy.policy or {}).get("approvers") or [])] if policy else []
            )
            if approvers and by not in approvers:
                raise IllegalTransition(
                    f"{by} may not approve a {kind} of {row.dataset!r}: its policy "
                    f"v{policy.version if policy else '?'} names {', '.join(approvers)}"
                )
            now = _now()
            if approve and set_aside and kind != "supersede":
                kind = "supersede"
                pending.update(kind=kind, asked_as="override")
            pending.update(
                decided_by=by, decided_at=_iso(now), decision_reason=reason,
                outcome="approved" if approve else "rejected",
                policy_version=policy.version if policy else None,
            )  # fmt: skip
            a.override, a.updated_at = pending, now
            if approve and kind == "supersede":
                a.status, a.superseded_at, a.superseded_by = "superseded", now, asked
                a.supersede_reason = (
                    reason if set_aside else str(pending.get("request_reason") or reason)
                )
            elif approve:
                if row.status == "published":
                    raise IllegalTransition(
                        f"{row.dataset} v{row.version} is already published by another attempt"
                    )
                clash = _published_under(s, row.dataset, row.version, other_than=row.id)
                if clash is not None:
                    raise IllegalTransition(
                        f"version {row.version!r} of {row.dataset!r} is already published "
                        f"(release #{clash})"
                    )
                a.status, a.destination, a.decided_at = "publishing", destination, now
                a.policy_version = policy.version if policy else None
                row.status, row.published_at, row.updated_at = "published", now, now
            s.flush()
            return self._attempt_info(s, a, row)

    def open_attempt_of(self, release_id: int) -> AttemptInfo:
        """The latest open attempt of a release (for the by-hand commands)."""

        def go(s: Session) -> AttemptInfo:
            row = self._row(s, release_id)
            a = s.scalars(
                select(AttemptRow)
                .where(AttemptRow.release_id == row.id, AttemptRow.status == "open")
                .order_by(AttemptRow.id.desc())
            ).first()
            if a is None:
                raise IllegalTransition(
                    f"release #{row.id} ({row.dataset} v{row.version}) has no open attempt"
                )
            return self._attempt_info(s, a, row)

        return self._read(go)

    # -------------------------------------------------------------------- policies
    def policy(self, dataset: str) -> PolicyInfo | None:
        """The policy in force for ``dataset`` (None: it has none)."""
        dataset = _check_text(dataset, "dataset name")

        def go(s: Session) -> PolicyInfo | None:
            row = policies.active(s, dataset)
            return policies.info(row) if row is not None else None

        return self._read(go)

    def policy_history(self, dataset: str) -> list[PolicyInfo]:
        """Every version of ``dataset``'s policy, oldest first (proposed and rejected too)."""
        dataset = _check_text(dataset, "dataset name")
        return self._read(lambda s: [policies.info(r) for r in policies.history(s, dataset)])

    def policy_datasets(self) -> list[str]:
        """The datasets that have a policy in force."""
        return self._read(policies.datasets_with_policy)

    def set_policy(
        self,
        dataset: str,
        policy: Mapping[str, Any],
        *,
        by: str,
        reason: str,
        loosens: Callable[[PolicyInfo | None], Sequence[str]],
    ) -> PolicyInfo:
        """Record a new version of ``dataset``'s policy (:mod:`airflow_privacy.ledger.policies`);
        ``loosens`` (the gate's) names what it weakens against the active version, read in
        this transaction, under the dataset's lock."""
        dataset = _check_text(dataset, "dataset name")
        by = _check_text(by, "name", limit=255)
        reason = _check_text(reason, "reason")
        payload = _plain(dict(policy), "policy")
        with self._session(write=True) as s:
            self._lock_dataset(s, dataset)
            current = policies.active(s, dataset)
            weaker = [
                str(x) for x in loosens(policies.info(current) if current is not None else None)
            ]
            row = policies.propose(
                s, dataset, payload, by=by, reason=reason, loosens=weaker, now=_now()
            )
            return policies.info(row)

    def decide_policy(
        self, dataset: str, version: int, *, approve: bool, by: str, reason: str
    ) -> PolicyInfo:
        """Approve or reject a proposed version (never by its proposer)."""
        dataset = _check_text(dataset, "dataset name")
        by = _check_text(by, "name", limit=255)
        reason = _check_text(reason, "reason")
        version = _check_id(version, "policy version")
        with self._session(write=True) as s:
            self._lock_dataset(s, dataset)
            row = policies.decide(
                s, dataset, version, approve=approve, by=by, reason=reason, now=_now()
            )
            return policies.info(row)

    # ------------------------------------------------------------ by-hand paths
    def mark_published(
        self, release_id: int, rules: Callable[[AttemptInfo, PolicyInfo | None], Sequence[str]]
    ) -> AttemptInfo:
        """Publish a release's open attempt through the gate (no files are copied): it is
        published only when every check of the attempt passed (``rules``: the gate's,
        :func:`airflow_privacy.gate.rules.reasons`), else it is blocked."""
        attempt = self.open_attempt_of(release_id)
        decided = self.decide(attempt.uuid, rules=rules)
        if decided.status == "publishing":
            return self.finish_publish(decided.uuid)
        return decided

    def mark_blocked(
        self, release_id: int, reasons: Sequence[str], by: str | None = None
    ) -> AttemptInfo:
        """Block a release's open attempt by hand."""
        return self.block(self.open_attempt_of(release_id).uuid, reasons, by)

    def delete(self, release_id: int) -> None:
        """Remove content that was never published, with its attempts (published releases are
        history: refused)."""
        with self._session(write=True) as s:
            row = self._row(s, release_id)
            # under the dataset's lock: the gate cannot publish it between check and delete
            self._lock_dataset(s, row.dataset)
            s.refresh(row)
            if row.status == "published":
                raise IllegalTransition(f"release #{release_id} is published; it cannot be deleted")
            if s.scalar(select(func.count()).select_from(DPSpendRow).where(
                DPSpendRow.release_id == row.id
            )):  # fmt: skip
                raise IllegalTransition(
                    f"release #{release_id} spent privacy budget (a DP release): its spend and "
                    "its release are kept for good; it cannot be deleted"
                )
            ids = list(s.scalars(select(AttemptRow.id).where(AttemptRow.release_id == row.id)))
            if ids:
                s.execute(delete(ReportRow).where(ReportRow.attempt_id.in_(ids)))
                s.execute(delete(CheckRow).where(CheckRow.attempt_id.in_(ids)))
                s.execute(delete(AttemptRow).where(AttemptRow.id.in_(ids)))
            s.execute(delete(MemberRow).where(MemberRow.release_id == release_id))
            s.execute(delete(GroupRow).where(GroupRow.release_id == release_id))
            s.execute(delete(ReleaseRow).where(ReleaseRow.id == release_id))

    # ----------------------------------------------------------------- reports
    def attach_report(self, attempt: str | int, report: Mapping[str, Any]) -> str:
        """Store the release report of an attempt (a JSON-compatible mapping), replacing an
        earlier one, in one transaction. Returns when it was stored (ISO 8601, UTC)."""
        if not isinstance(report, Mapping):
            raise InputError(f"a release report is a mapping, got {type(report).__name__}")
        payload = _plain(dict(report), "the release report")
        with self._session(write=True) as s:
            a = self._attempt_row(s, attempt, lock=True)
            now = _now()
            stored = s.get(ReportRow, a.id)
            if stored is None:
                s.add(ReportRow(attempt_id=a.id, release_id=a.release_id, created_at=now,
                                report=payload))  # fmt: skip
            else:
                stored.report, stored.created_at = payload, now
            return _iso(now) or ""

    def report(self, release_id: int) -> dict[str, Any] | None:
        """The report a release is shown with (None when none was stored): the one of the
        attempt that published it, else the newest. A later run of published content (an
        ``already-published`` attempt) stores its own report and never hides the deciding
        one."""

        def go(s: Session) -> dict[str, Any] | None:
            self._row(s, release_id)
            rows = s.execute(
                select(ReportRow, AttemptRow.status)
                .join(AttemptRow, AttemptRow.id == ReportRow.attempt_id)
                .where(ReportRow.release_id == release_id)
                .order_by(ReportRow.attempt_id.desc())
            ).all()
            deciding = [r for r, status in rows if status in ("published", "publishing")]
            row = deciding[0] if deciding else (rows[0][0] if rows else None)
            return dict(row.report) if row is not None else None

        return self._read(go)

    def reported_attempts(self, release_id: int) -> list[str]:
        """The UUIDs of a release's attempts that have a stored report."""
        return self._read(
            lambda s: list(
                s.scalars(
                    select(AttemptRow.uuid)
                    .join(ReportRow, ReportRow.attempt_id == AttemptRow.id)
                    .where(ReportRow.release_id == release_id)
                    .order_by(AttemptRow.id)
                ).all()
            )
        )

    def attempt_report(self, attempt: str | int) -> dict[str, Any] | None:
        """The stored report of one attempt."""

        def go(s: Session) -> dict[str, Any] | None:
            a = self._attempt_row(s, attempt)
            row = s.get(ReportRow, a.id)
            return dict(row.report) if row is not None else None

        return self._read(go)

    def report_times(self, release_ids: Iterable[int] | None = None) -> dict[int, str]:
        """``{release id: when its newest report was stored}`` for releases that have one."""
        q = select(ReportRow.release_id, func.max(ReportRow.created_at)).group_by(
            ReportRow.release_id
        )
        if release_ids is not None:
            q = q.where(ReportRow.release_id.in_([int(r) for r in release_ids]))
        return self._read(
            lambda s: {int(rid): _iso(ts) or "" for rid, ts in s.execute(q) if ts is not None}
        )

    # ------------------------------------------------------------------- reads
    def _row(self, s: Session, release_id: int) -> ReleaseRow:
        _check_id(release_id, "release id")
        row = s.get(ReleaseRow, release_id)
        if row is None:
            raise InputError(f"release #{release_id} does not exist in ledger {self.url}")
        return row

    def info(self, release_id: int) -> ReleaseInfo:
        def go(s: Session) -> ReleaseInfo:
            row = self._row(s, release_id)
            return _info(row, self._latest_status(s, row.id))

        return self._read(go)

    def by_uuid(self, uuid: str) -> ReleaseInfo:
        key = _check_uuid(uuid, "release")

        def go(s: Session) -> ReleaseInfo:
            row = s.scalars(select(ReleaseRow).where(ReleaseRow.uuid == key)).first()
            if row is None:
                raise InputError(f"release {uuid} does not exist in ledger {self.url}")
            return _info(row, self._latest_status(s, row.id))

        return self._read(go)

    def find(self, dataset: str, version: str) -> ReleaseInfo:
        """A release by dataset and version label (the published one when several unpublished
        contents carried the label, else the newest)."""

        def go(s: Session) -> ReleaseInfo:
            rows = s.scalars(
                select(ReleaseRow)
                .where(ReleaseRow.dataset == dataset, ReleaseRow.version == str(version))
                .order_by(ReleaseRow.id.desc())
            ).all()
            if not rows:
                raise InputError(f"{dataset!r} version {version!r} is not in ledger {self.url}")
            row = next((r for r in rows if r.status == "published"), rows[0])
            return _info(row, self._latest_status(s, row.id))

        return self._read(go)

    def resolve(self, ref: str) -> ReleaseInfo:
        """A release by ``ID`` / ``#ID``, UUID or ``DATASET@VERSION``."""
        text = str(ref).strip()
        if "@" in text:
            dataset, _, version = text.rpartition("@")
            return self.find(dataset, version)
        if _looks_like_uuid(text):
            return self.by_uuid(text)
        digits = text.lstrip("#")
        if not _decimal(digits):
            raise InputError(
                f"{ref!r} is not a release reference (use an id such as 3, a UUID, or "
                "DATASET@VERSION)"
            )
        return self.info(int(digits))

    def datasets(self) -> list[str]:
        """Every dataset with at least one recorded release."""
        return self._read(lambda s: sorted(set(s.scalars(select(ReleaseRow.dataset).distinct()))))

    def list(
        self,
        dataset: str | None = None,
        status: str | None = None,
        datasets: Sequence[str] | None = None,
    ) -> list[ReleaseInfo]:
        """Releases, oldest first, optionally of one dataset / several / one status (as
        shown: published, blocked, superseded, candidate)."""
        if status is not None and status not in STATUSES:
            raise InputError(f"unknown status {status!r} (known: {', '.join(STATUSES)})")
        q = select(ReleaseRow).order_by(ReleaseRow.id)
        if dataset is not None:
            q = q.where(ReleaseRow.dataset == dataset)
        if datasets:
            q = q.where(ReleaseRow.dataset.in_(list(datasets)))
        if status == "published":
            q = q.where(ReleaseRow.status == "published")

        def go(s: Session) -> list[ReleaseInfo]:
            rows = s.scalars(q).all()
            latest: dict[int, str] = {}
            if rows:
                sub = (
                    select(AttemptRow.release_id, func.max(AttemptRow.id).label("last"))
                    .group_by(AttemptRow.release_id)
                    .subquery()
                )
                pairs = s.execute(
                    select(AttemptRow.release_id, AttemptRow.status).join(
                        sub, AttemptRow.id == sub.c.last
                    )
                ).all()
                latest = {int(r): str(st) for r, st in pairs}
            infos = [_info(r, latest.get(r.id)) for r in rows]
            return [i for i in infos if status is None or i.status == status]

        return self._read(go)

    def release(self, release_id: int) -> PublishedRelease:
        """The published groups of a release, named ``DATASET vVERSION``."""

        def go(s: Session) -> PublishedRelease:
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

        return self._read(go)

    def member_hashes(self, release_id: int) -> frozenset[str] | None:
        """The identifier hashes of a release (None when none were recorded). Refuses hashes
        made with another key than this ledger's (they could not be compared)."""

        if self._read(lambda s: self._row(s, release_id).n_members) is None:
            return None
        derived = self._derived_key()  # before the read: it may wrap hashes stored unwrapped

        def go(s: Session) -> frozenset[str] | None:
            row = self._row(s, release_id)
            if row.n_members is None:
                return None
            if not derived_matches(row.key_fingerprint, derived):
                raise InputError(
                    f"release #{row.id} ({row.dataset} v{row.version}) was hashed with another "
                    f"key than the one in {self.key_env}; set it to the key used then"
                )
            return frozenset(
                s.scalars(select(MemberRow.id_hash).where(MemberRow.release_id == release_id))
            )

        return self._read(go)

    def sharing_releases(self, release_id: int) -> Sequence[int]:
        """The published releases (other than ``release_id``) that share at least one person
        with it, by their identifier hashes (empty when it recorded none)."""
        return self._read(lambda s: _sharing(s, release_id))

    def stored_member_hashes(self, release_id: int) -> Sequence[str]:
        """The identifier hashes stored with a release, as stored (for its content hash)."""

        def go(s: Session) -> Sequence[str]:
            self._row(s, release_id)
            return tuple(
                s.scalars(select(MemberRow.id_hash).where(MemberRow.release_id == release_id))
            )

        return self._read(go)

    def verify(self, release_id: int) -> bool:
        """True when the stored groups (and hashes) still hash to the stored content hash."""
        info = self.info(release_id)
        rel = self.release(release_id)
        return rel.content_hash() == info.content_hash


def _bulk_insert(
    s: Session, name: str, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
) -> None:
    """Insert ``rows`` (values in ``columns`` order, JSON already serialized) into table
    ``name`` within the session's transaction, through the driver's bulk path: PostgreSQL
    ``COPY`` (psycopg 3), SQLite ``executemany``, else Core executemany. Table and column
    names are this module's constants; every value goes in as data, never as SQL text."""
    if not rows:
        return
    conn = s.connection()
    dialect = conn.dialect
    raw: Any = conn.connection.dbapi_connection
    cols = ", ".join(columns)
    if dialect.name == "postgresql" and dialect.driver == "psycopg":
        statement = f"COPY {name} ({cols}) FROM STDIN"
        try:
            with raw.cursor() as cur, cur.copy(statement) as copy:
                for row in rows:
                    copy.write_row(row)
        except dialect.loaded_dbapi.Error as exc:
            raise DBAPIError.instance(statement, None, exc, dialect.loaded_dbapi.Error) from exc
        return
    if dialect.name == "sqlite":
        statement = f"INSERT INTO {name} ({cols}) VALUES ({', '.join('?' for _ in columns)})"
        cur = raw.cursor()
        try:
            cur.executemany(statement, rows)
        except dialect.loaded_dbapi.Error as exc:
            raise DBAPIError.instance(statement, None, exc, dialect.loaded_dbapi.Error) from exc
        finally:
            cur.close()
        return
    target = table(name, *(column(c) for c in columns))  # pragma: no cover - other databases
    for start in range(0, len(rows), _BATCH):  # pragma: no cover
        conn.execute(
            insert(target),
            [dict(zip(columns, r, strict=True)) for r in rows[start : start + _BATCH]],
        )


class _Refused(PrivacyGateError):
    """A DP release the budget does not hold: raised inside its transaction to roll it
    back, caught by :meth:`ReleaseLedger.open_dp_attempt`."""

    def __init__(self, budget: Budget) -> None:
        super().__init__("refused")
        self.budget = budget


def _sharing(s: Session, release_id: int) -> list[int]:
    """:meth:`ReleaseLedger.sharing_releases` in session ``s``."""
    mine = MemberRow.__table__.alias("mine")
    theirs = MemberRow.__table__.alias("theirs")
    q = (
        select(theirs.c.release_id)
        .distinct()
        .select_from(mine.join(theirs, mine.c.id_hash == theirs.c.id_hash))
        .join(ReleaseRow, ReleaseRow.id == theirs.c.release_id)
        .where(
            mine.c.release_id == release_id,
            theirs.c.release_id != release_id,
            ReleaseRow.status == "published",
        )
    )
    return sorted(int(r) for r in s.scalars(q))


def _published_under(
    s: Session, dataset: str, version: str, other_than: int | None = None
) -> int | None:
    """The id of the published release labelled ``dataset`` ``version`` (other than release
    ``other_than``), if any: a published label names one content."""
    q = select(ReleaseRow.id).where(
        ReleaseRow.dataset == dataset,
        ReleaseRow.version == version,
        ReleaseRow.status == "published",
    )
    if other_than is not None:
        q = q.where(ReleaseRow.id != other_than)
    return s.scalars(q.limit(1)).first()


def _required(required: Sequence[str]) -> list[str]:
    if isinstance(required, str) or not isinstance(required, Sequence):
        raise InputError(f"the required checks are a list of names, got {type(required).__name__}")
    names = [_check_text(str(n), "check name") for n in required]
    if not names:
        raise InputError("an attempt needs at least one required check: name the checks")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"required check {dupes[0]!r} is named twice")
    return names


def _check_digest(digest: str | None) -> str | None:
    if digest is None:
        return None
    if (
        not isinstance(digest, str)
        or not digest.startswith("sha256:")
        or len(digest) != 71
        or any(ch not in "0123456789abcdef" for ch in digest[7:])
    ):
        raise InputError(f"a content digest is sha256: and 64 hex digits, got {digest!r:.80}")
    return digest


def _decimal(text: str) -> bool:
    """ASCII digits only, and few enough that ``int`` takes them (``'²'.isdigit()`` is true,
    and Python refuses to convert more than 4,300 digits): longer is out of range anyway."""
    return 0 < len(text) <= 30 and text.isascii() and text.isdigit()


def _looks_like_uuid(text: str) -> bool:
    try:
        uuidlib.UUID(text)
    except ValueError:
        return False
    return len(text) == 36


def _check_uuid(text: str, what: str) -> str:
    if not _looks_like_uuid(text):
        article = "an" if what[:1] in "aeiou" else "a"
        raise InputError(f"{text[:60]!r} is not {article} {what} id or UUID")
    return str(uuidlib.UUID(text))


def _check_id(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"a {what} is a whole number, got {value!r}")
    if not 1 <= value <= MAX_ID:
        raise InputError(f"a {what} is between 1 and {MAX_ID:,}, got {value}")
    return value


def _check_text(value: str, what: str, limit: int | None = None) -> str:
    """Text the ledger stores: not blank, no NUL, at most ``limit`` characters (the column's
    width; names are at most 255)."""
    if not isinstance(value, str):
        raise InputError(f"the {what} must be text, got {type(value).__name__}")
    if not value.strip():
        raise InputError(f"the {what} is empty")
    if limit is None and what in ("dataset name", "version", "check name", "steward name"):
        limit = 255
    if limit is not None and len(value) > limit:
        raise InputError(f"the {what} is longer than {limit} characters")
    if "\x00" in value:
        raise InputError(f"the {what} contains a NUL character")
    return value
