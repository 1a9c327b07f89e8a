"""The plain-data result every criterion check returns (serializes to JSON)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class CriterionResult:
    """Outcome of checking one criterion on one release.

    ``value`` is the level the release achieves (the smallest group size for k-anonymity,
    the largest EMD for t-closeness, the maximum disclosure for (c,k)-safety, ...);
    ``safe`` compares it with the requested parameters. ``witness`` says *where* the
    release is weakest (a group and, for background-knowledge criteria, the knowledge that
    breaks it); ``reason`` is one sentence a data steward can act on.
    """

    criterion: str
    safe: bool
    parameters: dict[str, Any]
    value: float
    reason: str
    max_disclosure: float | None = None
    witness: dict[str, Any] | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
