"""Content identity is the content: ``ledger_releases.content_hash`` no longer includes the
identifier hashes of the people.

Before this revision, content recorded with identifier hashes (``population`` +
``id_column``) was hashed with them, so the same file attempted without identifiers looked
like new content and could be published a second time. This revision recomputes the hash
of every release recorded with identifiers from its stored groups (the same canonical form
as :meth:`PublishedRelease.content_hash` without members). Where a dataset already holds the
same content without identifiers (it was published twice), the row with identifiers keeps
its old hash (both stay in the history; the audit reads both) and the later attempts of the
content find the one without.

Revision ID: 0005_content_identity
Revises: 0004_attempt_digest
Create Date: 2026-11-28
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0005_content_identity"
down_revision: str | None = "0004_attempt_digest"
branch_labels: str | None = None
depends_on: str | None = None


def _loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _release(bind: Any, rid: int, kind: str, qis: Any, sensitive: str) -> Any:
    """The stored groups of release ``rid`` as a PublishedRelease."""
    from airflow_privacy.core.composition.release import PublishedRelease

    groups = bind.execute(
        sa.text(
            "SELECT descriptor, sensitive, members FROM ledger_groups "
            "WHERE release_id = :rid ORDER BY position"
        ),
        {"rid": rid},
    ).all()
    members = [_loads(g[2]) for g in groups] if kind == "bucketized" else None
    return PublishedRelease.from_groups(
        list(_loads(qis)),
        sensitive,
        [(_loads(g[0]), _loads(g[1])) for g in groups],
        kind,
        [[(q, m) for q, m in grp] for grp in members] if members is not None else None,
    )


def upgrade() -> None:
    bind = op.get_bind()
    rows = bind.execute(
        sa.text(
            "SELECT id, dataset, kind, qis, sensitive FROM ledger_releases "
            "WHERE n_members IS NOT NULL ORDER BY id"
        )
    ).all()
    for rid, dataset, kind, qis, sensitive in rows:
        release = _release(bind, rid, kind, qis, sensitive)
        content = release.content_hash()
        taken = bind.execute(
            sa.text(
                "SELECT id FROM ledger_releases WHERE dataset = :d AND content_hash = :h "
                "AND id <> :rid"
            ),
            {"d": dataset, "h": content, "rid": rid},
        ).first()
        if taken is None:
            bind.execute(
                sa.text("UPDATE ledger_releases SET content_hash = :h WHERE id = :rid"),
                {"h": content, "rid": rid},
            )


def downgrade() -> None:
    # the old form: the content hash with the stored identifier hashes
    bind = op.get_bind()
    rows = bind.execute(
        sa.text("SELECT id, kind, qis, sensitive FROM ledger_releases WHERE n_members IS NOT NULL")
    ).all()
    for rid, kind, qis, sensitive in rows:
        release = _release(bind, rid, kind, qis, sensitive)
        hashes = [
            str(h)
            for (h,) in bind.execute(
                sa.text("SELECT id_hash FROM ledger_members WHERE release_id = :rid"),
                {"rid": rid},
            ).all()
        ]
        bind.execute(
            sa.text("UPDATE ledger_releases SET content_hash = :h WHERE id = :rid"),
            {"h": release.content_hash(hashes), "rid": rid},
        )
