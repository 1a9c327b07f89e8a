"""Checks of a request's values that every step's service makes (whatever front end built
the request): a column name, a list of column names. Messages name the field with
:func:`~airflow_privacy.errors.opt`, so each front end shows its own spelling."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt

if TYPE_CHECKING:
    from airflow_privacy.gate.steps.fields import Field


def columns(value: Any, what: str) -> list[str]:
    """A list of column names (refuses a bare string, which would be read letter by letter)."""
    if isinstance(value, str):
        raise InputError(
            f"{opt(what)} must be a list of column names, got the text {value[:60]!r} "
            f"(write [{value[:60]!r}])"
        )
    if not isinstance(value, list | tuple) or not value:
        raise InputError(f"{opt(what)} must be a non-empty list of column names")
    out = []
    for v in value:
        if not isinstance(v, str) or not v.strip():
            raise InputError(f"{opt(what)}: {v!r} is not a column name")
        if v.startswith("--"):
            raise InputError(f"{opt(what)}: {v!r} looks like a command-line option, not a column")
        out.append(v)
    return out


def column(value: Any, what: str) -> str:
    """One column name."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{opt(what)} must be a column name, got {value!r}")
    if value.startswith("--"):
        raise InputError(f"{opt(what)}: {value!r} looks like a command-line option, not a column")
    return value


def given_or(value: Any, default: Any) -> Any:
    """``value``, or ``default`` when it was not given (None): a given blank stays blank and
    is refused by the checks, never replaced by the default."""
    return default if value is None else value


def in_range(f: Field, value: Any) -> None:
    """``value`` is a number (a whole one for a ``whole`` field) in ``f``'s declared range."""
    whole = f.kind == "whole"
    what = "a whole number" if whole else "a number"
    ok_type = not isinstance(value, bool) and (
        isinstance(value, int) if whole else isinstance(value, int | float)
    )
    if not ok_type or (not whole and not math.isfinite(value)):
        raise InputError(f"{opt(f.key)} must be {what}, got {value!r}")
    lo = -math.inf if f.low is None else f.low
    hi = math.inf if f.high is None else f.high
    below = value <= lo if f.open_low else value < lo
    above = value >= hi if f.open_high else value > hi
    if below or above:
        left = "(" if f.open_low or f.low is None else "["
        right = ")" if f.open_high or f.high is None else "]"
        span = f"{left}{'-inf' if f.low is None else _bound(f.low, whole)}, "
        span += f"{'inf' if f.high is None else _bound(f.high, whole)}{right}"
        # a whole number's message says so; a number's names only the range (its type is
        # right): "--c must be in (0, 1], got 1.5"
        raise InputError(
            f"{opt(f.key)} must be {'a whole number ' if whole else ''}in {span}, got {value!r}"
        )


def _bound(x: float, whole: bool) -> str:
    """A range's end as a message shows it: whole numbers in full (``1000000000``)."""
    return str(int(x)) if whole else f"{x:g}"


def at_most_one(keys: list[str], given: list[str]) -> None:
    """At most one of the fields ``keys`` (a declared exclusive set) is ``given``."""
    if len(given) > 1:
        names = [opt(k) for k in keys]
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        raise InputError(f"give at most one of {listed} (got {', '.join(opt(g) for g in given)})")
