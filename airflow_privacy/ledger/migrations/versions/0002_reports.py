"""Release reports: one JSON report per release (what the Airflow UI page shows).

Revision ID: 0002_reports
Revises: 0001_initial
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0002_reports"
down_revision: str | None = "0001_initial"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "ledger_reports",
        sa.Column(
            "release_id",
            sa.Integer(),
            sa.ForeignKey("ledger_releases.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("report", sa.JSON(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("ledger_reports")
