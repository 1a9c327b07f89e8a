"""The maximum-entropy constraint system: unknowns, invariants, knowledge rows.

Unknowns (Du et al. 2008, Definition 5.1) are the probability terms ``P(q, s, b)``, kept in
count units ``x = N * P``. Terms that are zero-invariants (eq. 6: ``q`` or ``s`` absent
from bucket ``b``) are never created, so every *cell* is a pair of a QI value and a
sensitive value that are both present in the bucket.

Knowledge about individuals (section 6) needs pseudonyms: the people of a QI value ``q``
who are named in some statement get their own unknowns ``P(i, q, s, b)``; the unnamed rest
of ``q`` stays one aggregate group (a *person group* of weight ``n(q) - #named``). By
symmetry the maximum-entropy distribution gives every unnamed pseudonym the same share, and
the aggregate's entropy differs from the fully expanded one by a constant, so aggregating
changes nothing (docs/maxent.md, "Pseudonyms").

Invariant rows (section 5.2; sound and complete by Theorems 1 and 2):

* QI-invariant (eq. 4), one per ``(q, b)``: ``sum_{i in q, s} x(i, s, b) = n(q, b)``;
* SA-invariant (eq. 5), one per ``(s, b)`` but the first of each bucket, which is the
  redundant one (Theorem 3, conciseness): ``sum_i x(i, s, b) = n(s, b)``;
* person rows, one per person group of a class that has named people, but the last (they
  sum to the class's QI-invariants): ``sum_{s, b} x(i, s, b) = weight(i)``.

Knowledge rows (section 4.1 and section 6) are 0/1 sums of cells with an interval
``[low, high]`` of count units: ``P(V | Q_v) in [a, b]`` becomes
``sum_{q |= Q_v, s in V, b} x(q, s, b) in [a n(Q_v), b n(Q_v)]`` with ``n(Q_v)`` the number
of records of the release matching ``Q_v``; "k of these people have one of V" becomes
``sum_{i in people, s in V, b} x(i, s, b) in [k_low, k_high]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from airflow_privacy.core.maxent.knowledge import (
    DistributionFact,
    Fact,
    IndividualFact,
    Knowledge,
    Person,
)
from airflow_privacy.core.maxent.release import BucketRelease
from airflow_privacy.errors import InputError

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

QI_ROW, SA_ROW, PERSON_ROW = 0, 1, 2


@dataclass(frozen=True)
class PersonGroup:
    """People of QI value ``q``: one named pseudonym (``name``) or the unnamed rest."""

    q: int
    name: str | None
    weight: int


@dataclass(frozen=True, eq=False)
class ConstraintSystem:
    """Cells, invariant rows and knowledge rows of one release and one body of knowledge.

    ``cell_group/cell_s/cell_b`` give every unknown's person group, sensitive value and
    bucket (cells are ordered by bucket). ``invariants`` (CSR, rows x cells) has right-hand
    side ``invariant_rhs``; ``invariant_kind``/``invariant_id``/``invariant_bucket`` say
    what each row is (``QI_ROW`` with the ``qb`` row, ``SA_ROW`` with ``b * |S| + s``,
    ``PERSON_ROW`` with the group) and which bucket it lives in (-1 for person rows).
    ``knowledge`` (CSR, facts x cells) must lie within ``[knowledge_low, knowledge_high]``;
    row ``r`` is about the person groups ``knowledge_cover[r]`` (whose total weight is
    ``knowledge_capacity[r]``) and the sensitive values ``knowledge_values[r]``.
    ``cell_qb`` is each cell's QI-invariant (its ``(q, b)`` row of ``release.qb``).
    """

    release: BucketRelease
    facts: tuple[Fact, ...]
    groups: tuple[PersonGroup, ...]
    cell_group: IntArray
    cell_s: IntArray
    cell_b: IntArray
    invariants: sp.csr_matrix
    invariant_rhs: FloatArray
    invariant_kind: IntArray
    invariant_id: IntArray
    invariant_bucket: IntArray
    knowledge: sp.csr_matrix
    knowledge_low: FloatArray
    knowledge_high: FloatArray
    cell_qb: IntArray
    knowledge_cover: tuple[IntArray, ...]
    knowledge_values: tuple[npt.NDArray[np.bool_], ...]
    knowledge_capacity: FloatArray

    @property
    def n_cells(self) -> int:
        return int(self.cell_b.size)

    @property
    def n_records(self) -> int:
        return self.release.n_records

    @cached_property
    def group_q(self) -> IntArray:
        return np.array([g.q for g in self.groups], dtype=np.int64)

    @cached_property
    def group_weight(self) -> FloatArray:
        return np.array([g.weight for g in self.groups], dtype=np.float64)

    @cached_property
    def cell_q(self) -> IntArray:
        out: IntArray = self.group_q[self.cell_group]
        return out

    @cached_property
    def named_groups(self) -> dict[str, int]:
        return {g.name: i for i, g in enumerate(self.groups) if g.name is not None}

    def closed_form(self) -> FloatArray:
        """Theorem 5: ``x(i, s, b) = w_i / n(q) * n(q, b) n(s, b) / n_b`` in every bucket (the
        maximum-entropy solution when no knowledge touches the bucket)."""
        rel = self.release
        nqb = _pair_lookup(rel, self.cell_q, self.cell_b)
        nsb = rel.sb[self.cell_b, self.cell_s].astype(np.float64)
        share = self.group_weight[self.cell_group] / rel.qi_counts[self.cell_q]
        out: FloatArray = share * nqb * nsb / rel.bucket_sizes[self.cell_b]
        return out

    def touched_buckets(self) -> npt.NDArray[np.bool_]:
        """Buckets that some knowledge row (or a named person's person row) involves:
        the others are *irrelevant* (Definition 5.6) and get the closed form."""
        mask = np.zeros(self.release.n_buckets, dtype=bool)
        cols = self.knowledge.indices
        mask[self.cell_b[cols]] = True
        named = np.array([g.name is not None for g in self.groups], dtype=bool)
        if named.any():
            mask[self.cell_b[named[self.cell_group]]] = True
        return mask


def build_system(release: BucketRelease, knowledge: Knowledge | None = None) -> ConstraintSystem:
    """Validate ``knowledge`` against ``release`` and build the constraint system."""
    know = knowledge or Knowledge()
    people = _check_people(release, know)
    groups, group_start, group_count = _person_groups(release, people)
    cell_group, cell_s, cell_b, cell_qb = _cells(release, group_start, group_count)
    inv = _invariants(release, groups, cell_group, cell_s, cell_b, cell_qb)
    rows = [_knowledge_row(release, groups, cell_group, cell_s, f) for f in know.facts]
    n = cell_b.size
    cover = tuple(r[3] for r in rows)
    vmasks = tuple(r[4] for r in rows)
    weights = np.array([g.weight for g in groups], dtype=np.float64)
    capacity = np.array([float(weights[c].sum()) for c in cover], dtype=np.float64)
    if rows:
        indptr = np.cumsum([0] + [r[0].size for r in rows])
        indices = np.concatenate([r[0] for r in rows]).astype(np.int64)
        kmat = sp.csr_matrix(
            (np.ones(indices.size), indices, indptr), shape=(len(rows), n), dtype=np.float64
        )
        low = np.array([r[1] for r in rows], dtype=np.float64)
        high = np.array([r[2] for r in rows], dtype=np.float64)
    else:
        kmat = sp.csr_matrix((0, n), dtype=np.float64)
        low = np.zeros(0)
        high = np.zeros(0)
    return ConstraintSystem(
        release,
        tuple(know.facts),
        groups,
        cell_group,
        cell_s,
        cell_b,
        *inv,
        kmat,
        low,
        high,
        cell_qb,
        cover,
        vmasks,
        capacity,
    )


# --------------------------------------------------------------------------- people


def _check_people(release: BucketRelease, know: Knowledge) -> list[tuple[Person, int]]:
    """The people some statement names, with their QI value index, validated. Messages name
    a person ``person #i`` (:func:`~airflow_privacy.core.maxent.knowledge.pseudonyms`, the
    numbering of the result's public form) with the line of the declaration, never the name,
    the QI values or a sensitive value."""
    declared: dict[str, Person] = {}
    for p in know.people:
        if p.name in declared:
            first = declared[p.name].line
            again = f" on line {first}" if first is not None else ""
            raise InputError(f"a person{_at(p.line)} is already declared{again}")
        declared[p.name] = p
    used: list[str] = []
    for f in know.facts:
        if isinstance(f, IndividualFact):
            if len(set(f.people)) != len(f.people):
                raise InputError(f"{f.source.describe()}: a person is listed more than once")
            for pos, name in enumerate(f.people, start=1):
                if name not in declared:
                    raise InputError(
                        f"{f.source.describe()}: the person at position {pos} of the "
                        "statement is not declared"
                    )
                if name not in used:
                    used.append(name)
    out: list[tuple[Person, int]] = []
    per_class: dict[int, int] = {}
    for i, name in enumerate(used, start=1):
        p = declared[name]
        who = f"person #{i}{_at(p.line, 'declared on line')}"
        qi = dict(p.qi)
        extra = [c for c in qi if c not in release.qi_columns]
        if extra:
            raise InputError(
                f"{who}: {extra[0]!r} is not a QI column "
                f"(QI columns: {', '.join(release.qi_columns)})"
            )
        missing = [c for c in release.qi_columns if c not in qi]
        if missing:
            raise InputError(
                f"{who}: QI column {missing[0]!r} is missing (a person needs every QI column)"
            )
        key = tuple(qi[c] for c in release.qi_columns)
        q = release.qi_index.get(key)
        if q is None:
            raise InputError(f"{who}: no record of the release has this person's QI values")
        per_class[q] = per_class.get(q, 0) + 1
        if per_class[q] > release.qi_counts[q]:
            raise InputError(
                f"{who}: more people are named with this person's QI values than the "
                f"release has records with them ({int(release.qi_counts[q])})"
            )
        out.append((p, q))
    return out


def _person_groups(
    release: BucketRelease, people: Sequence[tuple[Person, int]]
) -> tuple[tuple[PersonGroup, ...], IntArray, IntArray]:
    nq = len(release.qi_values)
    named: dict[int, list[str]] = {}
    for p, q in people:
        named.setdefault(q, []).append(p.name)
    groups: list[PersonGroup] = []
    start = np.zeros(nq, dtype=np.int64)
    count = np.zeros(nq, dtype=np.int64)
    counts = release.qi_counts
    if not named:
        groups = [PersonGroup(q, None, int(counts[q])) for q in range(nq)]
        return tuple(groups), np.arange(nq, dtype=np.int64), np.ones(nq, dtype=np.int64)
    for q in range(nq):
        start[q] = len(groups)
        names = named.get(q, [])
        groups.extend(PersonGroup(q, n, 1) for n in names)
        rest = int(counts[q]) - len(names)
        if rest > 0:
            groups.append(PersonGroup(q, None, rest))
        count[q] = len(groups) - start[q]
    return tuple(groups), start, count


# ---------------------------------------------------------------------------- cells


def _cells(
    release: BucketRelease, group_start: IntArray, group_count: IntArray
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Every (person group, s, b) with the group's class and ``s`` present in ``b``."""
    qb = release.qb
    # (group, bucket) pairs: each (q, b) row expands into the groups of class q
    reps = group_count[qb[:, 0]]
    pair_qb = np.repeat(np.arange(qb.shape[0], dtype=np.int64), reps)
    pair_group = np.repeat(group_start[qb[:, 0]], reps) + _ramp(reps)
    pair_b = qb[pair_qb, 1]
    # sensitive values present in every bucket, grouped by bucket
    sb_b, sb_s = np.nonzero(release.sb)
    h = np.bincount(sb_b, minlength=release.n_buckets)
    h_start = np.concatenate(([0], np.cumsum(h)[:-1]))
    per_pair = h[pair_b]
    cell_pair = np.repeat(np.arange(pair_b.size, dtype=np.int64), per_pair)
    cell_s = sb_s[np.repeat(h_start[pair_b], per_pair) + _ramp(per_pair)].astype(np.int64)
    return pair_group[cell_pair], cell_s, pair_b[cell_pair], pair_qb[cell_pair]


def _ramp(counts: IntArray) -> IntArray:
    """``[0..c0-1, 0..c1-1, ...]``."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    out: IntArray = np.arange(total, dtype=np.int64) - starts
    return out


def _pair_lookup(release: BucketRelease, q: IntArray, b: IntArray) -> FloatArray:
    """``n(q, b)`` for arrays of pairs that occur in the release."""
    qb = release.qb
    nq = len(release.qi_values)
    keys = qb[:, 1] * nq + qb[:, 0]  # sorted (qb is sorted by bucket, then q)
    pos = np.searchsorted(keys, b * nq + q)
    out: FloatArray = qb[pos, 2].astype(np.float64)
    return out


def _invariants(
    release: BucketRelease,
    groups: tuple[PersonGroup, ...],
    cell_group: IntArray,
    cell_s: IntArray,
    cell_b: IntArray,
    cell_qb: IntArray,
) -> tuple[sp.csr_matrix, FloatArray, IntArray, IntArray, IntArray]:
    qb, sb = release.qb, release.sb
    nv = len(release.values)
    n = cell_b.size
    # QI rows: one per (q, b)
    qi_rows = cell_qb
    m_qi = qb.shape[0]
    # SA rows: one per present (s, b) but the first of each bucket
    sb_b, sb_s = np.nonzero(sb)
    first = np.ones(sb_b.size, dtype=bool)
    first[1:] = sb_b[1:] != sb_b[:-1]
    sa_ids = sb_b[~first] * nv + sb_s[~first]
    sa_pos = np.full(release.n_buckets * nv, -1, dtype=np.int64)
    sa_pos[sa_ids] = m_qi + np.arange(sa_ids.size)
    sa_rows = sa_pos[cell_b * nv + cell_s]
    m_sa = sa_ids.size
    # person rows: the groups of classes with named people, but the last group of each
    gq = np.array([g.q for g in groups], dtype=np.int64)
    named_class = np.zeros(len(release.qi_values), dtype=bool)
    for g in groups:
        if g.name is not None:
            named_class[g.q] = True
    keep = named_class[gq].copy()
    last = np.ones(len(groups), dtype=bool)
    last[:-1] = gq[1:] != gq[:-1]
    keep &= ~last
    person_ids = np.flatnonzero(keep)
    person_pos = np.full(len(groups), -1, dtype=np.int64)
    person_pos[person_ids] = m_qi + m_sa + np.arange(person_ids.size)
    person_rows = person_pos[cell_group]
    m = m_qi + m_sa + person_ids.size

    cols = np.arange(n, dtype=np.int64)
    has_sa = sa_rows >= 0
    has_p = person_rows >= 0
    row_idx = np.concatenate([qi_rows, sa_rows[has_sa], person_rows[has_p]])
    col_idx = np.concatenate([cols, cols[has_sa], cols[has_p]])
    mat = sp.csr_matrix((np.ones(row_idx.size), (row_idx, col_idx)), shape=(m, n), dtype=np.float64)
    rhs = np.concatenate(
        [
            qb[:, 2].astype(np.float64),
            sb[sb_b[~first], sb_s[~first]].astype(np.float64),
            np.array([groups[g].weight for g in person_ids], dtype=np.float64),
        ]
    )
    kind = np.concatenate(
        [
            np.full(m_qi, QI_ROW, dtype=np.int64),
            np.full(m_sa, SA_ROW, dtype=np.int64),
            np.full(person_ids.size, PERSON_ROW, dtype=np.int64),
        ]
    )
    ids = np.concatenate([np.arange(m_qi, dtype=np.int64), sa_ids, person_ids])
    bucket = np.concatenate(
        [qb[:, 1], sb_b[~first].astype(np.int64), np.full(person_ids.size, -1, dtype=np.int64)]
    )
    return mat, rhs, kind, ids, bucket


# ------------------------------------------------------------------------ knowledge


def _knowledge_row(
    release: BucketRelease,
    groups: tuple[PersonGroup, ...],
    cell_group: IntArray,
    cell_s: IntArray,
    fact: Fact,
) -> tuple[IntArray, float, float, IntArray, npt.NDArray[np.bool_]]:
    """Cells, ``[low, high]`` (count units), covered person groups and value mask of one
    statement, validated."""
    vmask = _value_mask(release, fact)
    if isinstance(fact, DistributionFact):
        seen: set[str] = set()
        for col, val in fact.given:
            if col not in release.qi_columns:
                role = " (it is the sensitive column)" if col == release.sensitive else ""
                raise InputError(
                    f"{fact.source.describe()}: {col!r} is not a QI column{role}; QI columns: "
                    f"{', '.join(release.qi_columns)}"
                )
            if col in seen:
                raise InputError(f"{fact.source.describe()}: column {col!r} is given twice")
            seen.add(col)
            if val not in release.column_domains[col]:
                raise InputError(
                    f"{fact.source.describe()}: its value of QI column {col!r} is not a value "
                    "the release has"
                )
        qmask = release.matching(fact.given)
        n_given = float(release.qi_counts[qmask].sum())
        if n_given == 0:
            cols = ", ".join(c for c, _ in fact.given)
            raise InputError(
                f"{fact.source.describe()}: no record of the release has its values of {cols}"
            )
        _check_bound(fact, 1.0)
        gmask = qmask[np.array([g.q for g in groups], dtype=np.int64)]
        scale = n_given
    else:
        name_pos = {g.name: i for i, g in enumerate(groups) if g.name is not None}
        gmask = np.zeros(len(groups), dtype=bool)
        gmask[[name_pos[n] for n in fact.people]] = True
        _check_bound(fact, float(len(fact.people)))
        scale = 1.0
    cells = np.flatnonzero(gmask[cell_group] & vmask[cell_s]).astype(np.int64)
    cover = np.flatnonzero(gmask).astype(np.int64)
    return cells, fact.bound.low * scale, fact.bound.high * scale, cover, vmask


def _value_mask(release: BucketRelease, fact: Fact) -> npt.NDArray[np.bool_]:
    pos = {v: i for i, v in enumerate(release.values)}
    mask = np.zeros(len(release.values), dtype=bool)
    if not fact.values:
        raise InputError(f"{fact.source.describe()}: no sensitive value given")
    for i, v in enumerate(fact.values, start=1):
        if v not in pos:
            raise InputError(
                f"{fact.source.describe()}: its sensitive value {i} is not a value of the "
                f"sensitive column {release.sensitive!r}"
            )
        mask[pos[v]] = True
    return mask


def _check_bound(fact: Fact, top: float) -> None:
    b = fact.bound
    what = "probability" if isinstance(fact, DistributionFact) or top == 1.0 else "count"
    for v in (b.low, b.high):
        if not (0.0 <= v <= top):
            raise InputError(f"{fact.source.describe()}: {what} {v:g} is outside [0, {top:g}]")
    if b.low > b.high:
        raise InputError(f"{fact.source.describe()}: interval low {b.low:g} > high {b.high:g}")


def _at(line: int | None, what: str = "line") -> str:
    return f" ({what} {line})" if line is not None else ""
