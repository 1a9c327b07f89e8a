"""SUDA2: minimal sample uniques (MSUs) and the SUDA / DIS-SUDA record scores (docs/suda.md).

A *sample unique* on an attribute subset ``S`` is a record whose combination of values on
``S`` occurs in no other record. It is *minimal* (an MSU of the record) when no proper subset
of ``S`` is unique for that record. Because uniqueness is inherited by supersets, a subset
is minimal as soon as none of its immediate subsets (``S`` minus one attribute) is unique.

The search is levelwise with SUDA2's pruning (Manning, Haglin and Keane 2008): a record
unique on ``S`` is never again a candidate in a superset of ``S``, so level ``k + 1`` only
looks, for a subset ``S``, at the records that are *not* unique on any of its immediate
subsets. Those records are grouped among themselves only: a record outside that set is
unique on ``S`` already, so it shares its ``S`` combination with nobody. A subset none of
whose records survive is dropped with all of its supersets.

The scores follow sdcMicro's ``suda2`` (its C++ ``Suda2`` routine), with ``M`` the number of
quasi-identifiers:

* the weight of an MSU of size ``s`` is ``(M - s)!`` (``weighting="elliot"``, sdcMicro's
  default ``original_scores=TRUE``, after Elliot et al.) or
  ``(2^(M-s) - 1) * s! * (M - s)! / M!`` (``weighting="ihsn"``, ``original_scores=FALSE``);
* a record's SUDA score is the sum of the weights of its MSUs;
* a record's contribution of attribute ``a`` is the sum of the weights of its MSUs that
  contain ``a`` divided by its score (these shares add up to more than 1 when MSUs have
  more than one attribute), and the table's attribute contribution is
  ``100 * sum_i(score_i * contribution_i[a]) / sum_i(score_i)``;
* the DIS-SUDA score rescales the SUDA scores with the DIS probability that a sample unique
  is a population unique (module :func:`suda2`, docs/suda.md).

The result never holds a quasi-identifier value: only row numbers, attribute names and
scores.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from airflow_privacy.errors import InputError, opt

if TYPE_CHECKING:
    import pyarrow as pa

IntArray = npt.NDArray[np.int64]
Weighting = Literal["elliot", "ihsn"]
WEIGHTINGS: tuple[Weighting, ...] = ("elliot", "ihsn")
DEFAULT_DIS_FRACTION = 0.01  # sdcMicro's default sampling fraction
MAX_STEPS = 100_000_000
"""The most steps the MSU search may take (a step: one candidate combination looked at in
one attribute subset, or one subset enumerated): about 4 s of one core (27 M steps a second
where nothing is pruned, 2,000 random binary combinations over 16 QIs; 3 M a second before
the search counted its intersections, when that data took 52 s unbounded). All of Adult
over its 8 QIs takes 2.9-4.1 M steps (0.08 s). Counted as the search goes, so data whose
combinations become unique early (real data) passes even where the worst case would not;
beyond it the search stops with the options that shrink it (issue: 20 QIs on 2,000 records
ran past 60 s)."""


def suda_weight(n_qis: int, size: int, weighting: Weighting = "elliot") -> Fraction:
    """The weight of one MSU of ``size`` attributes among ``n_qis`` quasi-identifiers."""
    rest = n_qis - size
    if weighting == "elliot":
        return Fraction(math.factorial(rest))
    return Fraction(
        (2**rest - 1) * math.factorial(size) * math.factorial(rest), math.factorial(n_qis)
    )


_INT64_TOTAL = 2**62
"""Scores are added in int64 while the largest total they can reach stays below this (every
MSU of every record at once), else in Python's integers."""


def weight_units(n_qis: int, weighting: Weighting = "elliot") -> tuple[int, list[int]]:
    """``(unit, units)``: the weights of MSUs of every size ``0..n_qis`` as whole numbers
    of one common ``unit`` (``suda_weight(n_qis, s) == Fraction(units[s], unit)``): 1 with
    the "elliot" weights, ``n_qis!`` with the "ihsn" ones. Scores add up in whole numbers
    (exact, and far cheaper than adding fractions)."""
    unit = 1 if weighting == "elliot" else math.factorial(n_qis)
    units = []
    for size in range(n_qis + 1):
        w = suda_weight(n_qis, size, weighting) * unit
        assert w.denominator == 1
        units.append(int(w))
    return unit, units


@dataclass(frozen=True)
class RecordRisk:
    """One record that has at least one MSU (rows not listed have score 0). Its score and
    its share of each QI are whole numbers of ``unit`` (:func:`weight_units`); ``score``
    and ``contributions`` give them as exact fractions."""

    row: int
    msus: tuple[tuple[str, ...], ...]  # by size, then in the order of the QIs
    score_units: int
    dis_score: float
    qis: tuple[str, ...]
    share_units: tuple[int, ...]  # per QI: the weights of the MSUs containing it
    unit: int

    @property
    def score(self) -> Fraction:
        """The SUDA score: the sum of the weights of the record's MSUs."""
        return Fraction(self.score_units, self.unit)

    @property
    def contributions(self) -> dict[str, Fraction]:
        """Per QI, the share of the score from the MSUs containing it (0 when the score is
        0)."""
        if not self.score_units:
            return {a: Fraction(0) for a in self.qis}
        return {
            a: Fraction(u, self.score_units)
            for a, u in zip(self.qis, self.share_units, strict=True)
        }

    def contribution(self, qi: str) -> float:
        """``contributions[qi]`` as a float (0 for a name that is not a QI), correctly
        rounded, without making a fraction."""
        if not self.score_units or qi not in self.qis:
            return 0.0
        return self.share_units[self.qis.index(qi)] / self.score_units

    def score_value(self) -> float:
        """``score`` as a float, correctly rounded, without making a fraction."""
        return self.score_units / self.unit

    def to_dict(self) -> dict[str, Any]:
        return {
            "row": self.row,
            "msus": [list(m) for m in self.msus],
            "score": self.score_value(),
            "dis_score": self.dis_score,
            "contributions": {a: self.contribution(a) for a in self.qis},
        }


@dataclass(frozen=True)
class SudaResult:
    """SUDA2 over one table: the records at risk and table-level summaries."""

    qis: tuple[str, ...]
    n_records: int
    k_max: int
    weighting: Weighting
    dis_fraction: float
    sample_uniques: int  # records unique on all the QIs
    pair_records: int  # records whose QI combination occurs exactly twice
    dis: float  # P(population unique | sample unique), sdcMicro's estimate
    records: tuple[RecordRisk, ...]  # every record with an MSU, by row
    msu_count_by_size: dict[int, int]
    attribute_contributions: dict[str, float]  # percent of the total score

    def score(self, row: int) -> Fraction:
        for r in self.records:
            if r.row == row:
                return r.score
        return Fraction(0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "measure": "suda2",
            "qis": list(self.qis),
            "n_records": self.n_records,
            "k_max": self.k_max,
            "weighting": self.weighting,
            "dis_fraction": self.dis_fraction,
            "sample_uniques": self.sample_uniques,
            "pair_records": self.pair_records,
            "dis": self.dis,
            "records_at_risk": len(self.records),
            "msu_count_by_size": {str(k): v for k, v in sorted(self.msu_count_by_size.items())},
            "attribute_contributions": dict(self.attribute_contributions),
            "records": [r.to_dict() for r in self.records],
        }


def _codes_from_rows(rows: Sequence[Sequence[Hashable]], m: int) -> IntArray:
    """One code per value, column by column: a value's code is the order of its first
    appearance in its column (a dictionary per column, filled by ``dict.fromkeys``; one
    ``setdefault`` per cell cost 50 ms on Adult's 12,458 classes over 8 QIs)."""
    for i, row in enumerate(rows):
        if len(row) != m:
            raise InputError(
                f"row {i} of {opt('input')} has {len(row)} values, but {opt('qi')} names {m}"
            )
    out = np.empty((len(rows), m), dtype=np.int64)
    if not len(rows):
        return out
    for j, column in enumerate(zip(*rows, strict=True)):
        index = {value: code for code, value in enumerate(dict.fromkeys(column))}
        out[:, j] = list(map(index.__getitem__, column))
    return out


def _codes_from_table(table: pa.Table, qis: Sequence[str]) -> IntArray:
    import pyarrow as pa
    import pyarrow.compute as pc

    from airflow_privacy.core.counting import int_view

    out = np.empty((table.num_rows, len(qis)), dtype=np.int64)
    for j, name in enumerate(qis):
        if name not in table.column_names:
            raise InputError(f"{opt('qi')} names {name!r}, which is not a column of the table")
        col = table.column(name).combine_chunks()
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        encoded = pc.dictionary_encode(col, null_encoding="encode")
        # a numpy view (``to_numpy(zero_copy_only=False)`` imports pandas: 0.13 s)
        out[:, j] = int_view(encoded.indices)
    return out


def _group_sizes(keys: IntArray) -> tuple[IntArray, IntArray]:
    """``(group id of each row, rows in each group)``. Group ids are dense, in the order of
    the keys. Non-negative keys of a small range are counted by ``np.bincount`` over the
    range (linear; ``np.unique`` sorts them, which was most of a SUDA search on Adult's 8
    QIs)."""
    if keys.size and int(keys.min()) >= 0:
        bound = int(keys.max()) + 1
        if bound <= 4 * keys.size + 4096:
            per_key = np.bincount(keys, minlength=bound)
            present = per_key > 0
            dense = np.cumsum(present) - 1
            return dense[keys].astype(np.int64), per_key[present].astype(np.int64)
    _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    return inverse.reshape(-1), counts


def _distinct_rows(codes: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """``(distinct rows, first row holding each, how many rows hold each)`` of ``codes``,
    through one integer key per row when the codes fit (sorting one column is far cheaper
    than sorting rows)."""
    widths = [int(w) for w in codes.max(axis=0) + 1] if codes.size else []
    if widths and math.prod(widths) < 2**62:
        key = np.zeros(codes.shape[0], dtype=np.int64)
        for j, w in enumerate(widths):
            key = key * w + codes[:, j]
        _, first, counts = np.unique(key, return_index=True, return_counts=True)
        return codes[first], first, counts
    distinct, first, counts = np.unique(codes, axis=0, return_index=True, return_counts=True)
    return distinct, first, counts


def find_msus(
    codes: IntArray,
    k_max: int,
    weights: IntArray | None = None,
    max_steps: int | None = None,
) -> dict[tuple[int, ...], IntArray]:
    """Every MSU of size at most ``k_max``: attribute subset (column indices, ascending) ->
    the rows (ascending) for which it is minimal and unique. ``codes`` holds one small
    non-negative integer code per value, one column per QI; row ``i`` stands for
    ``weights[i]`` identical records (default 1), so the distinct QI combinations with their
    counts (the sufficient statistics) give the MSUs of the records: a combination held by
    two or more records is unique on no subset. More than ``max_steps`` steps
    (:data:`MAX_STEPS`) is bad input naming what shrinks the search."""
    n, m = codes.shape
    found: dict[tuple[int, ...], IntArray] = {}
    columns = [np.ascontiguousarray(codes[:, c], dtype=np.int64) for c in range(m)]
    widths = [int(col.max()) + 1 if n else 1 for col in columns]
    # only a row standing for one record can be unique on any subset (a combination is
    # unique when one row holds it and that row is one record); a subset none of whose
    # surviving rows is one has no MSU in any superset either, and is dropped (a release
    # where every combination is shared is searched no further than its single columns)
    single = np.ones(n, dtype=bool) if weights is None else np.asarray(weights) == 1
    alive: dict[tuple[int, ...], _Alive] = {}
    all_rows = np.arange(n, dtype=np.int64)
    # scratch, one entry per row: a row's group id on the subset extended (a lookup, where
    # np.searchsorted is a binary search per row)
    group_of = np.zeros(n, dtype=np.int64)
    for c in range(m):
        inverse, counts = _group_sizes(columns[c])
        unique = (counts[inverse] == 1) & single
        if unique.any():
            found[(c,)] = all_rows[unique]
        rest = ~unique
        if single[rest].any():  # (none when every row is unique)
            alive[(c,)] = _Alive.of(all_rows[rest], inverse[rest].astype(np.int64), n)
    steps = m * n
    max_steps = MAX_STEPS if max_steps is None else max_steps
    for size in range(2, k_max + 1):
        nxt: dict[tuple[int, ...], _Alive] = {}
        for subset in combinations(range(m), size):
            steps += 1
            if steps > max_steps:
                _too_long(m, size, k_max, max_steps)
            parts = [subset[:i] + subset[i + 1 :] for i in range(size)]
            if any(p not in alive for p in parts):
                continue  # some immediate subset has no candidate left
            # the rows alive on every immediate subset: an AND of their bit masks
            mask = alive[parts[0]].mask & alive[parts[1]].mask
            for p in parts[2:]:
                np.bitwise_and(mask, alive[p].mask, out=mask)
            candidates = np.flatnonzero(np.unpackbits(mask, count=n))
            if candidates.size == 0:
                continue
            steps += int(candidates.size)
            # their groups on the subset: the groups on the immediate subset without its
            # narrowest attribute, times that attribute's codes (the smallest key range)
            narrow = min(subset, key=widths.__getitem__)
            base = alive[tuple(a for a in subset if a != narrow)]
            group_of[base.rows] = base.groups
            combined = group_of[candidates] * widths[narrow] + columns[narrow][candidates]
            inverse, counts = _group_sizes(combined)
            unique = (counts[inverse] == 1) & single[candidates]
            if unique.any():
                found[subset] = candidates[unique]
            rest = ~unique
            if single[candidates[rest]].any():
                nxt[subset] = _Alive.of(candidates[rest], inverse[rest].astype(np.int64), n)
        alive = nxt
        if not alive:
            break
    return found


@dataclass(frozen=True)
class _Alive:
    """The rows of one attribute subset still in the search (unique neither on it nor on
    any of its subsets): as a bit mask over all rows (``np.packbits``: the candidates of a
    superset are an AND of its immediate subsets' masks, where intersecting row numbers
    was half of the search on Adult's 8 QIs) and as row numbers, ascending, with their
    group ids on the subset (dense, grouped among these rows only). The mask adds one bit
    per row of the table to the 16 bytes per surviving row: 125 KB a subset at 10^6
    distinct combinations, for the subsets of two levels at a time."""

    mask: npt.NDArray[np.uint8]
    rows: IntArray
    groups: IntArray

    @staticmethod
    def of(rows: IntArray, groups: IntArray, n: int) -> _Alive:
        flags = np.zeros(n, dtype=bool)
        flags[rows] = True
        return _Alive(np.packbits(flags), rows, groups)


def _too_long(m: int, size: int, k_max: int, max_steps: int) -> None:
    raise InputError(
        f"SUDA2 over {m} quasi-identifiers (MSUs of up to {k_max}) needs more than "
        f"{max_steps:,} steps on this data (it reached subsets of {size}): give "
        f"{opt('suda_max_size')} {max(size - 1, 1)} or less, or fewer quasi-identifiers"
    )


def suda2(
    data: pa.Table | Sequence[Sequence[Hashable]],
    qis: Sequence[str],
    *,
    k_max: int | None = None,
    weighting: Weighting = "elliot",
    dis_fraction: float = DEFAULT_DIS_FRACTION,
) -> SudaResult:
    """SUDA2 over the quasi-identifiers ``qis`` of ``data`` (a pyarrow table, or rows of
    values in the order of ``qis``). ``k_max`` bounds the MSU size (default: all the QIs);
    the weights use the number of QIs whatever ``k_max``. Missing values (None, null) are
    an ordinary value."""
    names, k_max = _arguments(qis, k_max, weighting, dis_fraction)
    m = len(names)

    if isinstance(data, Sequence):
        codes = _codes_from_rows(data, m)
    else:
        codes = _codes_from_table(data, names)
    n = codes.shape[0]
    if n == 0:
        raise InputError(f"{opt('input')} has no records: SUDA needs at least one")

    # the distinct QI combinations and how many records hold each: the MSUs of a record are
    # those of its combination, and only a combination held once can have any
    distinct, first, counts = _distinct_rows(codes)
    return _suda(names, distinct, first, counts, n, k_max, weighting, dis_fraction)


def _arguments(
    qis: Sequence[str], k_max: int | None, weighting: str, dis_fraction: float
) -> tuple[tuple[str, ...], int]:
    """The QI names and ``k_max`` (default: every QI), every argument checked."""
    names = tuple(qis)
    if not names:
        raise InputError(f"{opt('qi')} names no column: SUDA needs at least one")
    if len(set(names)) != len(names):
        raise InputError(f"{opt('qi')} names a column twice")
    m = len(names)
    if k_max is None:
        k_max = m
    if isinstance(k_max, bool) or not isinstance(k_max, int) or not 1 <= k_max <= m:
        raise InputError(f"{opt('k_max')} must be an integer from 1 to {m}, got {k_max!r}")
    if weighting not in WEIGHTINGS:
        raise InputError(f"{opt('weighting')} must be one of {', '.join(WEIGHTINGS)}")
    if isinstance(dis_fraction, bool) or not 0 < dis_fraction <= 1:
        raise InputError(f"{opt('dis_fraction')} must be in (0, 1], got {dis_fraction!r}")
    return names, k_max


def suda2_counts(
    classes: Sequence[Sequence[Hashable]],
    sizes: Sequence[int],
    qis: Sequence[str],
    *,
    k_max: int | None = None,
    weighting: Weighting = "elliot",
    dis_fraction: float = DEFAULT_DIS_FRACTION,
) -> SudaResult:
    """SUDA2 from the equivalence classes alone: ``classes[c]`` a distinct QI combination
    (values in the order of ``qis``) held by ``sizes[c]`` records. The result is
    :func:`suda2`'s on any table with those classes, except that a record's ``row`` is the
    number ``c`` of its class (a special unique is the one record of its class): the counts
    are SUDA2's sufficient statistics (only a combination held once has MSUs, and the DIS
    needs the numbers of uniques and pairs)."""
    names, k_max = _arguments(qis, k_max, weighting, dis_fraction)
    m = len(names)
    counts = np.asarray(list(sizes), dtype=np.int64)
    if len(classes) != counts.shape[0] or (counts.size and int(counts.min()) < 1):
        raise InputError("every class needs one size of at least 1")
    if not counts.size:
        raise InputError(f"{opt('input')} has no records: SUDA needs at least one")
    distinct = _codes_from_rows(classes, m)
    if _distinct_rows(distinct)[0].shape[0] != distinct.shape[0]:
        raise InputError("a QI combination is given as two classes")
    first = np.arange(distinct.shape[0], dtype=np.int64)
    return _suda(names, distinct, first, counts, int(counts.sum()), k_max, weighting,
                 dis_fraction)  # fmt: skip


def _msus_by_record(
    order: Sequence[tuple[int, ...]],
    places: Sequence[IntArray],
    names: tuple[str, ...],
    records: int,
) -> list[tuple[tuple[str, ...], ...]]:
    """Each record's MSUs as attribute names, in ``order``: ``places[j]`` holds the records
    (their places among those at risk) for which ``order[j]`` is an MSU. One stable sort
    by record, not one append per MSU of each record."""
    if not places:
        return [() for _ in range(records)]
    where = np.concatenate(places)
    which = np.repeat(np.arange(len(order)), [p.size for p in places])
    by_record = which[np.argsort(where, kind="stable")].tolist()
    ends = np.cumsum(np.bincount(where, minlength=records)).tolist()
    named = [tuple(names[a] for a in subset) for subset in order]
    out: list[tuple[tuple[str, ...], ...]] = []
    start = 0
    for end in ends:
        out.append(tuple(map(named.__getitem__, by_record[start:end])))
        start = end
    return out


def _suda(
    names: tuple[str, ...],
    distinct: IntArray,
    first: IntArray,
    counts: IntArray,
    n: int,
    k_max: int,
    weighting: Weighting,
    dis_fraction: float,
) -> SudaResult:
    """SUDA2 on the distinct QI combinations (``first[c]``: the row reported for class
    ``c``; ``counts[c]``: its records)."""
    m = len(names)
    found = {
        subset: np.sort(first[rows])
        for subset, rows in find_msus(distinct, k_max, counts.astype(np.int64)).items()
    }
    unit, units = weight_units(m, weighting)
    by_size: dict[int, int] = {}
    for subset, rows in found.items():
        by_size[len(subset)] = by_size.get(len(subset), 0) + int(rows.size)
    at_risk = np.unique(np.concatenate([*found.values(), np.zeros(0, np.int64)]))
    # per record at risk: its score and its share of each QI, in whole units (int64 while
    # the largest possible total fits, else Python's integers)
    most = sum(math.comb(m, size) * units[size] for size in range(m + 1)) * max(n, 1)
    dtype: Any = np.int64 if most < _INT64_TOTAL else object
    score_u = np.zeros(at_risk.size, dtype=dtype)
    share_u = np.zeros((at_risk.size, m), dtype=dtype)
    order = sorted(found, key=lambda t: (len(t), t))
    places = []
    for subset in order:
        at = np.searchsorted(at_risk, found[subset])
        w = units[len(subset)]
        score_u[at] += w
        for a in subset:
            share_u[at, a] += w
        places.append(at)
    msus = _msus_by_record(order, places, names, at_risk.size)

    # DIS (sdcMicro): uniques U and records in pairs P on the whole QI combination
    uniques = int((counts == 1).sum())
    pairs = 2 * int((counts == 2).sum())
    f = float(dis_fraction)
    dis = uniques * f / (uniques * f + pairs * (1 - f)) if uniques else 0.0
    q = 1 + (8 - m) / 20

    score_list: list[int] = [int(x) for x in score_u.tolist()]
    floats = [x / unit for x in score_list]
    adj = sum(x**-q for x in floats if x)
    records: list[RecordRisk] = []
    share_rows = share_u.tolist()
    for i, r in enumerate(at_risk.tolist()):
        score = score_list[i]
        if score:
            dis_score = 1.0 / (1.0 + (uniques / dis - uniques) / (floats[i] ** q * adj))
        else:  # an MSU weighs 0 only with "ihsn" weights and s == M
            dis_score = 0.0
        records.append(
            RecordRisk(
                row=r,
                msus=msus[i],
                score_units=score,
                dis_score=dis_score,
                qis=names,
                share_units=tuple(share_rows[i]),  # Python integers (tolist)
                unit=unit,
            )
        )
    total = sum(score_list)
    column_sums = [int(x) for x in share_u.sum(axis=0).tolist()] if at_risk.size else [0] * m
    attribute = {names[a]: (100 * column_sums[a]) / total if total else 0.0 for a in range(m)}
    return SudaResult(
        qis=names,
        n_records=n,
        k_max=k_max,
        weighting=weighting,
        dis_fraction=f,
        sample_uniques=uniques,
        pair_records=pairs,
        dis=dis,
        records=tuple(records),
        msu_count_by_size=by_size,
        attribute_contributions=attribute,
    )
