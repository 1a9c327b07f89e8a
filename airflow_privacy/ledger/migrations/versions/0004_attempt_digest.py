"""The bytes an attempt was opened on: ``ledger_attempts.content_digest``.

Every check of an attempt, and the gate, compare the SHA-256 of the file they read with
this digest, so that a check of another file (a mistemplated path, a file replaced in
between) is never recorded as a check of this attempt. Attempts opened before this revision
have no digest (their checks are compared by the recorded content only).

Revision ID: 0004_attempt_digest
Revises: 0003_attempts
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004_attempt_digest"
down_revision: str | None = "0003_attempts"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("ledger_attempts") as b:
        b.add_column(sa.Column("content_digest", sa.String(80), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("ledger_attempts") as b:
        b.drop_column("content_digest")
