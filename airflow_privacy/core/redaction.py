"""Removing individuals' sensitive values from texts written before the rule that reasons
never quote them (ledgers and stored reports keep old texts): one definition, used by the
ledger when it reads attempts, the report and the UI."""

from __future__ import annotations

import re

_WORST = re.compile(r"row (\d+): \{.*?\} left after intersecting ")
# the old wording of group witnesses, which quoted values: "has 'HIV' at 100.0%", "does not
# have 'Flu' or 'Cold'", "('x' is 75% of its", "people in group 'g' ('a', 'b')"
_HAS = re.compile(r"\b(has|have) '[^']*'(?: or '[^']*')*")
_SHARE = re.compile(r"\('[^']*' is ")
_KNOWN = re.compile(r"(\bin (?:the target's group|group '[^']*')) \('[^']*'(?:, '[^']*')*\)")


def redact(text: str) -> str:
    """Remove the sensitive values of an individual from a composition reason (``row 147:
    {'AIDS'} left after intersecting A group x with B group y`` -> ``row 147 pinned down
    after intersecting A group x with B group y``) and the values quoted by the old wording
    of the other criteria (``group 'g' has 'HIV' at 100.0%`` -> ``group 'g' has a sensitive
    value at 100.0%``)."""
    text = _WORST.sub(lambda m: f"row {m.group(1)} pinned down after intersecting ", text)
    text = _HAS.sub(lambda m: f"{m.group(1)} a sensitive value", text)
    text = _SHARE.sub("(its most frequent value is ", text)
    return _KNOWN.sub(lambda m: m.group(1), text)
