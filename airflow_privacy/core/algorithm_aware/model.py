"""The people, the candidate generalizations, and the possible worlds of Zhang, Jajodia and
Brodsky, "Information disclosure under realistic assumptions: privacy versus optimality"
(CCS 2007), section 2, specialised to microdata as in their introduction.

* The adversary knows every person's quasi-identifiers (the public table) and the multiset
  of sensitive values (every candidate reveals it). A *world* ``y`` is an assignment of
  sensitive values to the people with that multiset: the paper's database states ``D``.
* A *candidate* ``T_i`` is a generalization of the quasi-identifiers: it puts each person in
  one QI-group. Released on world ``y`` it shows, per group, the multiset of sensitive
  values: its *block* ``s_i(y)`` is the set of worlds showing the same multisets (the
  paper's disclosure schema ``T_i`` is the partition of ``D`` into these blocks,
  Definition 1).
* The candidates come in the order of the disclosure algorithm (non-increasing utility).

Worlds are held as integer arrays of value codes, one column per person.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Population:
    """The people of the original table and their true sensitive values.

    ``truth[p]`` is the code (index in ``values``) of person ``p``'s value: the true world
    ``x``. ``people[p]`` names person ``p`` (an id column, or the row number).
    """

    people: tuple[str, ...]
    values: tuple[str, ...]
    truth: IntArray
    sensitive: str = "s"

    def __post_init__(self) -> None:
        truth = np.asarray(self.truth, dtype=np.int64)
        if truth.ndim != 1 or truth.shape[0] != len(self.people):
            raise InputError(f"truth must hold one value code per person ({len(self.people)})")
        if truth.shape[0] == 0:
            raise InputError("the table has no records")
        if (truth < 0).any() or (truth >= len(self.values)).any():
            raise InputError("a value code is outside the list of sensitive values")
        truth.setflags(write=False)
        object.__setattr__(self, "truth", truth)

    @property
    def n(self) -> int:
        return int(self.truth.shape[0])

    @property
    def n_values(self) -> int:
        return len(self.values)

    @property
    def totals(self) -> IntArray:
        """How many people hold each value (public: every candidate reveals it)."""
        out: IntArray = np.bincount(self.truth, minlength=self.n_values).astype(np.int64)
        return out

    @classmethod
    def from_values(
        cls, people: Sequence[str], values: Sequence[str], sensitive: str = "s"
    ) -> Population:
        """``values[p]`` is person ``p``'s sensitive value (labels sorted into codes)."""
        if len(people) != len(values):
            raise InputError("one sensitive value per person is required")
        labels = tuple(sorted({str(v) for v in values}))
        index = {v: i for i, v in enumerate(labels)}
        truth = np.asarray([index[str(v)] for v in values], dtype=np.int64)
        return cls(tuple(str(p) for p in people), labels, truth, sensitive)

    @classmethod
    def from_table(
        cls, table: pa.Table, sensitive: str, id_column: str | None = None
    ) -> Population:
        """The people of an Arrow table (named by ``id_column`` or by row number)."""
        cols = table.column_names
        for col, what in ((sensitive, "sensitive column"), (id_column, "id column")):
            if col is not None and col not in cols:
                raise InputError(f"{what} {col!r} does not exist (columns: {', '.join(cols)})")
        vals = [None if v is None else str(v) for v in table.column(sensitive).to_pylist()]
        if any(v is None for v in vals):
            raise InputError(f"column {sensitive!r} has missing values; fill or drop them first")
        if id_column is None:
            people = [str(i) for i in range(table.num_rows)]
        else:
            people = [str(v) for v in table.column(id_column).to_pylist()]
            if len(set(people)) != len(people):
                raise InputError(f"id column {id_column!r} has repeated values")
        return cls.from_values(people, [str(v) for v in vals], sensitive)


@dataclass(frozen=True)
class Candidate:
    """One generalization: ``groups[p]`` is person ``p``'s QI-group (``0 .. G-1``)."""

    name: str
    groups: IntArray
    labels: tuple[str, ...]

    def __post_init__(self) -> None:
        g = np.asarray(self.groups, dtype=np.int64)
        if g.ndim != 1 or g.shape[0] == 0:
            raise InputError(f"candidate {self.name!r} must put every person in a group")
        if len(self.labels) != int(g.max()) + 1 or g.min() < 0:
            raise InputError(f"candidate {self.name!r}: group labels do not match the groups")
        if np.bincount(g).min() == 0:
            raise InputError(f"candidate {self.name!r} has an empty group")
        g.setflags(write=False)
        object.__setattr__(self, "groups", g)

    @property
    def n_groups(self) -> int:
        return len(self.labels)

    @property
    def sizes(self) -> IntArray:
        out: IntArray = np.bincount(self.groups, minlength=self.n_groups).astype(np.int64)
        return out

    def members(self) -> list[IntArray]:
        """The people of each group, in person order."""
        order = np.argsort(self.groups, kind="stable")
        return np.split(order, np.cumsum(self.sizes)[:-1])

    def counts(self, worlds: IntArray, n_values: int) -> IntArray:
        """``(W, G, V)``: the multisets each world shows through this candidate (its block
        key)."""
        y = np.atleast_2d(worlds)
        w = y.shape[0]
        cells = self.n_groups * n_values
        flat = np.arange(w, dtype=np.int64)[:, None] * cells + self.groups[None, :] * n_values + y
        out = np.bincount(flat.reshape(-1), minlength=w * cells).astype(np.int64)
        return out.reshape(w, self.n_groups, n_values)

    @classmethod
    def from_keys(cls, name: str, keys: Sequence[Hashable], labels: Sequence[str] | None = None
                  ) -> Candidate:  # fmt: skip
        """Group people with equal ``keys[p]`` (groups numbered by first appearance);
        ``labels`` optionally names every person's group (same length as ``keys``)."""
        index: dict[Hashable, int] = {}
        names: list[str] = []
        groups = np.empty(len(keys), dtype=np.int64)
        for p, k in enumerate(keys):
            g = index.get(k)
            if g is None:
                g = index[k] = len(index)
                names.append(str(labels[p]) if labels is not None else str(k))
            groups[p] = g
        return cls(name, groups, tuple(names))


def check_sequence(population: Population, candidates: Sequence[Candidate]) -> None:
    """The candidates cover the same people and have distinct names."""
    if not candidates:
        raise InputError("the candidate sequence is empty")
    seen: set[str] = set()
    for c in candidates:
        if not isinstance(c, Candidate):
            raise InputError(f"expected a Candidate, got {type(c).__name__}")
        if c.groups.shape[0] != population.n:
            raise InputError(
                f"candidate {c.name!r} groups {c.groups.shape[0]} people, the table has "
                f"{population.n}"
            )
        if c.name in seen:
            raise InputError(f"candidate {c.name!r} appears twice in the sequence")
        seen.add(c.name)


def find_candidate(candidates: Sequence[Candidate], released: int | str) -> int:
    """Index of the released candidate, given by name or 0-based position."""
    if isinstance(released, bool):
        raise InputError(f"unknown candidate {released!r}")
    if isinstance(released, int | np.integer):
        i = int(released)
        if not 0 <= i < len(candidates):
            raise InputError(
                f"unknown candidate {i}: positions run from 0 to {len(candidates) - 1}"
            )
        return i
    for i, c in enumerate(candidates):
        if c.name == released:
            return i
    known = ", ".join(c.name for c in candidates[:10])
    more = ", ..." if len(candidates) > 10 else ""
    raise InputError(f"unknown candidate {released!r} (candidates: {known}{more})")
