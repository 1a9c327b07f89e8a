"""Release attempts: datasets (lock + version counter), attempts, checks, release UUIDs.

* ``ledger_datasets``: one row per dataset; writers lock it, so versions are allocated
  without conflicts (no retry storms under many concurrent writers).
* ``ledger_releases``: a stable ``uuid`` (links that survive a ledger move), ``published_at``;
  the status is the content's (``candidate`` or ``published``): a block belongs to an
  attempt, not to content. Version labels are unique among *published* releases only (a
  label of content that was never published can be used again). Key fingerprints get room
  for a salted scrypt fingerprint.
* ``ledger_attempts``: every earlier release becomes one attempt (published -> published,
  blocked -> blocked with its reasons, candidate -> open).
* ``ledger_checks``: the report envelope of each check of an attempt.
* ``ledger_reports``: now one per attempt (earlier reports move to their release's attempt).

Revision ID: 0003_attempts
Revises: 0002_reports
Create Date: 2026-11-23
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0003_attempts"
down_revision: str | None = "0002_reports"
branch_labels: str | None = None
depends_on: str | None = None

_PUBLISHED = sa.text("status = 'published'")


def upgrade() -> None:
    bind = op.get_bind()
    now = datetime.now(UTC)

    op.create_table(
        "ledger_datasets",
        sa.Column("name", sa.String(255), primary_key=True),
        sa.Column("next_version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "ledger_attempts",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("uuid", sa.String(36), nullable=False),
        sa.Column(
            "release_id",
            sa.Integer(),
            sa.ForeignKey("ledger_releases.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("required", sa.JSON(), nullable=False),
        sa.Column("first_release", sa.Boolean(), nullable=False),
        sa.Column("origin", sa.JSON(), nullable=False),
        sa.Column("reasons", sa.JSON(), nullable=False),
        sa.Column("destination", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("superseded_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("superseded_by", sa.String(255), nullable=True),
        sa.Column("supersede_reason", sa.Text(), nullable=True),
        sa.UniqueConstraint("uuid", name="uq_ledger_attempts_uuid"),
        sa.CheckConstraint(
            "status IN ('open', 'blocked', 'publishing', 'published', 'already-published', "
            "'superseded')",
            name="ck_ledger_attempts_status",
        ),
    )
    op.create_index("ix_ledger_attempts_release", "ledger_attempts", ["release_id"])
    op.create_table(
        "ledger_checks",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "attempt_id",
            sa.Integer(),
            sa.ForeignKey("ledger_attempts.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("step", sa.String(32), nullable=False),
        sa.Column("safe", sa.Boolean(), nullable=True),
        sa.Column("outcome", sa.String(32), nullable=False),
        sa.Column("envelope", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("attempt_id", "name", name="uq_ledger_checks_attempt_name"),
    )

    with op.batch_alter_table("ledger_releases") as b:
        b.add_column(sa.Column("uuid", sa.String(36), nullable=True))
        b.add_column(sa.Column("published_at", sa.DateTime(timezone=True), nullable=True))
        b.alter_column(
            "key_fingerprint", type_=sa.String(128), existing_type=sa.String(16), nullable=True
        )
        b.drop_constraint("uq_ledger_releases_dataset_version", type_="unique")
        b.drop_constraint("ck_ledger_releases_status", type_="check")

    releases = sa.table(
        "ledger_releases",
        sa.column("id", sa.Integer()),
        sa.column("uuid", sa.String()),
        sa.column("dataset", sa.String()),
        sa.column("version", sa.String()),
        sa.column("status", sa.String()),
        sa.column("reasons", sa.JSON()),
        sa.column("created_at", sa.DateTime(timezone=True)),
        sa.column("updated_at", sa.DateTime(timezone=True)),
        sa.column("published_at", sa.DateTime(timezone=True)),
    )
    attempts = sa.table(
        "ledger_attempts",
        sa.column("id", sa.Integer()),
        sa.column("uuid", sa.String()),
        sa.column("release_id", sa.Integer()),
        sa.column("status", sa.String()),
        sa.column("required", sa.JSON()),
        sa.column("first_release", sa.Boolean()),
        sa.column("origin", sa.JSON()),
        sa.column("reasons", sa.JSON()),
        sa.column("created_at", sa.DateTime(timezone=True)),
        sa.column("updated_at", sa.DateTime(timezone=True)),
        sa.column("decided_at", sa.DateTime(timezone=True)),
    )
    datasets = sa.table(
        "ledger_datasets",
        sa.column("name", sa.String()),
        sa.column("next_version", sa.Integer()),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    rows = bind.execute(
        sa.select(
            releases.c.id,
            releases.c.dataset,
            releases.c.version,
            releases.c.status,
            releases.c.reasons,
            releases.c.created_at,
            releases.c.updated_at,
        ).order_by(releases.c.id)
    ).all()
    counters: dict[str, int] = {}
    attempt_of: dict[int, int] = {}
    for rid, dataset, version, status, reasons, created, updated in rows:
        published = status == "published"
        bind.execute(
            releases.update()
            .where(releases.c.id == rid)
            .values(
                uuid=str(uuid.uuid4()),
                status="published" if published else "candidate",
                published_at=updated if published else None,
            )
        )
        attempt_status = {"published": "published", "blocked": "blocked"}.get(status, "open")
        attempt_uuid = str(uuid.uuid4())
        bind.execute(
            attempts.insert().values(
                uuid=attempt_uuid,
                release_id=rid,
                status=attempt_status,
                required=[],
                first_release=False,
                origin={"front_end": "migration", "note": "recorded before attempts existed"},
                reasons=list(reasons or []),
                created_at=created,
                updated_at=updated,
                decided_at=updated if attempt_status != "open" else None,
            )
        )
        # the id by the attempt's own UUID (a lightweight table has no primary key to
        # report back, and an id of 0 would orphan the release's report)
        attempt_of[rid] = bind.execute(
            sa.select(attempts.c.id).where(attempts.c.uuid == attempt_uuid)
        ).scalar_one()
        n = counters.get(dataset, 0) + 1
        if str(version).isdigit():
            n = max(n, int(version) + 1)
        counters[dataset] = n
    for name, next_version in counters.items():
        bind.execute(datasets.insert().values(name=name, next_version=next_version, created_at=now))

    with op.batch_alter_table("ledger_releases") as b:
        b.alter_column("uuid", existing_type=sa.String(36), nullable=False)
        b.create_unique_constraint("uq_ledger_releases_uuid", ["uuid"])
        b.create_check_constraint(
            "ck_ledger_releases_status", "status IN ('candidate', 'published')"
        )
    op.create_index("ix_ledger_releases_dataset_version", "ledger_releases", ["dataset", "version"])
    op.create_index(
        "uq_ledger_releases_published_version",
        "ledger_releases",
        ["dataset", "version"],
        unique=True,
        sqlite_where=_PUBLISHED,
        postgresql_where=_PUBLISHED,
    )

    # reports: one per attempt (an earlier report belongs to its release's only attempt)
    old = sa.table(
        "ledger_reports",
        sa.column("release_id", sa.Integer()),
        sa.column("created_at", sa.DateTime(timezone=True)),
        sa.column("report", sa.JSON()),
    )
    kept = bind.execute(sa.select(old.c.release_id, old.c.created_at, old.c.report)).all()
    op.drop_table("ledger_reports")
    op.create_table(
        "ledger_reports",
        sa.Column(
            "attempt_id",
            sa.Integer(),
            sa.ForeignKey("ledger_attempts.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "release_id",
            sa.Integer(),
            sa.ForeignKey("ledger_releases.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("report", sa.JSON(), nullable=False),
    )
    op.create_index("ix_ledger_reports_release", "ledger_reports", ["release_id"])
    new = sa.table(
        "ledger_reports",
        sa.column("attempt_id", sa.Integer()),
        sa.column("release_id", sa.Integer()),
        sa.column("created_at", sa.DateTime(timezone=True)),
        sa.column("report", sa.JSON()),
    )
    for rid, created, report in kept:
        if rid in attempt_of:
            bind.execute(
                new.insert().values(
                    attempt_id=attempt_of[rid], release_id=rid, created_at=created, report=report
                )
            )


def downgrade() -> None:
    raise NotImplementedError("the ledger does not downgrade: restore a backup instead")
