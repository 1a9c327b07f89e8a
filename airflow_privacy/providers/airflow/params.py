"""Operator arguments checked like the command line's options: wrong types and command-line
syntax are bad input (``InputError`` naming the argument), never a ``TypeError`` deep in an
engine.

Arguments that are not templated are checked when the DAG is parsed (the operator's
constructor), so a mistake shows as a DAG import error; templated ones arrive as text after
rendering and are checked (and turned into numbers) when the task runs. Messages name the
operator's argument.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airflow_privacy.errors import InputError

TEMPLATE = "{{"


def templated(value: Any) -> bool:
    """Whether ``value`` still holds a Jinja template (checked again after rendering)."""
    if isinstance(value, str):
        return TEMPLATE in value
    if isinstance(value, Mapping):
        return any(templated(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(templated(v) for v in value)
    return False


def blank(value: Any) -> bool:
    """None, or what a template renders for "nothing" (``""``, ``"None"``)."""
    return value is None or (isinstance(value, str) and value.strip() in ("", "None"))


def text(value: Any, name: str, required: bool = True) -> str | None:
    if blank(value):
        if required:
            raise InputError(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise InputError(f"{name} must be text, got {type(value).__name__} {value!r}")
    if value.lstrip().startswith("--"):
        raise InputError(f"{name}={value!r} looks like a command-line option; give the value")
    return value


def columns(value: Any, name: str, required: bool = True) -> list[str] | None:
    if value is None:
        if required:
            raise InputError(f"{name} is required: a list of column names")
        return None
    if isinstance(value, str):
        raise InputError(
            f"{name} must be a list of column names, got the text {value[:60]!r} "
            f"(write {name}=[{value[:60]!r}])"
        )
    if not isinstance(value, Sequence) or not value:
        raise InputError(f"{name} must be a non-empty list of column names, got {value!r}")
    out = []
    for v in value:
        if not isinstance(v, str) or not v.strip():
            raise InputError(f"{name}: {v!r} is not a column name")
        if v.startswith("--"):
            raise InputError(f"{name}: {v!r} looks like a command-line option, not a column")
        out.append(v)
    return out


def number(
    value: Any, name: str, low: float, high: float, *, open_low: bool = False
) -> float | None:
    if blank(value):
        return None
    if isinstance(value, bool):
        raise InputError(f"{name} must be a number, got {value!r}")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise InputError(f"{name} must be a number, got {value!r}") from None
    if not isinstance(value, int | float) or value != value:
        raise InputError(f"{name} must be a number, got {value!r}")
    if (value <= low if open_low else value < low) or value > high:
        bracket = "(" if open_low else "["
        raise InputError(f"{name} must be in {bracket}{low:g}, {high:g}], got {value:g}")
    return float(value)


def whole(value: Any, name: str, low: int, high: int) -> int | None:
    if blank(value):
        return None
    if isinstance(value, bool):
        raise InputError(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise InputError(f"{name} must be a whole number, got {value!r}") from None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{name} must be a whole number in [{low}, {high}], got {value!r}")
    return value


def flag(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise InputError(f"{name} must be true or false, got {value!r}")


def mapping(value: Any, name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"{name} must be a mapping (dict), got {type(value).__name__} {value!r}")
    return {str(k): v for k, v in value.items()}


def choice(value: Any, name: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise InputError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return str(value)
