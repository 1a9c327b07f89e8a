"""Background knowledge as data: the statements an adversary may hold (Du et al. 2008).

* :class:`DistributionFact`: knowledge about the data distribution, ``P(s | Q_v)`` for a
  set of sensitive values and a subset ``Q_v`` of the QI attributes (section 4.1), exact
  or within an interval (vague knowledge, section 4.5).
* :class:`IndividualFact`: knowledge about individuals named by pseudonyms (section 6):
  "Alice has s" / "Alice has s1 or s2" (one person; the bound is a probability) and
  "two of Alice, Bob and Charlie have s" (several people; the bound is a number of people).
* :class:`Person`: a pseudonym and the person's full QI value.

Every statement carries a :class:`Source` (a label, the line of the knowledge file, or the
association rule it was mined from) so that errors and infeasibility reports point at it.
Messages point at a statement by its line or rule position only
(:meth:`Source.describe`), never by its label, its sensitive values or the names of the
people it concerns: a named person is ``person #i`` (:func:`pseudonyms`), the numbering
the public form of a result uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Source:
    """Where a statement came from: ``label`` (a name or a mined rule: confidential, it may
    quote values), ``line`` and ``file`` of a knowledge file, ``rule`` (1-based position
    among the mined association rules)."""

    label: str
    line: int | None = None
    file: str | None = None
    rule: int | None = None

    def describe(self) -> str:
        """The statement's position, without its content: ``the statement on line 4`` (of
        the knowledge file), ``mined rule #2``; a statement from neither (built in code) is
        named by its label."""
        if self.line is not None:
            return f"the statement on line {self.line}"
        if self.rule is not None:
            return f"mined rule #{self.rule}"
        return f"the statement {self.label!r}" if self.label else "a statement"

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "line": self.line, "file": self.file, "rule": self.rule}


@dataclass(frozen=True)
class Bound:
    """``low <= value <= high``; an equality when ``low == high``."""

    low: float
    high: float

    @property
    def exact(self) -> bool:
        return self.low == self.high

    def scaled(self, factor: float) -> Bound:
        return Bound(self.low * factor, self.high * factor)

    def describe(self) -> str:
        return f"{self.low:g}" if self.exact else f"in [{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class DistributionFact:
    """``P(values | given) in bound``: ``given`` is ``Q_v``, ``(column, value)`` pairs over a
    subset of the QI columns (empty = everyone); ``values`` are alternatives (``s1 or s2``)."""

    given: tuple[tuple[str, str], ...]
    values: tuple[str, ...]
    bound: Bound
    source: Source

    def describe(self) -> str:
        cond = ", ".join(f"{c}={v}" for c, v in self.given) or "everyone"
        return f"P({' or '.join(self.values)} | {cond}) {_rel(self.bound)}"


@dataclass(frozen=True)
class Person:
    """A pseudonym for one record's owner: ``qi`` gives every QI column's value."""

    name: str
    qi: tuple[tuple[str, str], ...]
    line: int | None = None


@dataclass(frozen=True)
class IndividualFact:
    """The expected number of ``people`` who hold one of ``values`` is within ``bound``.

    For one person this is a probability ("Alice has Flu with probability 0.2"); for
    several it counts people ("two of Alice, Bob and Charlie have HIV": bound 2).
    """

    people: tuple[str, ...]
    values: tuple[str, ...]
    bound: Bound
    source: Source

    def describe(self) -> str:
        vals = " or ".join(self.values)
        if len(self.people) == 1:
            return f"P({self.people[0]} has {vals}) {_rel(self.bound)}"
        return f"number of {', '.join(self.people)} with {vals} {_rel(self.bound)}"


Fact = DistributionFact | IndividualFact


@dataclass(frozen=True)
class Knowledge:
    """A set of statements and the people they name."""

    facts: tuple[Fact, ...] = ()
    people: tuple[Person, ...] = field(default_factory=tuple)

    def __add__(self, other: Knowledge) -> Knowledge:
        return Knowledge(self.facts + other.facts, self.people + other.people)

    def __len__(self) -> int:
        return len(self.facts)


def pseudonyms(
    facts: tuple[Fact, ...] | list[Fact], people: tuple[str, ...] = ()
) -> dict[str, str]:
    """``name -> person #i``: people numbered from 1 by first mention in the statements
    ``facts`` (then any other of ``people``, in their order). Results, reports and error
    messages all use this numbering."""
    order: list[str] = []
    for f in facts:
        if isinstance(f, IndividualFact):
            order.extend(p for p in f.people if p not in order)
    order.extend(p for p in people if p not in order)
    return {name: f"person #{i}" for i, name in enumerate(order, start=1)}


def _rel(bound: Bound) -> str:
    return f"= {bound.low:g}" if bound.exact else f"in [{bound.low:g}, {bound.high:g}]"
