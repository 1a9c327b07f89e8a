"""Overrides of a blocked attempt: ``ledger_attempts.override`` (who asked, when and why;
who decided, when, why and under which policy version). An override publishes a blocked
attempt only when a second, different person approves it.

Revision ID: 0007_overrides
Revises: 0006_policies
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0007_overrides"
down_revision: str | None = "0006_policies"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("ledger_attempts") as b:
        b.add_column(sa.Column("override", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("ledger_attempts") as b:
        b.drop_column("override")
