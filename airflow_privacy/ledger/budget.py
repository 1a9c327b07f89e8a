"""The privacy budget of a dataset's differentially private releases, kept in the ledger.

* the cap is a line of the dataset's policy (``dp``: ``rho_cap`` in zero-concentrated DP, or
  ``epsilon_cap`` in pure DP), owned by the organization: what a line *means* is the gate's,
  the ledger is given it (:class:`Cap`);
* every DP release records what it spent (``ledger_dp_spends``) in the transaction that
  draws its noise, under the dataset's lock, with its release and its attempt: concurrent
  releases are serialized and cannot together overspend; a writer killed before the commit
  leaves nothing (its noise was never seen), one killed after leaves its spend *and* its
  release; a spend is never deleted (a budget never resets, whatever the calendar says);
* with the identifier hashes of its people (the ``--entity`` column, hashed with the
  ledger's key), a release is also held to the cap per person: the most any one of its
  people has spent over every DP release that recorded them, whatever its dataset, plus
  this spend (every dataset's row is locked, as a composition audit's gate locks them);
* the spent budget is the sum of the losses (sequential composition: zCDP rhos add, pure
  epsilons add; Bun and Steinke, TCC 2016, Lemma 2.3). Under a pure-epsilon cap a Gaussian
  release's loss is unbounded, so it exhausts the budget.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from airflow_privacy.ledger.models import DPSpendRow, ReleaseRow

UNITS = ("rho", "epsilon")


@dataclass(frozen=True)
class Cap:
    """A dataset's budget line: ``unit`` (``rho`` or ``epsilon``) and its ``cap``, and the
    policy version it comes from."""

    unit: str
    cap: float
    policy_version: int


@dataclass(frozen=True)
class Budget:
    """A dataset's budget as the ledger holds it now."""

    dataset: str
    unit: str | None  # None: the dataset's policy allows no DP release
    cap: float | None
    spent: float
    releases: int
    policy_version: int | None
    #: the most any one person of the release has spent over every DP release that recorded
    #: them (any dataset), before this one (None: the release recorded no people)
    people: float | None = None

    @property
    def binding(self) -> float:
        """What the cap is compared with: the dataset's spend, or one person's if larger."""
        return max(self.spent, self.people or 0.0)

    @property
    def left(self) -> float:
        if self.cap is None:
            return 0.0
        left = self.cap - self.binding
        # what rounding leaves of a spent budget (0.4 + 0.6 < 1.0 by 2e-16) is nothing
        return left if left > self.cap * 1e-12 else 0.0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["left"] = self.left
        for key in ("spent", "people"):
            if out[key] is not None and math.isinf(out[key]):
                out[key] = None  # JSON has no infinity: "unbounded"
        return out


@dataclass(frozen=True)
class Spend:
    """One DP release's spend (for the report's history of a budget)."""

    release_id: int
    version: str
    mechanism: str
    rho: float
    epsilon: float | None
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def fits(spent: float, cost: float, cap: Cap) -> bool:
    """Whether ``cost`` more stays within ``cap`` (rounding of a sum of floats forgiven)."""
    return spent + cost <= cap.cap * (1 + 1e-12)


def room(before: Budget, cap: Cap) -> float:
    """What a release may spend after ``before`` (its dataset's and its people's spends):
    the ``d_out`` of the privacy filter its noise is drawn through, with :func:`fits`'s
    allowance for rounding, so the two agree."""
    return cap.cap * (1 + 1e-12) - before.binding


def spent(s: Session, dataset: str, unit: str) -> tuple[float, int]:
    """The loss spent on ``dataset`` in ``unit`` and the number of DP releases."""
    rows = s.execute(
        select(DPSpendRow.rho, DPSpendRow.epsilon).where(DPSpendRow.dataset == dataset)
    ).all()
    if unit == "rho":
        return math.fsum(float(r[0]) for r in rows), len(rows)
    if any(r[1] is None for r in rows):
        return math.inf, len(rows)
    return math.fsum(float(r[1] or 0.0) for r in rows), len(rows)


def people_spent(s: Session, release_id: int, unit: str) -> float:
    """The most any one person of release ``release_id`` (by its identifier hashes) has
    spent over the DP releases that recorded them, in ``unit`` (0 when none did)."""
    from sqlalchemy import case, func

    from airflow_privacy.ledger.models import MemberRow

    mine = select(MemberRow.id_hash).where(MemberRow.release_id == release_id)
    cost = DPSpendRow.rho if unit == "rho" else DPSpendRow.epsilon
    per_person = (
        select(
            MemberRow.id_hash,
            func.sum(func.coalesce(cost, 0.0)).label("total"),
            func.sum(case((cost.is_(None), 1), else_=0)).label("unbounded"),
        )
        .join(DPSpendRow, DPSpendRow.release_id == MemberRow.release_id)
        .where(MemberRow.id_hash.in_(mine), MemberRow.release_id != release_id)
        .group_by(MemberRow.id_hash)
        .subquery()
    )
    worst = s.execute(select(func.max(per_person.c.total), func.max(per_person.c.unbounded))).one()
    if worst[1]:
        return math.inf
    return float(worst[0] or 0.0)


def budget(s: Session, dataset: str, cap: Cap | None) -> Budget:
    if cap is None:
        used, n = spent(s, dataset, "rho")
        return Budget(dataset, None, None, used, n, None)
    used, n = spent(s, dataset, cap.unit)
    return Budget(dataset, cap.unit, cap.cap, used, n, cap.policy_version)


def history(s: Session, dataset: str) -> list[Spend]:
    """Every spend of ``dataset``, oldest first."""
    rows = s.execute(
        select(DPSpendRow, ReleaseRow.version)
        .join(ReleaseRow, ReleaseRow.id == DPSpendRow.release_id)
        .where(DPSpendRow.dataset == dataset)
        .order_by(DPSpendRow.id)
    ).all()
    out = []
    for row, version in rows:
        ts = row.created_at if row.created_at.tzinfo else row.created_at.replace(tzinfo=UTC)
        out.append(
            Spend(row.release_id, str(version), row.mechanism, float(row.rho),
                  None if row.epsilon is None else float(row.epsilon), ts.isoformat())
        )  # fmt: skip
    return out


def record(
    s: Session,
    *,
    dataset: str,
    release_id: int,
    attempt_id: int,
    mechanism: str,
    rho: float,
    epsilon: float | None,
    now: datetime,
) -> None:
    s.add(
        DPSpendRow(dataset=dataset, release_id=release_id, attempt_id=attempt_id,
                   mechanism=mechanism, rho=float(rho),
                   epsilon=None if epsilon is None else float(epsilon), created_at=now)
    )  # fmt: skip
