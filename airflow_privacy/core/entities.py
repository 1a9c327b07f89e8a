"""Entity-level counting (several rows per person) and sample weights: the one row-level
reduction both need, before any engine sees a count.

**Entities.** Google Cloud DLP's k-anonymity ``entity_id`` (``KAnonymityConfig``, DLP API
reference): "If the same entity_id is associated to multiple quasi-identifier tuples over
distinct rows, we consider the entire collection of tuples as the composite
quasi-identifier. This collection is a multiset: the order in which the different tuples
appear in the dataset is ignored, but their frequency is taken into account." The release is
reduced to one record per entity whose group key is the multiset of its rows' group-column
tuples, and each entity counts once (:func:`reduce_entities`).

The key is shown per group column so that published labels stay as they are: an entity
whose rows all hold one tuple is labelled by that tuple. A multiset of several tuples (or a
tuple that other entities hold a different number of times, since ``{T, T}`` and ``{T}`` are
different composite identifiers) is labelled, column by column, by its tuples in sorted
order with their multiplicities: ``age={20-39 ×2; 40-59}, sex={M ×2; F}`` is the multiset
``{(20-39, M), (20-39, M), (40-59, F)}`` (the i-th entry of every column belongs to the i-th
tuple; ``\\``, ``;``, ``{``, ``}`` and ``×`` inside a value are escaped with ``\\``, a missing
value is ``\\N``). Labels are unique: two different multisets never get the same label.

Attributes that belong to the person (the sensitive value, a sample weight) must agree over
an entity's rows when a criterion reads them; :class:`Reduction` counts the entities whose
rows disagree (never which entities, never which values).

**Weights.** A record with weight ``w`` stands for ``w`` people of the population (a survey
design weight, sdcMicro's ``weightVar``): the population frequency of a class is estimated
as the sum of its records' weights, ``F_j = sum of w_i over the records i of class j``
(sdcMicro's ``freqCalc``, its ``Fk``; Templ, "Statistical Disclosure Control for Microdata
Using the R-Package sdcMicro", Transactions on Data Privacy 1(2), 67-85, 2008).
:func:`parse_weight` checks a weight (finite, at least 1: a record stands for at least
itself) and reads it as an exact fraction (a decimal text is its exact decimal value);
:func:`population_sizes` rounds the sums down for engines that take whole sizes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from airflow_privacy.errors import InputError, opt

Key = tuple[str | None, ...]
Multiset = tuple[tuple[Key, int], ...]
_ESCAPE = str.maketrans({"\\": "\\\\", ";": "\\;", "{": "\\{", "}": "\\}", "×": "\\×"})


class _Disagree:
    """The value of an attribute whose rows disagree within one entity."""

    def __repr__(self) -> str:
        return "DISAGREE"


DISAGREE: Any = _Disagree()


@dataclass(frozen=True)
class Reduction:
    """A release reduced to one record per entity.

    ``keys[e]``: entity ``e``'s group label, one text per group column (module doc);
    ``attrs[e]``: its per-person attributes (in the order asked), :data:`DISAGREE` where its
    rows disagree; ``lowest[e]``: the same with the smallest value (as text) in place of
    :data:`DISAGREE`, for a criterion that does not read the attribute; ``rows``: the rows
    read; ``disagreeing[a]``: how many entities disagree on attribute ``a``; ``composite``:
    how many entities hold more than one distinct tuple."""

    keys: list[Key]
    attrs: list[tuple[Any, ...]]
    lowest: list[tuple[Any, ...]]
    rows: int
    disagreeing: tuple[int, ...]
    composite: int

    @property
    def entities(self) -> int:
        return len(self.keys)


def _escape(v: str | None) -> str:
    return "\\N" if v is None else v.translate(_ESCAPE)


def _sort_key(t: Key) -> tuple[tuple[int, str], ...]:
    return tuple((0, "") if v is None else (1, v) for v in t)


def canonical(tuples: Mapping[Key, int]) -> tuple[tuple[Key, int], ...]:
    """The multiset as a canonical value: its distinct tuples in sorted order, with counts."""
    if len(tuples) == 1:
        return tuple(tuples.items())
    return tuple(sorted(tuples.items(), key=lambda kv: _sort_key(kv[0])))


def full_label(multiset: tuple[tuple[Key, int], ...], width: int) -> Key:
    """The explicit label of a multiset, one text per column (module doc); injective."""
    return tuple(
        "{" + "; ".join(_escape(t[j]) + (f" ×{c}" if c > 1 else "") for t, c in multiset) + "}"
        for j in range(width)
    )


def labels(
    multisets: Sequence[tuple[tuple[Key, int], ...]], width: int, *, by_column: bool = False
) -> list[Key]:
    """One label per distinct multiset: the tuple itself for a multiset of one distinct
    tuple, the explicit form for the others and wherever the short forms would collide (so
    that different multisets never share a label).

    ``by_column`` (for SUDA2, which reads each column's labels alone): each column is
    labelled on its own, short or explicit, so that two multisets share a column's label
    only when their explicit labels of that column are equal. A person's one row holding
    the text ``{a; b}`` and another's rows holding ``a`` and ``b`` (explicit ``{a; b}``),
    or ``{T ×2}`` and ``{T}``, are then written out in that column and only there. Equal
    labels in every column mean equal explicit labels, so the labels stay injective."""
    distinct = list(dict.fromkeys(multisets))
    full = {m: full_label(m, width) for m in distinct}
    if by_column:

        def column(j: int) -> dict[Multiset, Any]:
            return _disambiguated(distinct, lambda m: m[0][0][j], lambda m: full[m][j])

        columns = [column(j) for j in range(width)]
        return [tuple(col[m] for col in columns) for m in multisets]
    # the explicit labels are injective: two multisets that share a label clash
    chosen = _disambiguated(distinct, lambda m: m[0][0], full.__getitem__)
    return [chosen[m] for m in multisets]


def _disambiguated(
    distinct: Sequence[Multiset],
    short: Callable[[Multiset], Any],
    explicit: Callable[[Multiset], Any],
) -> dict[Multiset, Any]:
    """Each multiset's label: ``short`` for a multiset of one distinct tuple, ``explicit``
    for the others and for every one whose shared label would join multisets of different
    explicit labels (until no label does)."""
    chosen = {m: (short(m) if len(m) == 1 else explicit(m)) for m in distinct}
    while True:
        seen: dict[Any, list[Multiset]] = {}
        for m, lab in chosen.items():
            seen.setdefault(lab, []).append(m)
        switch = [
            m
            for ms in seen.values()
            if len(ms) > 1 and len({explicit(m) for m in ms}) > 1
            for m in ms
            if chosen[m] != explicit(m)
        ]
        if not switch:
            return chosen
        for m in switch:
            chosen[m] = explicit(m)


def reduce_entities(
    rows: Iterable[Sequence[Any]], width: int, n_attrs: int, *, by_column: bool = False
) -> Reduction:
    """Reduce count rows ``(entity, g_1..g_width, a_1..a_n_attrs, count)`` (the shape of
    ``SELECT entity, g.., a.., COUNT(*) ... GROUP BY entity, g.., a..``) to one record per
    entity (module doc), labelled by :func:`labels` (``by_column``: unambiguous in each
    column alone, for an engine that reads columns separately). A missing or blank entity
    is bad input naming :func:`opt` ``entity`` and how many rows lack one (never a
    value)."""
    tuples: dict[Hashable, dict[Key, int]] = {}
    agreed: dict[Hashable, list[Any]] = {}
    low: dict[Hashable, list[Any]] = {}
    total = 0
    blank = 0
    g_end = 1 + width
    a_end = g_end + n_attrs
    for row in rows:
        entity = row[0]
        count = int(row[-1])
        if count <= 0:
            continue
        total += count
        if entity is None or (isinstance(entity, str) and not entity.strip()):
            blank += count
            continue
        key: Key = tuple(None if v is None else str(v) for v in row[1:g_end])
        t = tuples.get(entity)
        if t is None:
            tuples[entity] = {key: count}
            if n_attrs:
                agreed[entity] = list(row[g_end:a_end])
                low[entity] = list(row[g_end:a_end])
            continue
        t[key] = t.get(key, 0) + count
        if n_attrs:
            mine, lowest = agreed[entity], low[entity]
            for i, a in enumerate(row[g_end:a_end]):
                if mine[i] is not DISAGREE and mine[i] != a:
                    mine[i] = DISAGREE
                if _order(a) < _order(lowest[i]):
                    lowest[i] = a
    if blank:
        raise InputError(
            f"the {opt('entity')} column is blank in {blank:,} of {total:,} rows: every row "
            "must name its entity"
        )
    multisets = [canonical(t) for t in tuples.values()]
    keys = labels(multisets, width, by_column=by_column)
    none: tuple[Any, ...] = ()
    attrs = [tuple(agreed[e]) if n_attrs else none for e in tuples]
    lowest_values = [tuple(low[e]) if n_attrs else none for e in tuples]
    disagreeing = tuple(sum(1 for a in attrs if a[i] is DISAGREE) for i in range(n_attrs))
    composite = sum(1 for m in multisets if len(m) > 1)
    return Reduction(keys, attrs, lowest_values, total, disagreeing, composite)


def _order(v: Any) -> tuple[int, str]:
    return (0, "") if v is None else (1, str(v))


# ------------------------------------------------------------------------------ weights
def parse_weight(value: Any) -> Fraction | None:
    """A weight as an exact fraction, or None when it is not a finite number >= 1. Text is
    read as a float first: beyond the float range (``1e400``) is not finite, and an
    exponent such as ``1e-999999999`` is never expanded into a billion-digit fraction."""
    if value is None or isinstance(value, bool):
        return None
    try:
        if isinstance(value, str):
            text = value.strip()
            if "/" not in text:
                x = float(text)
                if not (math.isfinite(x) and x >= 1.0):
                    return None
            else:  # a ratio p/q: each side a finite float
                top, _, bottom = text.partition("/")
                if not all(math.isfinite(float(t)) for t in (top, bottom)):
                    return None
            w = Fraction(text)
        elif isinstance(value, int):
            w = Fraction(value)
        elif isinstance(value, float):
            if not math.isfinite(value):
                return None
            w = Fraction(value)
        else:
            return parse_weight(str(value))
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    return w if w >= 1 else None


def bad_weight_message(row: int, bad_rows: int) -> str:
    """The message refusing weights: the first bad data row (1 = the first record) and how
    many there are, never the value."""
    more = f" ({bad_rows:,} rows in all)" if bad_rows > 1 else ""
    return (
        f"{opt('weight')}: the weight of data row {row:,} is not a finite number of at least 1 "
        f"(a record stands for at least itself){more}"
    )


def population_sizes(weight_sums: Sequence[Fraction], sizes: Sequence[int]) -> list[int]:
    """The integer population sizes of engines that take them: ``floor`` of each class's
    weight sum (never above the estimate, so the risk ``1/F_j`` is never understated), and
    at least the class's own size."""
    return [max(int(f), math.floor(w)) for w, f in zip(weight_sums, sizes, strict=True)]
