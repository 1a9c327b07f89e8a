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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Source:
    """Where a statement came from: ``label`` (a name or a mined rule) and ``line``."""

    label: str
    line: int | None = None
    file: str | None = None

    def describe(self) -> str:
        where = f" (line {self.line})" if self.line is not None else ""
        return f"{self.label}{where}"

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "line": self.line, "file": self.file}


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


def _rel(bound: Bound) -> str:
    return f"= {bound.low:g}" if bound.exact else f"in [{bound.low:g}, {bound.high:g}]"
