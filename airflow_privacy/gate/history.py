"""Importing history: a release that was published before this ledger existed (or
elsewhere), recorded as published so that every later composition audit counts it.

Content the ledger already knows through attempts is refused by the ledger (an import never
goes around the gate); identical content already recorded is returned as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.attempts import member_hashes, read_candidate
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef

if TYPE_CHECKING:
    from collections.abc import Sequence

    from airflow_privacy.ledger import ReleaseInfo


@dataclass(frozen=True)
class ImportRequest:
    """Record ``release`` as a version of ``dataset`` with ``status`` (``published``:
    history; ``candidate``: content only), with the keyed hashes of the people in
    ``identifiers`` (column ``id_column``) when given."""

    release: ReleaseRef
    dataset: str
    status: str = "published"
    version: str | None = None
    identifiers: ReleaseRef | None = None
    id_column: str | None = None
    qis: Sequence[str] | None = None
    sensitive: str | None = None
    kind: str | None = None
    bucket: str | None = None
    manifest: ReleaseRef | None = None
    ledger: str | None = None
    fmt: Any = None
    delimiter: str | None = None


def import_release(req: ImportRequest, ctx: GateContext) -> ReleaseInfo:
    """Validate everything first (the files, the key), then open (or create) the ledger and
    record the release in one transaction."""
    if bool(req.identifiers) != bool(req.id_column):
        raise InputError(f"{opt('identifiers')} and {opt('id_column')} go together")
    location = ctx.ledger_location(req.ledger)
    ctx.progress(f"reading {req.release.describe()}")
    rf = read_candidate(
        req.release, ctx, qis=req.qis, sensitive=req.sensitive, kind=req.kind,
        bucket=req.bucket, manifest=req.manifest, fmt=req.fmt, delimiter=req.delimiter,
    )  # fmt: skip
    rel = rf.release
    ctx.progress(f"{rel.n_records:,} records in {rel.n_groups:,} groups ({rel.kind})")
    hashes = member_hashes(req.identifiers, req.id_column, location.key_env, ctx)
    with ctx.open_ledger(req.ledger, create=True) as ledger:
        return ledger.record(
            req.dataset,
            rel,
            version=req.version,
            status=req.status,
            spec=rf.spec(),
            manifest=rf.manifest,
            criteria=(rf.manifest or {}).get("criteria_results"),
            member_hashes=hashes,
            origin=ctx.origin,
        )
