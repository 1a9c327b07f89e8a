"""Dataset names: a new name close to one the ledger knows is a typo until confirmed.

``adlut`` beside ``adult`` would start a new history whose people were never audited
against ``adult``'s releases, so a first release (or a first policy) under a name within a
small edit of a known dataset's is refused unless its name is repeated as confirmation
(``--new-dataset NAME`` / ``new_dataset``)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from airflow_privacy.errors import InputError, opt

#: names at least this similar (difflib's ratio, case-insensitive) are near misses
CLOSE = 0.75


def near_misses(name: str, known: Iterable[str]) -> list[str]:
    """The known names ``name`` could be a typo of (not ``name`` itself)."""
    folded = name.casefold()
    out = []
    for other in sorted(set(known)):
        if other == name:
            continue
        o = other.casefold()
        if o == folded or difflib.SequenceMatcher(None, folded, o).ratio() >= CLOSE:
            out.append(other)
    return out


def refuse_near_miss(name: str, known: Iterable[str], confirmed: str | None) -> None:
    """Refuse a new dataset ``name`` close to a known one unless ``confirmed`` repeats it."""
    names = set(known)
    if confirmed is not None and confirmed != name:
        raise InputError(
            f"{opt('new_dataset')} {confirmed!r} does not repeat the dataset name {name!r}"
        )
    if name in names or confirmed == name:
        return
    close = near_misses(name, names)
    if close:
        raise InputError(
            f"dataset {name!r} is new, and its name is close to {', '.join(map(repr, close))} "
            f"which the ledger knows: a typo? If it really is a new dataset, confirm with "
            f"{opt('new_dataset')} {name}"
        )
