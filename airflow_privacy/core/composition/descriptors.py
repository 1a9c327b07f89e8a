"""What a published QI label covers: the locatability predicates of Ganta et al. 2008.

Ganta, Kasiviswanathan, Smith, "Composition Attacks and Auxiliary Information in Data Privacy"
(KDD 2008), section 2 (Definition 6, "Locatability"): given an individual's exact QI
values, the adversary finds the equivalence classes whose generalized values are consistent
with them. A label of a generalized release covers a value when

* the label is ``*`` (suppressed): any value;
* the column has a hierarchy and the label is one of its labels (at any level): the value
  generalizes to it at some level (ARX hierarchies,
  :class:`~airflow_privacy.core.hierarchy.Hierarchy`); a hierarchy takes precedence over
  the textual forms below, so ARX's age labels keep their own (sometimes shifted) meaning;
* an inclusive interval ``20-29`` (Mondrian's ``lo-hi`` summaries; negative and decimal
  bounds allowed; ``lo > hi`` is not an interval but a plain label, e.g. ``2020-01``), or a
  bracketed one ``[20, 30)``, ``(19, 29]``: the number lies in it;
* a comparison ``<30``, ``<=30``, ``>=40``, ``>40`` (also ``≤``, ``≥``): the number satisfies it;
* a mask ``130**``: same length, and the unmasked prefix is equal (Table 1's ``3*`` age);
* a set ``{a|b|c}`` (Mondrian's halving split publishes the values present so,
  :func:`airflow_privacy.core.set_labels.set_label`; a backslash escapes ``|``
  and itself inside a value): the value is one of them;
* otherwise, or in addition: the label equals the value (text, or numerically: ``37`` covers
  ``37.0``).

Every predicate is evaluated on the distinct values of a column at once (vectorized).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    from airflow_privacy.core.hierarchy import Hierarchy

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
LabelKind = Literal["any", "hierarchy", "interval", "mask", "exact", "set"]

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_INTERVAL = re.compile(rf"^\s*({_NUM})\s*[-–]\s*({_NUM})\s*$")
_BRACKET = re.compile(rf"^\s*([\[(])\s*({_NUM})\s*[,;]\s*({_NUM})\s*([\])])\s*$")
_COMPARE = re.compile(rf"^\s*(<=|>=|=<|=>|<|>|≤|≥)\s*({_NUM})\s*$")
_MASK = re.compile(r"^([^*]*?)(\*+)$")


@dataclass(frozen=True)
class Label:
    """The meaning of one published label of one QI column."""

    text: str
    kind: LabelKind
    low: float = -math.inf
    high: float = math.inf
    low_closed: bool = True
    high_closed: bool = True
    prefix: str = ""
    length: int = 0
    covers: frozenset[str] = frozenset()

    def matches(self, values: Sequence[str], numbers: FloatArray) -> BoolArray:
        """Which of ``values`` (with ``numbers``, their numeric parse or NaN) it covers."""
        n = len(values)
        if self.kind == "any":
            return np.ones(n, dtype=bool)
        text = self.text.strip()
        out = np.fromiter((v == text for v in values), dtype=bool, count=n)
        if self.kind in ("hierarchy", "set"):
            out |= np.fromiter((v in self.covers for v in values), dtype=bool, count=n)
        elif self.kind == "interval":
            with np.errstate(invalid="ignore"):
                lo = numbers >= self.low if self.low_closed else numbers > self.low
                hi = numbers <= self.high if self.high_closed else numbers < self.high
            out |= lo & hi
        elif self.kind == "mask":
            out |= np.fromiter(
                (len(v) == self.length and v.startswith(self.prefix) for v in values),
                dtype=bool,
                count=n,
            )
        else:
            # a number equals its other spellings (17 and 17.0), but a code with a leading
            # zero (zip 02138, 00) is text: 02138 is not 2138, 00 is not 0
            exact = None if _code(text) else _number(text)
            if exact is not None:
                with np.errstate(invalid="ignore"):
                    same = numbers == exact
                if same.any():
                    same &= ~np.fromiter((_code(v) for v in values), dtype=bool, count=n)
                out |= same
        return out


_CODE = re.compile(r"^\s*[+-]?0\d")


def _code(text: str) -> bool:
    """Whether ``text`` is a code with a leading zero (``02138``, ``00``): compared as
    text, never as the number it spells."""
    return _CODE.match(text) is not None


def _number(text: str) -> float | None:
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def parse_numbers(values: Sequence[str]) -> FloatArray:
    """The numeric value of every string, NaN where it is not a finite number."""
    out = np.full(len(values), np.nan)
    for i, v in enumerate(values):
        x = _number(v)
        if x is not None:
            out[i] = x
    return out


def hierarchy_covers(h: Hierarchy) -> dict[str, frozenset[str]]:
    """For every label of every level of ``h``: the original values it covers."""
    covers: dict[str, set[str]] = {}
    for level in h.levels:
        for value, label in level.items():
            covers.setdefault(label, set()).add(value)
    return {label: frozenset(vals) for label, vals in covers.items()}


def parse_label(
    text: str,
    column: str,
    covers: dict[str, frozenset[str]] | None = None,
) -> Label:
    """Interpret one published label of QI ``column`` (``covers``: the column's hierarchy,
    from :func:`hierarchy_covers`)."""
    t = text.strip()
    if t == "*":
        return Label(text, "any")
    if covers is not None and t in covers:
        return Label(text, "hierarchy", covers=covers[t])
    members = _set_members(t)
    if members is not None:
        return Label(text, "set", covers=members)
    m = _INTERVAL.match(t)
    if m:
        low, high = float(m.group(1)), float(m.group(2))
        if low <= high:  # "2020-01" (a date, not an interval) falls through to "exact"
            return Label(text, "interval", low, high)
    m = _BRACKET.match(t)
    if m:
        low, high = float(m.group(2)), float(m.group(3))
        lc, hc = m.group(1) == "[", m.group(4) == "]"
        if low > high or (low == high and not (lc and hc)):
            raise InputError(f"label {text!r} of QI {column!r} is an empty interval")
        return Label(text, "interval", low, high, lc, hc)
    m = _COMPARE.match(t)
    if m:
        op, bound = m.group(1), float(m.group(2))
        if op in ("<", "<=", "=<", "≤"):
            return Label(text, "interval", high=bound, high_closed=op != "<")
        return Label(text, "interval", low=bound, low_closed=op != ">")
    m = _MASK.match(t)
    if m:
        return Label(text, "mask", prefix=m.group(1), length=len(t))
    return Label(text, "exact")


def _set_members(text: str) -> frozenset[str] | None:
    """The values of a set label ``{a|b}`` (two or more, each stripped as the individuals'
    values are), or ``None`` when ``text`` is not one."""
    from airflow_privacy.core.set_labels import parse_set_label

    values = parse_set_label(text)
    return None if values is None else frozenset(v.strip() for v in values)


def match_matrix(
    labels: Sequence[str],
    values: Sequence[str],
    column: str,
    covers: dict[str, frozenset[str]] | None = None,
) -> BoolArray:
    """``out[u, l]``: does published label ``labels[l]`` cover individual value ``values[u]``."""
    vals = [v.strip() for v in values]
    numbers = parse_numbers(vals)
    out = np.zeros((len(vals), len(labels)), dtype=bool)
    for j, text in enumerate(labels):
        out[:, j] = parse_label(text, column, covers).matches(vals, numbers)
    return out
