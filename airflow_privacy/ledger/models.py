"""The ledger's tables (SQLAlchemy 2 declarative models).

Only what was (or would be) published is stored: per release its metadata, spec, manifest,
content hash and, per group, its descriptor (generalized QI labels, centroid, or bucket id
with the bucket's exact QI tuples) and its sensitive multiset; optionally the keyed hashes
of an identifier column (never the identifiers). No raw records.

The lifecycle (docs/design.md):

* ``ledger_datasets``: one row per dataset, the lock that serializes writers of one dataset
  and the counter that numbers its versions (no retry storms when many write at once);
* ``ledger_releases``: a release is *content* (groups + multisets + member hashes), recorded
  once per dataset; ``candidate`` until an attempt publishes it, then ``published``;
* ``ledger_attempts``: one try at publishing a release, with the checks it requires; it is
  ``open`` until the gate decides: ``blocked`` (with every reason) or ``publishing`` ->
  ``published``; ``already-published`` when its content was published before; a steward
  may move a blocked attempt to ``superseded`` (who, when, why are kept);
* ``ledger_checks``: the report envelope of every check of an attempt (one per name);
* ``ledger_reports``: the release report of an attempt;
* ``ledger_policies``: what every release of a dataset must pass, versioned (who, when,
  why); a change that loosens anything is ``proposed`` until a second person approves it;
* ``ledger_dp_spends``: the privacy budget a differentially private release of a dataset
  spent, recorded in the transaction that drew its noise, with its release and attempt;
  never deleted (a dataset's budget never resets);
* ``ledger_settings``: values the ledger itself holds, by name: ``identifier_key_salt``,
  the salt of the scrypt derivation that wraps every stored identifier hash
  (:mod:`airflow_privacy.core.composition.identifiers`).

Table names carry a ``ledger_`` prefix (the Alembic version table is
``ledger_alembic_version``) so the ledger can share a database with other applications.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from airflow_privacy.ledger.integrity import CheckedInteger

RELEASE_STATUSES = ("candidate", "published")
ATTEMPT_STATUSES = (
    "open",
    "blocked",
    "publishing",
    "published",
    "already-published",
    "superseded",
)
# what a release is shown as: its own status once published, else its latest attempt's
STATUSES = ("candidate", "published", "blocked", "superseded")
VERSION_TABLE = "ledger_alembic_version"
_PUBLISHED = text("status = 'published'")


class Base(DeclarativeBase):
    pass


class DatasetRow(Base):
    """A dataset: the series of releases of one population."""

    __tablename__ = "ledger_datasets"

    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    next_version: Mapped[int] = mapped_column(CheckedInteger, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class ReleaseRow(Base):
    """One release (content) of a dataset."""

    __tablename__ = "ledger_releases"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    dataset: Mapped[str] = mapped_column(String(255), nullable=False)
    version: Mapped[str] = mapped_column(String(255), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    published_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    kind: Mapped[str] = mapped_column(String(32), nullable=False)
    sensitive: Mapped[str] = mapped_column(String(255), nullable=False)
    qis: Mapped[Any] = mapped_column(JSON, nullable=False)
    spec: Mapped[Any] = mapped_column(JSON, nullable=True)
    manifest: Mapped[Any] = mapped_column(JSON, nullable=True)
    criteria: Mapped[Any] = mapped_column(JSON, nullable=True)
    reasons: Mapped[Any] = mapped_column(JSON, nullable=False)
    content_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    n_records: Mapped[int] = mapped_column(CheckedInteger, nullable=False)
    n_groups: Mapped[int] = mapped_column(CheckedInteger, nullable=False)
    n_members: Mapped[int | None] = mapped_column(CheckedInteger, nullable=True)
    key_fingerprint: Mapped[str | None] = mapped_column(String(128), nullable=True)

    __table_args__ = (
        UniqueConstraint("uuid", name="uq_ledger_releases_uuid"),
        UniqueConstraint("dataset", "content_hash", name="uq_ledger_releases_dataset_content"),
        CheckConstraint("status IN ('candidate', 'published')", name="ck_ledger_releases_status"),
        Index("ix_ledger_releases_status", "status"),
        Index("ix_ledger_releases_dataset_version", "dataset", "version"),
        Index(
            "uq_ledger_releases_published_version",
            "dataset",
            "version",
            unique=True,
            sqlite_where=_PUBLISHED,
            postgresql_where=_PUBLISHED,
        ),
    )


class AttemptRow(Base):
    """One attempt at publishing a release."""

    __tablename__ = "ledger_attempts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    release_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("ledger_releases.id", ondelete="CASCADE"), nullable=False
    )
    status: Mapped[str] = mapped_column(String(20), nullable=False)
    required: Mapped[Any] = mapped_column(JSON, nullable=False)
    first_release: Mapped[bool] = mapped_column(Boolean, nullable=False)
    origin: Mapped[Any] = mapped_column(JSON, nullable=False)
    reasons: Mapped[Any] = mapped_column(JSON, nullable=False)
    destination: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    superseded_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    superseded_by: Mapped[str | None] = mapped_column(String(255), nullable=True)
    supersede_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: ``sha256:HEX`` of the file the attempt was opened on (None: a table, or older ledgers)
    content_digest: Mapped[str | None] = mapped_column(String(80), nullable=True)
    #: the version of its dataset's policy the gate decided it under (None: no policy)
    policy_version: Mapped[int | None] = mapped_column(CheckedInteger, nullable=True)
    #: an override of its block: who asked, when, why; who decided, when, why, the outcome
    override: Mapped[Any] = mapped_column(JSON, nullable=True)

    __table_args__ = (
        CheckConstraint(
            "status IN ('open', 'blocked', 'publishing', 'published', 'already-published', "
            "'superseded')",
            name="ck_ledger_attempts_status",
        ),
        UniqueConstraint("uuid", name="uq_ledger_attempts_uuid"),
        Index("ix_ledger_attempts_release", "release_id"),
    )


class CheckRow(Base):
    """The report envelope of one check of an attempt."""

    __tablename__ = "ledger_checks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    attempt_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("ledger_attempts.id", ondelete="CASCADE"), nullable=False
    )
    name: Mapped[str] = mapped_column(String(255), nullable=False)
    step: Mapped[str] = mapped_column(String(32), nullable=False)
    safe: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    outcome: Mapped[str] = mapped_column(String(32), nullable=False)
    envelope: Mapped[Any] = mapped_column(JSON, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)

    __table_args__ = (UniqueConstraint("attempt_id", "name", name="uq_ledger_checks_attempt_name"),)


class GroupRow(Base):
    """One published group (equivalence class or bucket) of a release."""

    __tablename__ = "ledger_groups"

    release_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("ledger_releases.id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    descriptor: Mapped[Any] = mapped_column(JSON, nullable=False)
    size: Mapped[int] = mapped_column(CheckedInteger, nullable=False)
    sensitive: Mapped[Any] = mapped_column(JSON, nullable=False)
    members: Mapped[Any] = mapped_column(JSON, nullable=True)


class SettingRow(Base):
    """One value the ledger itself holds (``identifier_key_salt``)."""

    __tablename__ = "ledger_settings"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(255), nullable=False)


class MemberRow(Base):
    """The keyed hash of one identifier present in a release."""

    __tablename__ = "ledger_members"

    release_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("ledger_releases.id", ondelete="CASCADE"), primary_key=True
    )
    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)


class ReportRow(Base):
    """The release report of an attempt (a re-run of the report replaces it)."""

    __tablename__ = "ledger_reports"

    attempt_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("ledger_attempts.id", ondelete="CASCADE"), primary_key=True
    )
    release_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("ledger_releases.id", ondelete="CASCADE"), nullable=False
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    report: Mapped[Any] = mapped_column(JSON, nullable=False)

    __table_args__ = (Index("ix_ledger_reports_release", "release_id"),)


POLICY_STATUSES = ("active", "proposed", "rejected", "replaced")


class PolicyRow(Base):
    """One version of a dataset's policy: what every release of the dataset must pass."""

    __tablename__ = "ledger_policies"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    dataset: Mapped[str] = mapped_column(String(255), nullable=False)
    version: Mapped[int] = mapped_column(CheckedInteger, nullable=False)
    status: Mapped[str] = mapped_column(String(20), nullable=False)
    policy: Mapped[Any] = mapped_column(JSON, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    created_by: Mapped[str] = mapped_column(String(255), nullable=False)
    reason: Mapped[str] = mapped_column(Text, nullable=False)
    loosens: Mapped[Any] = mapped_column(JSON, nullable=False)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    decided_by: Mapped[str | None] = mapped_column(String(255), nullable=True)
    decision_reason: Mapped[str | None] = mapped_column(Text, nullable=True)

    __table_args__ = (
        CheckConstraint(
            "status IN ('active', 'proposed', 'rejected', 'replaced')",
            name="ck_ledger_policies_status",
        ),
        UniqueConstraint("dataset", "version", name="uq_ledger_policies_dataset_version"),
        Index("ix_ledger_policies_dataset", "dataset"),
    )


DP_KIND = "dp-marginals"
"""The kind of a differentially private release (noisy marginals, no groups; also
:data:`airflow_privacy.vocabulary.DP_KIND`)."""


class DPSpendRow(Base):
    """The privacy loss one DP release spent (models module doc): recorded with its release
    and attempt in the transaction that drew the noise; its release cannot be deleted."""

    __tablename__ = "ledger_dp_spends"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    dataset: Mapped[str] = mapped_column(String(255), nullable=False)
    release_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("ledger_releases.id", ondelete="RESTRICT"), nullable=False
    )
    attempt_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("ledger_attempts.id", ondelete="RESTRICT"), nullable=False
    )
    mechanism: Mapped[str] = mapped_column(String(16), nullable=False)
    #: the loss in zero-concentrated DP (every release has one)
    rho: Mapped[float] = mapped_column(Float, nullable=False)
    #: the loss in pure DP (None: a Gaussian release has no finite one)
    epsilon: Mapped[float | None] = mapped_column(Float, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)

    __table_args__ = (
        CheckConstraint("rho >= 0", name="ck_ledger_dp_spends_rho"),
        Index("ix_ledger_dp_spends_dataset", "dataset"),
    )
