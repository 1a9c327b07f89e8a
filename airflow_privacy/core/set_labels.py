"""Set labels: how a partition covering several values of a categorical quasi-identifier
is published (Mondrian's halving split), and read back (the composition audit).

``{a|b|c}``: the values in a fixed order, a backslash escaping ``|`` and itself inside a
value; a single value is published as itself.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["parse_set_label", "set_label"]


def set_label(values: Sequence[str]) -> str:
    """A halving partition's published value on a categorical QI: the single value present,
    else the values present in the fixed order as ``{a|b|c}``, with ``\\`` and ``|``
    inside a value escaped by a backslash (:func:`parse_set_label` reads it back)."""
    if len(values) == 1:
        return values[0]
    return "{" + "|".join(v.replace("\\", "\\\\").replace("|", "\\|") for v in values) + "}"


def parse_set_label(label: str) -> tuple[str, ...] | None:
    """The values of a :func:`set_label` of several values, or ``None`` when ``label`` is
    not one (a single value is published as itself)."""
    if len(label) < 2 or label[0] != "{" or label[-1] != "}":
        return None
    out: list[str] = []
    current: list[str] = []
    escaped = False
    for ch in label[1:-1]:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "|":
            out.append("".join(current))
            current = []
        else:
            current.append(ch)
    if escaped:
        return None
    out.append("".join(current))
    return tuple(out) if len(out) >= 2 else None
