"""Marginals over a public key set (the count vectors a DP release adds noise to).

A marginal is a tuple of columns; its cells are every combination of the columns' *public*
values (declared, never read from the data: a key set read from the data would itself
disclose which values occur). A record whose value of any column of the release is outside
that column's key set is counted in none of the release's marginals, so that all of them
count the same records and the true marginals agree with each other (the consistency step,
:mod:`~airflow_privacy.core.dp.consistency`, relies on it); dropping records never raises
the sensitivity.

Sensitivity: when each person contributes at most ``bound`` records (the reading bounds
them), adding or removing one person changes each marginal's count vector by a vector of
non-negative integers summing to at most ``bound``: its L1 and its L2 norms are at most
``bound`` (the L2 norm is largest when all of them fall in one cell).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from airflow_privacy.errors import InputError

MAX_CELLS = 10_000_000
"""The most cells one release may hold over all its marginals (every cell is drawn, held
and written: a bound on memory and time whatever the key sets declare)."""


MAX_SUM_BOUND = 1_000_000_000
"""The largest bound (in absolute value) of a summed column: a sum's noise grows with it."""
SUM_PREFIX = "\x00sum"
"""The names of the summed columns in a bounded count's table (a name no column has: a NUL
character is refused in column names)."""


@dataclass(frozen=True)
class Summed:
    """A numeric column summed in each cell of every marginal, each value clamped to
    ``[low, high]`` (whole numbers) and rounded to a whole number (``floor(v + 0.5)``); a
    null counts 0, NaN and infinities are clamped as numbers (NaN as the largest).

    Sensitivity: a person contributes at most ``bound`` records, each adding at most
    ``reach = max(|low|, |high|)`` to one cell, so the sum vector of a marginal moves by at
    most ``bound * reach`` in L1 and in L2 (module doc)."""

    column: str
    low: int
    high: int

    @property
    def reach(self) -> int:
        return max(abs(self.low), abs(self.high))

    @property
    def name(self) -> str:
        """The name of the released sum's columns (``hours_sum``)."""
        return f"{self.column}_sum"


@dataclass(frozen=True)
class Marginal:
    """The columns of one marginal (a 1-way marginal has one)."""

    columns: tuple[str, ...]

    @property
    def name(self) -> str:
        return " x ".join(self.columns)


def columns_of(marginals: Sequence[Marginal]) -> list[str]:
    """The columns of ``marginals``, each once, in the order they first appear."""
    return list(dict.fromkeys(c for m in marginals for c in m.columns))


def check_marginals(
    marginals: Sequence[Marginal], keys: Mapping[str, Sequence[str]], what: str = "marginal"
) -> int:
    """The number of cells of ``marginals`` over ``keys``; refuses a column without a key
    set, an empty key set, a marginal given twice and more than :data:`MAX_CELLS` cells."""
    if not marginals:
        raise InputError(f"name at least one {what}")
    seen: set[frozenset[str]] = set()
    total = 0
    for m in marginals:
        if not m.columns:
            raise InputError(f"a {what} names no column")
        if len(set(m.columns)) != len(m.columns):
            raise InputError(f"{what} {m.name!r} names a column twice")
        if frozenset(m.columns) in seen:
            raise InputError(f"{what} {m.name!r} is given twice")
        seen.add(frozenset(m.columns))
        for c in m.columns:
            if c not in keys:
                raise InputError(f"{what} {m.name!r}: column {c!r} has no declared key set")
            if not keys[c]:
                raise InputError(f"the key set of column {c!r} is empty")
        total += math.prod(len(keys[c]) for c in m.columns)
        if total > MAX_CELLS:
            raise InputError(
                f"the {what}s hold more than {MAX_CELLS:,} cells over their key sets: "
                "declare fewer or coarser ones"
            )
    return total


def cells(marginal: Marginal, keys: Mapping[str, Sequence[str]]) -> list[tuple[str, ...]]:
    """The cells of ``marginal`` in the order of its count vector (the first column varies
    slowest)."""
    import itertools

    return list(itertools.product(*(list(keys[c]) for c in marginal.columns)))


def count_vectors(
    table: pa.Table,
    counts: np.ndarray,
    marginals: Sequence[Marginal],
    keys: Mapping[str, Sequence[str]],
) -> list[np.ndarray]:
    """Each marginal's count vector (int64, in :func:`cells` order) from ``table`` (one row
    per distinct combination of the marginals' columns, as text) and ``counts`` (the records
    of each row, already bounded per person); a row with a value outside its column's key
    set is counted in no marginal (module doc)."""
    return _spread(_codes(table, marginals, keys), np.asarray(counts, np.int64), marginals, keys)


def sum_vectors(
    table: pa.Table,
    marginals: Sequence[Marginal],
    keys: Mapping[str, Sequence[str]],
    n_sums: int,
) -> list[list[np.ndarray]]:
    """For each of the ``n_sums`` summed columns (the table's ``SUM_PREFIX{i}`` columns, the
    clamped whole values of each row's records added up), each marginal's sum vector, in
    :func:`cells` order; the rows :func:`count_vectors` leaves out are left out."""
    codes = _codes(table, marginals, keys)
    return [
        _spread(
            codes,
            np.asarray(table.column(f"{SUM_PREFIX}{i}").to_numpy(zero_copy_only=False), np.int64),
            marginals,
            keys,
        )
        for i in range(n_sums)
    ]


def _codes(
    table: pa.Table, marginals: Sequence[Marginal], keys: Mapping[str, Sequence[str]]
) -> dict[str, np.ndarray]:
    """Each column's values as positions in its key set (-1: outside it)."""
    import pyarrow.compute as pc

    codes: dict[str, np.ndarray] = {}
    for column in columns_of(marginals):
        values = table.column(column).cast(pa.string())
        index = pc.index_in(values, value_set=pa.array(list(keys[column]), pa.string()))
        codes[column] = np.asarray(index.fill_null(-1).to_numpy(zero_copy_only=False), np.int64)
    return codes


def _spread(
    codes: Mapping[str, np.ndarray],
    weights: np.ndarray,
    marginals: Sequence[Marginal],
    keys: Mapping[str, Sequence[str]],
) -> list[np.ndarray]:
    """Each marginal's vector of ``weights`` added up by cell."""
    valid = np.ones(len(weights), dtype=bool)  # every value of the row in its key set
    for code in codes.values():
        valid &= code >= 0
    out: list[np.ndarray] = []
    for m in marginals:
        flat = np.zeros(len(weights), dtype=np.int64)
        for column in m.columns:
            flat = flat * len(keys[column]) + np.maximum(codes[column], 0)
        size = math.prod(len(keys[c]) for c in m.columns)
        vector = np.zeros(size, dtype=np.int64)
        np.add.at(vector, flat[valid], weights[valid])
        out.append(vector)
    return out
