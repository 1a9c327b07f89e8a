"""The wording and rules for cells and columns that every reader shares: a one-line list of
column names, the ``missing_as`` replacement for blank sensitive cells, and the message that
refuses blank cells.

Kept apart from :mod:`airflow_privacy.core.io` (the file readers) so that the release model,
the readers and the backends use one wording without importing one another.
"""

from __future__ import annotations

from collections.abc import Sequence

from airflow_privacy.errors import InputError, opt


def describe_columns(names: Sequence[str], limit: int = 30) -> str:
    """Column names for a one-line message: ``a, b, c``; a name that is not printable text
    (a line break, control characters) shown quoted and escaped, at most ``limit`` names."""
    shown = [n if n.isprintable() and n.strip() == n and n else repr(n) for n in names[:limit]]
    more = len(names) - limit
    text = ", ".join(shown) + (f", ... ({more:,} more)" if more > 0 else "")
    return text if len(text) <= 1000 else text[:997] + "..."


def check_missing_as(missing_as: object) -> str | None:
    """``missing_as`` checked: ``None`` (blank sensitive cells are refused) or a non-blank
    text that replaces them."""
    if missing_as is None:
        return None
    if not isinstance(missing_as, str):
        raise InputError(f"{opt('missing_as')} must be text, got {type(missing_as).__name__}")
    if not missing_as.strip():
        raise InputError(f"{opt('missing_as')} must not be blank: give the value to publish")
    return missing_as


def blank_cells_message(column: str, source: str, count: int, first: str) -> str:
    """The message that refuses ``count`` blank cells of sensitive ``column`` of ``source``;
    ``first`` says where the first one is (``data row 17``)."""
    if count == 1:
        return (
            f"column {column!r} of {source} has 1 blank cell (in {first}); fill it, or pass "
            f"{opt('missing_as')} VALUE to publish it as VALUE"
        )
    return (
        f"column {column!r} of {source} has {count:,} blank cells (the first in {first}); "
        f"fill them, or pass {opt('missing_as')} VALUE to publish them as VALUE"
    )
