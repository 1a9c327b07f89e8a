"""Pseudonyms for sensitive values in witnesses: ``value A``, ``value B``, ...

A witness explains *how* an adversary reaches a disclosure: the target's value, the values
excluded, the values of other people. Which values those are is the disclosure itself (a
failing check's witness goes to logs, XCom and the ledger of a release that is not
published), so an explanation names each distinct value by a letter, in order of first
mention: the target's value is always ``value A``. The structure of the knowledge (how
many values, which ones are the same) stays readable; the values do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from string import ascii_uppercase


def letters(i: int) -> str:
    """``0 -> A``, ``25 -> Z``, ``26 -> AA``, ... (spreadsheet column names)."""
    out = ""
    i += 1
    while i > 0:
        i, r = divmod(i - 1, 26)
        out = ascii_uppercase[r] + out
    return out


class ValueNames:
    """``value A``, ``value B``, ... for the sensitive values of one explanation, in order
    of first mention (call it on the target's value first)."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}

    def __call__(self, value: str) -> str:
        name = self._names.get(value)
        if name is None:
            name = f"value {letters(len(self._names))}"
            self._names[value] = name
        return name

    def quoted(self, values: Sequence[str]) -> str:
        """``value B, value C``: several values, comma-separated."""
        return ", ".join(self(v) for v in values)
