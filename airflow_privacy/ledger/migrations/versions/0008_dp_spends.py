"""The privacy budget of differentially private releases: ``ledger_dp_spends`` (one row per
DP release: its dataset, release, attempt, mechanism and loss, rho and pure epsilon).
Rows are never deleted: a dataset's budget never resets.

Revision ID: 0008_dp_spends
Revises: 0007_overrides
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0008_dp_spends"
down_revision: str | None = "0007_overrides"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "ledger_dp_spends",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("dataset", sa.String(255), nullable=False),
        sa.Column(
            "release_id",
            sa.Integer(),
            sa.ForeignKey("ledger_releases.id", ondelete="RESTRICT"),
            nullable=False,
        ),
        sa.Column(
            "attempt_id",
            sa.Integer(),
            sa.ForeignKey("ledger_attempts.id", ondelete="RESTRICT"),
            nullable=False,
        ),
        sa.Column("mechanism", sa.String(16), nullable=False),
        sa.Column("rho", sa.Float(), nullable=False),
        sa.Column("epsilon", sa.Float(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("rho >= 0", name="ck_ledger_dp_spends_rho"),
    )
    op.create_index("ix_ledger_dp_spends_dataset", "ledger_dp_spends", ["dataset"])


def downgrade() -> None:
    op.drop_index("ix_ledger_dp_spends_dataset", table_name="ledger_dp_spends")
    op.drop_table("ledger_dp_spends")
