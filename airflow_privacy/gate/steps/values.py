"""Checks of a request's values that every step's service makes (whatever front end built
the request): a column name, a list of column names. Messages name the field with
:func:`~airflow_privacy.errors.opt`, so each front end shows its own spelling."""

from __future__ import annotations

from typing import Any

from airflow_privacy.errors import InputError, opt


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
