"""The ledger's tables (SQLAlchemy 2 declarative models).

Only what was published is stored: per release its metadata, spec, manifest, criteria
results and content hash; per group its descriptor (generalized QI labels, centroid, or
bucket id with the bucket's exact QI tuples) and its sensitive multiset; optionally the
keyed hashes of an identifier column (never the identifiers); per release at most one
release report (the JSON a privacy officer reads, :mod:`airflow_privacy.report`). No raw
records.

Table names carry a ``ledger_`` prefix (and the Alembic version table is
``ledger_alembic_version``) so the ledger can share a database with other applications,
Airflow's metadata database included.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

STATUSES = ("candidate", "published", "blocked")
VERSION_TABLE = "ledger_alembic_version"


class Base(DeclarativeBase):
    pass


class ReleaseRow(Base):
    """One release of a dataset."""

    __tablename__ = "ledger_releases"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    dataset: Mapped[str] = mapped_column(String(255), nullable=False)
    version: Mapped[str] = mapped_column(String(255), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    kind: Mapped[str] = mapped_column(String(32), nullable=False)
    sensitive: Mapped[str] = mapped_column(String(255), nullable=False)
    qis: Mapped[Any] = mapped_column(JSON, nullable=False)
    spec: Mapped[Any] = mapped_column(JSON, nullable=True)
    manifest: Mapped[Any] = mapped_column(JSON, nullable=True)
    criteria: Mapped[Any] = mapped_column(JSON, nullable=True)
    reasons: Mapped[Any] = mapped_column(JSON, nullable=False)
    content_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    n_records: Mapped[int] = mapped_column(Integer, nullable=False)
    n_groups: Mapped[int] = mapped_column(Integer, nullable=False)
    n_members: Mapped[int | None] = mapped_column(Integer, nullable=True)
    key_fingerprint: Mapped[str | None] = mapped_column(String(16), nullable=True)

    __table_args__ = (
        UniqueConstraint("dataset", "version", name="uq_ledger_releases_dataset_version"),
        UniqueConstraint("dataset", "content_hash", name="uq_ledger_releases_dataset_content"),
        CheckConstraint(
            "status IN ('candidate', 'published', 'blocked')", name="ck_ledger_releases_status"
        ),
        Index("ix_ledger_releases_status", "status"),
    )


class GroupRow(Base):
    """One published group (equivalence class or bucket) of a release."""

    __tablename__ = "ledger_groups"

    release_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("ledger_releases.id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    descriptor: Mapped[Any] = mapped_column(JSON, nullable=False)
    size: Mapped[int] = mapped_column(Integer, nullable=False)
    sensitive: Mapped[Any] = mapped_column(JSON, nullable=False)
    members: Mapped[Any] = mapped_column(JSON, nullable=True)


class MemberRow(Base):
    """The keyed hash of one identifier present in a release."""

    __tablename__ = "ledger_members"

    release_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("ledger_releases.id", ondelete="CASCADE"), primary_key=True
    )
    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)


class ReportRow(Base):
    """The release report of a release (one per release; a re-run replaces it)."""

    __tablename__ = "ledger_reports"

    release_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("ledger_releases.id", ondelete="CASCADE"), primary_key=True
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    report: Mapped[Any] = mapped_column(JSON, nullable=False)
