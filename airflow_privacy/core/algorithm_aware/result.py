"""Plain-data results of the algorithm-aware audit and of the safe search (JSON-ready)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class PersonPosterior:
    """One person's posterior over the disclosure set.

    ``posterior[v]`` is ``Pr(person holds v | disclosure set)`` (exact fraction of worlds, or
    the sample estimate); ``worlds[v]`` the number of worlds (or accepted samples) behind it;
    ``interval[v]`` the confidence interval when sampled; ``row`` the person's row number
    in the input (the pseudonymous position of :meth:`public_dict`). Confidential: the
    person's name (an id column), true value and posterior per value.
    """

    person: str
    group: str
    true_value: str
    top_value: str
    top_posterior: float
    flagged: bool
    posterior: dict[str, float]
    worlds: dict[str, int]
    interval: dict[str, list[float]] | None = None
    row: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def public_dict(self) -> dict[str, Any]:
        """Pseudonymous: the row, the published group, the largest posterior (with its
        sampled confidence interval) and whether it is flagged; never the name nor any
        sensitive value."""
        return {
            "row": self.row,
            "group": self.group,
            "top_posterior": self.top_posterior,
            "top_interval": self.interval[self.top_value] if self.interval else None,
            "flagged": self.flagged,
        }


@dataclass(frozen=True)
class SamplingInfo:
    """How a sampled audit went: ``accepted`` of ``samples`` worlds were in the set.

    ``estimated_set_size`` is the acceptance interval times the block size, ``None`` when the
    block is too large for a float (``log10_estimated_set_size`` always holds it; a bound of
    zero is ``None`` there)."""

    samples: int
    accepted: int
    acceptance_rate: float
    acceptance_interval: list[float]
    estimated_set_size: list[float] | None
    log10_estimated_set_size: list[float | None]
    confidence: float
    interval: str
    seed: int
    min_accepted: int
    estimable: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AlgorithmAuditResult:
    """What an adversary who knows the algorithm and its candidate order learns from one
    release (Zhang et al. 2007, section 2: the disclosure set and its posterior).

    ``consistent_worlds`` (the block) is exact up to 2**53 and ``None`` beyond, where
    ``log10_consistent_worlds`` carries it."""

    mode: str
    criteria: list[dict[str, Any]]
    predicate: str
    candidates: list[str]
    released: str
    released_index: int
    released_passes: bool
    algorithm_release: str | None
    method: str
    exact_limit: int
    consistent_worlds: int | None
    log10_consistent_worlds: float
    disclosure_set_size: int | None
    true_world_in_set: bool
    threshold: float
    flagged: list[str]
    flagged_rows: list[int]
    predicate_on_set: dict[str, Any]
    safe: bool
    reason: str
    people: list[PersonPosterior]
    people_total: int
    sampling: SamplingInfo | None = None
    elapsed_seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Everything, confidential: people by name with their true values (``--id``)."""
        out = asdict(self)
        out["people"] = [p.to_dict() for p in self.people]
        out["sampling"] = self.sampling.to_dict() if self.sampling else None
        return out

    def public_dict(self) -> dict[str, Any]:
        """The public form: people by row number (:meth:`PersonPosterior.public_dict`), the
        flagged ones as ``flagged_rows``, the predicate on the disclosure set by counts;
        never a name or a sensitive value of a person."""
        out = self.to_dict()
        out["people"] = [p.public_dict() for p in self.people]
        del out["flagged"]
        on_set = dict(self.predicate_on_set)
        for key in ("failing_people", "within_error"):
            if isinstance(on_set.get(key), list):
                on_set[key] = len(on_set[key])
        out["predicate_on_set"] = on_set
        out["redacted"] = True
        return out


@dataclass(frozen=True)
class ReleaseChoice:
    """Which candidate a DDF releases on the true table, and at what cost.

    Block sizes are exact up to 2**53 and ``None`` beyond (``skipped`` entries carry
    ``log10_block_size``)."""

    mode: str
    released: str | None
    released_index: int | None
    disclosure_set_size: int | None
    block_size: int | None
    skipped: list[dict[str, Any]]
    decisions: int
    worlds_enumerated: int
    elapsed_seconds: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
