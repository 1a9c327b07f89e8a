"""Dataset policies in the ledger: what every release of a dataset must pass, versioned.

The ledger stores and moves policies; what a policy *means* (which change loosens it, what
a check must show to meet it) is the gate's (:mod:`airflow_privacy.gate.policy`).

* the first policy of a dataset, and a change that only tightens, are ``active`` at once
  (the previous version becomes ``replaced``);
* a change that loosens anything (``loosens``: the lines it weakens, in words) is
  ``proposed``: it takes effect only when a second, different person approves it (and, when
  the active policy names approvers, one of them); a rejection keeps the active one;
* every version keeps who, when and why, and who decided a proposal, when and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from airflow_privacy.errors import IllegalTransition, InputError
from airflow_privacy.ledger.models import PolicyRow


@dataclass(frozen=True)
class PolicyInfo:
    """One version of a dataset's policy."""

    dataset: str
    version: int
    status: str
    policy: dict[str, Any]
    created_at: str
    created_by: str
    reason: str
    loosens: list[str]
    decided_at: str | None
    decided_by: str | None
    decision_reason: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _iso(ts: datetime | None) -> str | None:
    if ts is None:
        return None
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return ts.isoformat()


def info(row: PolicyRow) -> PolicyInfo:
    return PolicyInfo(
        dataset=row.dataset,
        version=row.version,
        status=row.status,
        policy=dict(row.policy or {}),
        created_at=_iso(row.created_at) or "",
        created_by=row.created_by,
        reason=row.reason,
        loosens=[str(x) for x in row.loosens or []],
        decided_at=_iso(row.decided_at),
        decided_by=row.decided_by,
        decision_reason=row.decision_reason,
    )


def active(s: Session, dataset: str) -> PolicyRow | None:
    """The policy in force for ``dataset`` (None: it has none)."""
    return s.scalars(
        select(PolicyRow).where(PolicyRow.dataset == dataset, PolicyRow.status == "active")
    ).first()


def history(s: Session, dataset: str) -> list[PolicyRow]:
    return list(
        s.scalars(
            select(PolicyRow).where(PolicyRow.dataset == dataset).order_by(PolicyRow.version)
        ).all()
    )


def datasets_with_policy(s: Session) -> list[str]:
    return sorted(
        set(s.scalars(select(PolicyRow.dataset).where(PolicyRow.status == "active")).all())
    )


def propose(
    s: Session,
    dataset: str,
    policy: Mapping[str, Any],
    *,
    by: str,
    reason: str,
    loosens: Sequence[str],
    now: datetime,
) -> PolicyRow:
    """Record a new version (module doc): active at once unless it loosens the active one."""
    pending = s.scalars(
        select(PolicyRow).where(PolicyRow.dataset == dataset, PolicyRow.status == "proposed")
    ).first()
    if pending is not None:
        raise IllegalTransition(
            f"policy v{pending.version} of {dataset!r} (proposed by {pending.created_by}) is "
            "waiting for a second person: approve or reject it first"
        )
    last = s.scalar(select(func.max(PolicyRow.version)).where(PolicyRow.dataset == dataset))
    row = PolicyRow(
        dataset=dataset,
        version=int(last or 0) + 1,
        status="proposed" if loosens else "active",
        policy=dict(policy),
        created_at=now,
        created_by=by,
        reason=reason,
        loosens=list(loosens),
    )
    if not loosens:
        current = active(s, dataset)
        if current is not None:
            current.status = "replaced"
            s.flush()
    s.add(row)
    s.flush()
    return row


def decide(
    s: Session,
    dataset: str,
    version: int,
    *,
    approve: bool,
    by: str,
    reason: str,
    now: datetime,
) -> PolicyRow:
    """Approve (it takes effect) or reject a proposed version; never by its proposer."""
    row = s.scalars(
        select(PolicyRow)
        .where(PolicyRow.dataset == dataset, PolicyRow.version == version)
        .with_for_update()
    ).first()
    if row is None:
        raise InputError(f"dataset {dataset!r} has no policy version {version}")
    if row.status != "proposed":
        raise IllegalTransition(
            f"policy v{version} of {dataset!r} is {row.status}: only a proposed version is "
            "approved or rejected"
        )
    if by.strip().casefold() == row.created_by.strip().casefold():
        raise IllegalTransition(
            f"policy v{version} of {dataset!r} was proposed by {row.created_by}: a second, "
            "different person approves or rejects it (four eyes)"
        )
    current = active(s, dataset)
    approvers = [str(a) for a in ((current.policy or {}).get("approvers") or [])] if current else []
    if approvers and by not in approvers:
        raise IllegalTransition(
            f"{by} may not decide policy changes of {dataset!r}: its policy "
            f"v{current.version if current else '?'} names the approvers {', '.join(approvers)}"
        )
    row.decided_at, row.decided_by, row.decision_reason = now, by, reason
    if approve:
        if current is not None:
            current.status = "replaced"
            s.flush()
        row.status = "active"
    else:
        row.status = "rejected"
    s.flush()
    return row
