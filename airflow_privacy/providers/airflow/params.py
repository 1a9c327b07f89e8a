"""Operator arguments checked like the command line's options: wrong types, command-line
syntax and values out of range are bad input (``InputError`` naming the argument), never a
``TypeError`` deep in an engine nor a silent default.

Every operator checks its arguments with one function (:class:`Args`), twice:

* when the DAG is parsed (the operator's constructor), every value that is not a template:
  a mistake is a DAG import error. A value is a template when it is text containing
  ``{{``; in a list or a mapping, only its templated elements wait (``criteria`` with one
  templated number still has its names and other numbers checked);
* when the task runs, every value again, after rendering (templated values arrive as text
  and are turned into numbers here).

Only an argument that was never given gets its default: a given argument that is blank
(``None`` where a value is needed, ``""``, ``"None"``: what a template renders for
"nothing") is bad input naming it, so a template that renders empty never falls back to a
default (for ``confidence``, the weakest setting). An operator lists the few arguments where
blank documentedly means "the default" in ``blank_means_default``. Messages name the
operator's argument, never a command-line flag.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from airflow_privacy.errors import InputError

TEMPLATE = "{{"
_SPAN = re.compile(r"\{\{.*?\}\}", re.S)
#: a ledger name (dataset, version, check) is stored as text of at most this many characters
MAX_LABEL = 255
#: stand-ins for templated criterion parameters, so that the rest of a criterion is checked
#: when the DAG is parsed (each passes every criterion's check of that parameter)


def is_template(value: Any) -> bool:
    """Whether ``value`` is a Jinja template (text containing ``{{``)."""
    return isinstance(value, str) and TEMPLATE in value


def templated(value: Any) -> bool:
    """Whether ``value`` still holds a Jinja template anywhere (checked again after
    rendering)."""
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


@contextmanager
def airflow_words() -> Iterator[None]:
    """Messages of the block in the operators' words, frozen: an ``InputError`` raised when
    a DAG is parsed is shown later (a DAG import error), outside any front end."""
    from airflow_privacy.errors import speaking

    with speaking("airflow"):
        try:
            yield
        except InputError as exc:
            raise InputError(str(exc)) from None


# ---------------------------------------------------------------- single values
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


def label(value: Any, name: str) -> str:
    """A name the ledger stores (dataset, version, check): text, at most 255 characters."""
    out = str(text(value, name))
    if len(out) > MAX_LABEL:
        raise InputError(f"{name} is longer than {MAX_LABEL} characters")
    if "\x00" in out:
        raise InputError(f"{name} contains a NUL character")
    return out


def column(value: Any, name: str) -> str:
    """A column name the release will carry: printable, without leading or trailing blanks
    (a CSV header reads back stripped)."""
    out = str(text(value, name))
    if out != out.strip() or any(not ch.isprintable() for ch in out):
        raise InputError(
            f"{name} must be a printable column name without leading or trailing blanks, "
            f"got {out!r}"
        )
    return out


def number(
    value: Any,
    name: str,
    low: float,
    high: float,
    *,
    open_low: bool = False,
    open_high: bool = False,
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
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{name} must be a number, got {value!r}")
    if (value <= low if open_low else value < low) or (
        value >= high if open_high else value > high
    ):
        lo, hi = "(" if open_low else "[", ")" if open_high else "]"
        raise InputError(f"{name} must be in {lo}{low:g}, {high:g}{hi}, got {value:g}")
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


def choice(value: Any, name: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise InputError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


# ------------------------------------------------------------- lists, mappings
def columns(
    value: Any,
    name: str,
    required: bool = True,
    *,
    noun: str = "column name",
    unique: bool = False,
    partial: bool = False,
) -> list[str] | None:
    """A non-empty list of names (``noun``: what each names). ``partial``: when the DAG is
    parsed, templated elements wait for rendering."""
    if value is None:
        if required:
            raise InputError(f"{name} is required: a list of {noun}s")
        return None
    if isinstance(value, str):
        raise InputError(
            f"{name} must be a list of {noun}s, got the text {value[:60]!r} "
            f"(write {name}=[{value[:60]!r}])"
        )
    if not isinstance(value, Sequence) or not value:
        raise InputError(f"{name} must be a non-empty list of {noun}s, got {value!r}")
    out = []
    for v in value:
        if partial and is_template(v):
            continue
        if not isinstance(v, str) or not v.strip() or v.strip() == "None":
            raise InputError(f"{name}: {v!r} is not a {noun}")
        if v.lstrip().startswith("--"):
            raise InputError(f"{name}: {v!r} looks like a command-line option, not a {noun}")
        out.append(v)
    if unique:
        twice = sorted({v for v in out if out.count(v) > 1})
        if twice:
            raise InputError(f"{name} names {', '.join(map(repr, twice))} more than once")
    return out


def mapping(value: Any, name: str, keys: str | None = "column name") -> dict[str, Any]:
    """A mapping (None: empty) whose keys are ``keys`` (names, checked unless None)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(
            f"{name} must be a mapping (dict), got {type(value).__name__} {value!r}"[:200]
        )
    for key in value:
        if keys and (not isinstance(key, str) or not key.strip() or key.lstrip().startswith("--")):
            raise InputError(f"{name}: the key {key!r} is not a {keys}")
    return {str(k): v for k, v in value.items()}


def files(value: Any, name: str, *, partial: bool = False) -> dict[str, str]:
    """``{column: path}`` (hierarchy files); ``partial``: templated paths wait."""
    out: dict[str, str] = {}
    for col, path in mapping(value, name).items():
        if partial and is_template(path):
            continue
        if not isinstance(path, str):
            raise InputError(
                f"{name}[{col!r}] must be a path (text), got {type(path).__name__} {path!r}"
            )
        out[col] = str(text(path, f"{name}[{col!r}]"))
    return out


def intervals(value: Any, name: str = "intervals") -> dict[str, list[int]]:
    """``{column: [width, ...]}``: whole numbers > 0, increasing (the levels of a numeric
    hierarchy built from the data)."""
    out: dict[str, list[int]] = {}
    for col, widths in mapping(value, name).items():
        where = f"{name}[{col!r}]"
        if isinstance(widths, str):
            parts = [p.strip() for p in re.split(r"[,;\s]+", widths) if p.strip()]
            shown = (
                f"[{', '.join(parts)}]" if parts and all(p.isdigit() for p in parts) else "[5, 10]"
            )
            raise InputError(
                f"{where} must be a list of whole-number widths, got the text {widths[:60]!r} "
                f"(write {name}={{{col!r}: {shown}}})"
            )
        if not isinstance(widths, Sequence) or not widths:
            raise InputError(
                f"{where} must be a non-empty list of whole-number widths, got {widths!r}"
            )
        ws: list[int] = []
        for w in widths:
            if isinstance(w, bool) or not isinstance(w, int) or w <= 0:
                raise InputError(f"{where}: width {w!r} is not a whole number > 0")
            ws.append(w)
        if ws != sorted(ws):
            raise InputError(f"{where}: the widths must be increasing, got {ws}")
        out[col] = ws
    return out


def masks(value: Any, name: str = "masks") -> dict[str, int | None]:
    """``{column: depth or None}``: a depth is a whole number >= 0 (None: every character)."""
    out: dict[str, int | None] = {}
    for col, depth in mapping(value, name).items():
        if depth is not None and (
            isinstance(depth, bool) or not isinstance(depth, int) or depth < 0
        ):
            raise InputError(f"{name}[{col!r}] must be a whole number >= 0 or None, got {depth!r}")
        out[col] = depth
    return out


def option_values(value: Any, name: str) -> dict[str, Any]:
    """``method_options``: each option's value checked as its command-line flag is declared
    (:data:`airflow_privacy.gate.steps.anonymize.OPTIONS`) and brought to its type; None
    counts as not given. Which method a key applies to is the step's rule."""
    from airflow_privacy.gate.steps.anonymize import ANONYMIZE, OPTIONS

    fields = {option: ANONYMIZE.field(key) for key, (option, _) in OPTIONS.items()}
    out: dict[str, Any] = {}
    for key, v in mapping(value, name, keys=None).items():
        f = fields.get(key)
        if f is None or v is None:
            out[key] = v
            continue
        where = f"{name}[{key!r}]"
        if blank(v):
            raise InputError(f"{where} is blank: give a value or leave the key out")
        if f.kind == "choice":
            out[key] = choice(v, where, f.choices)
        elif f.kind == "number":
            out[key] = number(v, where, f.low or 0.0, f.high if f.high is not None else math.inf,
                              open_low=f.open_low, open_high=f.open_high)  # fmt: skip
        elif f.kind == "whole":
            out[key] = whole(v, where, int(f.low or 0), int(f.high or 2**63 - 1))
        else:
            out[key] = column(v, where)
    return {k: v for k, v in out.items() if v is not None}


# ---------------------------------------------------------------------- criteria
def criteria(value: Any, name: str, *, partial: bool = False) -> None:
    """Check ``value`` as the gate parses criteria. ``partial`` (when the DAG is parsed): a
    templated parameter is stood in for, so that every name and every other parameter is
    checked now; a criterion whose name (or a parameter's name) is templated waits."""
    from airflow_privacy.gate.criteria import parse_criteria

    if partial and is_template(value):
        return
    if not partial or not templated(value) or isinstance(value, str | Mapping):
        parse_criteria(value, name)
        return
    if not isinstance(value, Sequence):
        parse_criteria(value, name)
        return
    known = [c for c in (_stand_in(item) for item in value) if c is not None]
    if known:
        parse_criteria(known, name)


def _stand_in(item: Any) -> Any:
    """``item`` with every templated parameter value replaced by a valid stand-in (None when
    the rest of it cannot be checked before rendering)."""
    if not templated(item):
        return item
    if isinstance(item, str):
        return _stand_in_spec(item)
    if isinstance(item, Mapping):
        if templated(item.get("name")):
            return None
        out: dict[str, Any] = {}
        for key, v in item.items():
            if key == "parameters" and isinstance(v, Mapping):
                out[key] = {k: _stand_in_value(k, x) for k, x in v.items()}
            elif key != "name":
                out[key] = _stand_in_value(key, v)
            else:
                out[key] = v
        return out
    return None


def _declared(key: Any) -> Any:
    """The declaration of a criterion parameter called ``key`` (its kind, its stand-in)."""
    from airflow_privacy.core.criteria.registry import parameter_named

    return parameter_named(key) if isinstance(key, str) else None


def _stand_in_value(key: Any, value: Any) -> Any:
    if not templated(value):
        return value
    declared = _declared(key)
    if declared is None:
        return value
    if declared.repeatable and isinstance(value, list | tuple):
        return [declared.stand_in()[0] if templated(p) else p for p in value]
    return declared.stand_in()


def _stand_in_spec(spec: str) -> Any:
    """``"NAME:k=3,c={{ params.c }}"``: the name and the parameters not templated."""
    from airflow_privacy.core.criteria.registry import lookup
    from airflow_privacy.gate.criteria import parse_spec

    head, _, _ = spec.partition(":")
    if TEMPLATE in head:
        return None
    crit = head.strip()
    if crit.startswith("-") or not crit:
        return spec  # parse_spec says what is wrong
    lookup(crit)  # an unknown criterion is bad input naming the known ones
    marker = "\x01templated\x01"
    try:
        parsed_name, params = parse_spec(_SPAN.sub(marker, spec))
    except InputError:
        return None  # the template may hold what the syntax needs: checked after rendering
    out: dict[str, Any] = {}
    for key, v in params.items():
        if marker in key:
            return None
        declared = _declared(key)
        if declared is not None and declared.repeatable:
            out[key] = [declared.stand_in()[0] if marker in p else p for p in v]
        elif isinstance(v, str) and marker in v:
            out[key] = declared.stand_in() if declared is not None else v
        else:
            out[key] = v
    return (parsed_name, out)


# ------------------------------------------------------------ per-operator checks
class Args:
    """One operator's arguments, read by name from its attributes and checked (module doc).

    ``parsing``: the DAG is being parsed, so templates wait. The methods return the checked
    value (converted: numbers from text, ...) when the task runs; when parsing, what they
    return is not used.
    """

    def __init__(self, operator: Any, parsing: bool) -> None:
        self.op = operator
        self.parsing = parsing
        self.blank_ok: frozenset[str] = frozenset(getattr(operator, "blank_means_default", ()))
        self.fields: frozenset[str] = frozenset(getattr(operator, "template_fields", ()))

    def _value(self, name: str, optional: bool) -> tuple[bool, Any]:
        """(done, value): done when nothing (more) is to be checked: a template while
        parsing, an optional argument not given, or a blank one where blank means the
        default. A given argument that is blank is bad input."""
        value = getattr(self.op, name)
        if name not in self.fields and templated(value):
            raise InputError(
                f"{name} is not templated: {value!r} would be used as written; give the value"
            )
        if self.parsing and is_template(value):
            return True, value
        if value is None:
            if optional:
                return True, None
            raise InputError(f"{name} must have a value, got None")
        if blank(value):
            if name in self.blank_ok:
                return True, None
            raise InputError(
                f"{name} is blank ({value!r}): a given argument needs a value (a template "
                f"must render one){'; leave it out for its default' if optional else ''}"
            )
        return False, value

    def text(self, name: str, *, optional: bool = False) -> Any:
        done, value = self._value(name, optional)
        return value if done else text(value, name)

    def label(self, name: str, *, optional: bool = False) -> Any:
        done, value = self._value(name, optional)
        if done:
            return value
        if not isinstance(value, str):
            raise InputError(
                f"{name} must be text (the ledger stores it as text), got "
                f"{type(value).__name__} {value!r} (write {name}={str(value)!r})"
            )
        return label(value, name)

    def column(self, name: str, *, optional: bool = False) -> Any:
        done, value = self._value(name, optional)
        return value if done else column(value, name)

    def number(
        self,
        name: str,
        low: float,
        high: float,
        *,
        optional: bool = False,
        open_low: bool = False,
        open_high: bool = False,
    ) -> Any:
        done, value = self._value(name, optional)
        if done:
            return value
        return number(value, name, low, high, open_low=open_low, open_high=open_high)

    def whole(self, name: str, low: int, high: int, *, optional: bool = False) -> Any:
        done, value = self._value(name, optional)
        return value if done else whole(value, name, low, high)

    def flag(self, name: str) -> Any:
        done, value = self._value(name, False)
        return value if done else flag(value, name)

    def choice(self, name: str, choices: Sequence[str], *, optional: bool = False) -> Any:
        done, value = self._value(name, optional)
        return value if done else choice(value, name, choices)

    def names(
        self,
        name: str,
        *,
        optional: bool = False,
        noun: str = "column name",
        unique: bool = False,
    ) -> Any:
        done, value = self._value(name, optional)
        if done:
            return value
        return columns(value, name, noun=noun, unique=unique, partial=self.parsing)

    def values(self, name: str) -> Any:
        """A list of values (text), possibly empty."""
        done, value = self._value(name, True)
        if done:
            return () if value is None else value
        if isinstance(value, str) or not isinstance(value, Sequence):
            raise InputError(
                f"{name} must be a list of values, got {type(value).__name__} {value!r}"[:200]
            )
        for v in value:
            if not (self.parsing and is_template(v)) and (not isinstance(v, str) or blank(v)):
                raise InputError(f"{name}: {v!r} is not a value (text)")
        return tuple(value)

    def wholes(self, name: str, low: int, high: int, *, optional: bool = False) -> Any:
        """A non-empty list of whole numbers in [low, high] (not text: ``"12"`` is refused,
        not read as ``[1, 2]``)."""
        done, value = self._value(name, optional)
        if done:
            return value
        if isinstance(value, str) or not isinstance(value, Sequence) or not value:
            raise InputError(
                f"{name} must be a non-empty list of whole numbers, got "
                f"{type(value).__name__} {value!r}"[:200]
            )
        out = []
        for v in value:
            if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
                raise InputError(f"{name}: {v!r} is not a whole number in [{low}, {high}]")
            out.append(v)
        return out

    def files(self, name: str) -> Any:
        done, value = self._value(name, True)
        if done:
            return {} if value is None else value
        return files(value, name, partial=self.parsing)

    def criteria(self, name: str) -> Any:
        done, value = self._value(name, False)
        if not done:
            criteria(value, name, partial=self.parsing)
        return value


def check_rendered(operator: Any) -> None:
    """After rendering: an argument given as a template that rendered blank is bad input
    (module doc), unless blank means its default (``blank_means_default``)."""
    given = getattr(operator, "_templated_args", ())
    allowed = getattr(operator, "blank_means_default", ())
    for name in given:
        value = getattr(operator, name, None)
        if name not in allowed and blank(value):
            raise InputError(
                f"{name} was given as a template that rendered blank ({value!r}): a given "
                "argument needs a value (leave it out for its default)"
            )
