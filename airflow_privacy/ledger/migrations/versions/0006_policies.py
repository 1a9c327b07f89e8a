"""Dataset policies: ``ledger_policies`` (what every release of a dataset must pass,
versioned, with who, when and why; a loosening change waits for a second person) and
``ledger_attempts.policy_version`` (the policy version an attempt was decided under).

Revision ID: 0006_policies
Revises: 0005_content_identity
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006_policies"
down_revision: str | None = "0005_content_identity"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "ledger_policies",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("dataset", sa.String(255), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("policy", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(255), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("loosens", sa.JSON(), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("decided_by", sa.String(255), nullable=True),
        sa.Column("decision_reason", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "status IN ('active', 'proposed', 'rejected', 'replaced')",
            name="ck_ledger_policies_status",
        ),
        sa.UniqueConstraint("dataset", "version", name="uq_ledger_policies_dataset_version"),
    )
    op.create_index("ix_ledger_policies_dataset", "ledger_policies", ["dataset"])
    with op.batch_alter_table("ledger_attempts") as b:
        b.add_column(sa.Column("policy_version", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("ledger_attempts") as b:
        b.drop_column("policy_version")
    op.drop_index("ix_ledger_policies_dataset", table_name="ledger_policies")
    op.drop_table("ledger_policies")
