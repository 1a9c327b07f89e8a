"""Initial ledger schema: releases, their groups, identifier hashes.

Revision ID: 0001_initial
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0001_initial"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "ledger_releases",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("dataset", sa.String(255), nullable=False),
        sa.Column("version", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("sensitive", sa.String(255), nullable=False),
        sa.Column("qis", sa.JSON(), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=True),
        sa.Column("manifest", sa.JSON(), nullable=True),
        sa.Column("criteria", sa.JSON(), nullable=True),
        sa.Column("reasons", sa.JSON(), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("n_records", sa.Integer(), nullable=False),
        sa.Column("n_groups", sa.Integer(), nullable=False),
        sa.Column("n_members", sa.Integer(), nullable=True),
        sa.Column("key_fingerprint", sa.String(16), nullable=True),
        sa.UniqueConstraint("dataset", "version", name="uq_ledger_releases_dataset_version"),
        sa.UniqueConstraint("dataset", "content_hash", name="uq_ledger_releases_dataset_content"),
        sa.CheckConstraint(
            "status IN ('candidate', 'published', 'blocked')", name="ck_ledger_releases_status"
        ),
    )
    op.create_index("ix_ledger_releases_status", "ledger_releases", ["status"])
    op.create_table(
        "ledger_groups",
        sa.Column(
            "release_id",
            sa.Integer(),
            sa.ForeignKey("ledger_releases.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("position", sa.Integer(), primary_key=True),
        sa.Column("descriptor", sa.JSON(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("sensitive", sa.JSON(), nullable=False),
        sa.Column("members", sa.JSON(), nullable=True),
    )
    op.create_table(
        "ledger_members",
        sa.Column(
            "release_id",
            sa.Integer(),
            sa.ForeignKey("ledger_releases.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("id_hash", sa.String(64), primary_key=True),
    )


def downgrade() -> None:
    op.drop_table("ledger_members")
    op.drop_table("ledger_groups")
    op.drop_index("ix_ledger_releases_status", table_name="ledger_releases")
    op.drop_table("ledger_releases")
