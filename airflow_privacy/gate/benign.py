"""The ``benign`` field of the gate's requests: sensitive values whose disclosure is not a
breach, shared by every criterion of a release (docs/worst-case-engine.md, "Benign values").

Validated before any data is read; a value that does not occur in the release is not an
error (a monthly release may lack it) and is noted in the envelope (:func:`benign_details`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from airflow_privacy.errors import InputError, opt


def benign_values(value: Any, name: str = "benign") -> tuple[str, ...]:
    """The declared benign values as a sorted tuple of distinct labels (bad input: a bare
    string, which would be read letter by letter, or a blank or non-text entry)."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence | frozenset | set):
        raise InputError(f"{opt(name)} must be a list of values, got {value!r}"[:200])
    out = set()
    for v in value:
        if not isinstance(v, str) or not v.strip():
            raise InputError(f"{opt(name)}: {v!r} is not a value (text)")
        out.add(v)
    return tuple(sorted(out))


def benign_details(benign: Sequence[str], present: Collection[str]) -> dict[str, Any]:
    """What an envelope records: ``benign`` (the declared values, user-chosen category
    names) and ``benign_absent`` (those not in the release), empty without benign values."""
    if not benign:
        return {}
    absent = [v for v in benign if v not in present]
    return {"benign": list(benign), **({"benign_absent": absent} if absent else {})}
