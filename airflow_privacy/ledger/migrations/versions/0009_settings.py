"""Values the ledger itself holds: ``ledger_settings`` (``name`` -> ``value``). Its first
value, ``identifier_key_salt``, is the salt of the scrypt derivation that wraps every stored
identifier hash; it is written here, 16 random bytes, and never changes. The hashes stored
before are wrapped the first time the ledger is used with their key (the migration cannot:
it has no key).

Revision ID: 0009_settings
Revises: 0008_dp_spends
Create Date: 2026-11-29
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op

revision: str = "0009_settings"
down_revision: str | None = "0008_dp_spends"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    settings = op.create_table(
        "ledger_settings",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.String(255), nullable=False),
    )
    op.bulk_insert(settings, [{"name": "identifier_key_salt", "value": secrets.token_hex(16)}])


def downgrade() -> None:
    op.drop_table("ledger_settings")
