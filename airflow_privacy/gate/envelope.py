"""The report envelope: what every step of the gate returns, in one typed shape.

The same envelope is the XCom value of an operator, the ``--format json`` output of the
command, the record of a check in the ledger (``ledger_checks.envelope``) and the input of
the HTML release report, so nothing downstream guesses a shape from its keys.

An envelope never carries an individual's sensitive value or a raw identifier: witnesses
name groups (published labels) and pseudonymous positions (a person is a row number of the
input, or "person #i" of a knowledge file). Confidential detail goes only to files the user
asks for by name (``audit --individuals FILE``).

``safe`` is the verdict and only ever ``True``, ``False`` or ``None`` (no verdict: an
estimate without a threshold, a step that decides nothing); :meth:`Envelope.from_dict`
refuses anything else, so ``"false"``, ``0`` or a missing verdict can never read as "passed".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from airflow_privacy.errors import InputError

SCHEMA = 1
STEPS = (
    "check",
    "anonymize",
    "maxent",
    "audit",
    "validate",
    "attempt",
    "publish",
    "block",
    "supersede",
    "report",
    "record",
    "disclosure",
    "skyline",
    "audit-algorithm",
    "risk",
    "policy",
    "override",
    "dp-release",
    "ledger",
)
OUTCOMES = (
    "passed",  # a check whose every criterion holds
    "failed",  # a check that found the release unsafe
    "estimated",  # a risk estimate without a threshold (no verdict)
    "written",  # an anonymizer wrote the release
    "opened",  # an attempt was opened
    "already-published",  # the content was published before: nothing done again
    "published",  # the gate published the release
    "blocked",  # the gate (or a steward) blocked the attempt
    "superseded",  # a steward set a blocked attempt aside
    "recorded",  # content recorded in the ledger
    "not-published",  # a report of a run that published nothing
    "computed",  # an exploration (curve, skyline, algorithm audit); a policy or ledger shown
    "proposed",  # a policy change that waits for a second person
    "rejected",  # a proposed policy change a second person rejected
)


@dataclass(frozen=True)
class ReleaseFacts:
    """Which release a step looked at and its shape (no values)."""

    ref: str
    records: int | None = None
    groups: int | None = None
    sensitive: str | None = None
    group_columns: list[str] = field(default_factory=list)
    kind: str | None = None


@dataclass(frozen=True)
class AttemptRef:
    """The ledger attempt a step belongs to. ``release_uuid`` identifies the release in a way
    that survives moving the ledger (links use it)."""

    uuid: str
    status: str
    dataset: str
    version: str
    release_id: int
    release_uuid: str
    release_status: str


@dataclass(frozen=True)
class Envelope:
    """One step's report (module doc)."""

    step: str
    name: str
    outcome: str
    safe: bool | None
    summary: str
    reasons: list[str] = field(default_factory=list)
    release: ReleaseFacts | None = None
    attempt: AttemptRef | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    #: the way forward from a block: changes computed from the data and re-checked before
    #: they are suggested (:mod:`airflow_privacy.core.advice`), each with ``kind``,
    #: ``criterion``, ``text`` and its cost; empty when nothing failed or nothing passes
    advice: list[dict[str, Any]] = field(default_factory=list)
    tool_version: str = ""
    created_at: str = ""
    schema: int = SCHEMA

    def __post_init__(self) -> None:
        if self.step not in STEPS:
            raise InputError(f"unknown step {self.step!r} in a report envelope")
        if self.outcome not in OUTCOMES:
            raise InputError(f"unknown outcome {self.outcome!r} in a report envelope")
        _verdict(self.safe, "safe")
        for r in self.results:
            if isinstance(r, dict) and "safe" in r:
                _verdict(r["safe"], f"safe of result {r.get('criterion', '?')!r}")
        if not self.tool_version:
            from airflow_privacy import __version__

            object.__setattr__(self, "tool_version", __version__)
        if not self.created_at:
            stamp = datetime.now(UTC).replace(microsecond=0).isoformat()
            object.__setattr__(self, "created_at", stamp)

    @property
    def passed(self) -> bool:
        return self.safe is True

    def to_dict(self) -> dict[str, Any]:
        """Strict-JSON plain data (no NaN or infinity, no tuples)."""
        out: dict[str, Any] = _json_safe(asdict(self))
        return out

    @classmethod
    def from_dict(cls, d: Any, source: str = "report") -> Envelope:
        """The inverse of :meth:`to_dict`; refuses anything that is not an envelope, naming
        ``source`` (a file, a task)."""
        if not isinstance(d, dict):
            raise InputError(f"{source} is not a report envelope (a JSON object)")
        missing = [k for k in ("step", "name", "outcome", "safe", "summary") if k not in d]
        if missing:
            raise InputError(
                f"{source} is not a report envelope of this version (missing {', '.join(missing)})"
            )
        schema = d.get("schema", SCHEMA)
        if schema != SCHEMA:
            raise InputError(f"{source}: envelope schema {schema!r} is not {SCHEMA}")
        for key in ("reasons", "results"):
            if not isinstance(d.get(key, []), list):
                raise InputError(f"{source}: {key} must be a list")
        for key in ("details", "outputs"):
            if not isinstance(d.get(key, {}), dict):
                raise InputError(f"{source}: {key} must be an object")
        release = d.get("release")
        attempt = d.get("attempt")
        try:
            return cls(
                step=str(d["step"]),
                name=str(d["name"]),
                outcome=str(d["outcome"]),
                safe=_verdict(d["safe"], f"{source}: safe"),
                summary=str(d["summary"]),
                reasons=[str(r) for r in d.get("reasons") or []],
                release=ReleaseFacts(**release) if isinstance(release, dict) else None,
                attempt=AttemptRef(**attempt) if isinstance(attempt, dict) else None,
                results=[dict(r) for r in d.get("results") or [] if isinstance(r, dict)],
                details=dict(d.get("details") or {}),
                outputs={str(k): str(v) for k, v in (d.get("outputs") or {}).items()},
                advice=[dict(a) for a in d.get("advice") or [] if isinstance(a, dict)],
                tool_version=str(d.get("tool_version") or ""),
                created_at=str(d.get("created_at") or ""),
                schema=SCHEMA,
            )
        except TypeError as exc:
            raise InputError(f"{source} is not a report envelope: {exc}") from None


def _verdict(value: Any, what: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise InputError(f"{what} must be true, false or null, got {value!r}")


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):  # numpy scalars
        return _json_safe(value.item())
    return value


def attempt_ref(info: Any) -> AttemptRef:
    """An :class:`AttemptRef` from a ledger ``AttemptInfo``."""
    rel = info.release
    return AttemptRef(
        uuid=info.uuid,
        status=info.status,
        dataset=rel.dataset,
        version=rel.version,
        release_id=int(rel.id),
        release_uuid=rel.uuid,
        release_status=rel.status,
    )


def failed_task_reasons(failed: Mapping[str, str]) -> list[str]:
    """One reason per task the release depended on that did not succeed (task -> state),
    in task order: ``task validate ended failed``."""
    return [f"task {task} ended {state}" for task, state in sorted(failed.items())]
