"""An independent oracle for Privacy-MaxEnt, written from the definitions of Du et al. 2008
(sections 3, 4.1, 5 and 6) and nothing of the engine's algorithm.

* A tiny release is a list of buckets, each a list of records ``(qi, s)`` (``qi`` a tuple of
  strings). ``N`` is the number of records.
* The *full joint* has one unknown ``P(q, s, b)`` for **every** QI value ``q`` of the release,
  every sensitive value ``s`` and every bucket ``b`` -- zero-invariant terms included and
  constrained to zero explicitly (eq. 6) -- with the QI-invariants (eq. 4), the
  SA-invariants (eq. 5) and the knowledge rows of section 4.1, in probability units.
* The *pseudonym model* (section 6) has one unknown ``P(i, s, b)`` per record owner ``i``
  (every person its own pseudonym, no aggregation), with the row "person ``i`` appears
  exactly once" (``sum_{s,b} P(i, s, b) = 1/N``) on top of the invariants.
* Possible worlds (Definitions 5.2-5.3): every assignment of each bucket's SA multiset to
  its QI records; a world's vector puts ``1/N`` on each record's ``(q, s, b)``.
* :func:`kkt_violation` certifies optimality of a candidate distribution: feasibility,
  every cell it leaves at zero is zero in every feasible point (one LP per cell), and
  ``log x`` on the support is a combination of the active rows with multipliers of the
  right signs (bounded least squares). For this convex problem these conditions are
  sufficient.
* :func:`solve_dense` is a second, plain solver (dense dual Newton on the full joint in
  probability units, support from the per-cell LPs) for equality knowledge.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import cast

import numpy as np
import numpy.typing as npt
from scipy.optimize import linprog, lsq_linear

Record = tuple[tuple[str, ...], str]
Buckets = Sequence[Sequence[Record]]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Dist:
    """``P(values | given) in [low, high]``; ``given`` maps QI position -> value."""

    given: tuple[tuple[int, str], ...]
    values: tuple[str, ...]
    low: Fraction
    high: Fraction


@dataclass(frozen=True)
class Indiv:
    """The number of ``people`` (pseudonym indices) holding one of ``values`` is in
    ``[low, high]``."""

    people: tuple[int, ...]
    values: tuple[str, ...]
    low: Fraction
    high: Fraction


@dataclass
class Model:
    """Linear constraints over named variables: ``eq @ x = eq_rhs``, ``low <= ineq @ x <=
    high`` (probability units, exact fractions kept alongside)."""

    variables: list[tuple[object, str, int]]
    eq_rows: list[dict[int, int]] = field(default_factory=list)
    eq_rhs: list[Fraction] = field(default_factory=list)
    k_rows: list[dict[int, int]] = field(default_factory=list)
    k_low: list[Fraction] = field(default_factory=list)
    k_high: list[Fraction] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.variables)

    def dense(self) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
        a = np.zeros((len(self.eq_rows), self.n))
        for i, row in enumerate(self.eq_rows):
            for j, c in row.items():
                a[i, j] = c
        g = np.zeros((len(self.k_rows), self.n))
        for i, row in enumerate(self.k_rows):
            for j, c in row.items():
                g[i, j] = c
        return (
            a,
            np.array([float(v) for v in self.eq_rhs]),
            g,
            np.array([float(v) for v in self.k_low]),
            np.array([float(v) for v in self.k_high]),
        )


def n_records(buckets: Buckets) -> int:
    return sum(len(b) for b in buckets)


def qi_values(buckets: Buckets) -> list[tuple[str, ...]]:
    return sorted({q for b in buckets for q, _ in b})


def sa_values(buckets: Buckets) -> list[str]:
    return sorted({s for b in buckets for _, s in b})


def _invariants(model: Model, buckets: Buckets, key_q: dict[object, tuple[str, ...]]) -> None:
    """Eqs. 4-6 over the model's variables (whose first component is a QI value or a
    pseudonym whose QI value is ``key_q[...]``)."""
    n = n_records(buckets)
    for b, recs in enumerate(buckets):
        qb = {q: sum(1 for r in recs if r[0] == q) for q, _ in recs}
        sb = {s: sum(1 for r in recs if r[1] == s) for _, s in recs}
        for q, c in qb.items():  # QI-invariant (4)
            row = {
                j: 1 for j, (o, _, bb) in enumerate(model.variables) if bb == b and key_q[o] == q
            }
            model.eq_rows.append(row)
            model.eq_rhs.append(Fraction(c, n))
        for s, c in sb.items():  # SA-invariant (5)
            row = {j: 1 for j, (_, ss, bb) in enumerate(model.variables) if bb == b and ss == s}
            model.eq_rows.append(row)
            model.eq_rhs.append(Fraction(c, n))
        for j, (o, s, bb) in enumerate(model.variables):  # zero-invariant (6)
            if bb == b and (key_q[o] not in qb or s not in sb):
                model.eq_rows.append({j: 1})
                model.eq_rhs.append(Fraction(0))


def _matches(q: tuple[str, ...], given: tuple[tuple[int, str], ...]) -> bool:
    return all(q[pos] == v for pos, v in given)


def full_joint(buckets: Buckets, knowledge: Sequence[Dist] = ()) -> Model:
    """The full joint ``P(q, s, b)`` with invariants and distribution knowledge."""
    qs, ss = qi_values(buckets), sa_values(buckets)
    variables: list[tuple[object, str, int]] = [
        (q, s, b) for b in range(len(buckets)) for q in qs for s in ss
    ]
    model = Model(variables)
    _invariants(model, buckets, {q: q for q in qs})
    n = n_records(buckets)
    for f in knowledge:
        n_given = sum(1 for b in buckets for q, _ in b if _matches(q, f.given))
        row = {
            j: 1
            for j, (q, s, _) in enumerate(variables)
            if _matches(cast(tuple[str, ...], q), f.given) and s in f.values
        }
        model.k_rows.append(row)
        model.k_low.append(f.low * Fraction(n_given, n))
        model.k_high.append(f.high * Fraction(n_given, n))
    return model


def people(buckets: Buckets) -> list[tuple[str, ...]]:
    """Pseudonyms: person ``i`` has QI value ``people(buckets)[i]`` (sorted by QI value)."""
    return sorted(q for b in buckets for q, _ in b)


def pseudonym_model(
    buckets: Buckets, dist: Sequence[Dist] = (), indiv: Sequence[Indiv] = ()
) -> Model:
    """Section 6: one unknown ``P(i, s, b)`` per person, every person exactly once."""
    persons = people(buckets)
    ss = sa_values(buckets)
    variables: list[tuple[object, str, int]] = [
        (i, s, b) for b in range(len(buckets)) for i in range(len(persons)) for s in ss
    ]
    model = Model(variables)
    _invariants(model, buckets, {i: q for i, q in enumerate(persons)})
    n = n_records(buckets)
    for i in range(len(persons)):
        model.eq_rows.append({j: 1 for j, (o, _, _) in enumerate(variables) if o == i})
        model.eq_rhs.append(Fraction(1, n))
    for f in dist:
        n_given = sum(1 for q in persons if _matches(q, f.given))
        row = {
            j: 1
            for j, (o, s, _) in enumerate(variables)
            if _matches(persons[cast(int, o)], f.given) and s in f.values
        }
        model.k_rows.append(row)
        model.k_low.append(f.low * Fraction(n_given, n))
        model.k_high.append(f.high * Fraction(n_given, n))
    for g in indiv:
        row = {j: 1 for j, (o, s, _) in enumerate(variables) if o in g.people and s in g.values}
        model.k_rows.append(row)
        model.k_low.append(g.low / n)
        model.k_high.append(g.high / n)
    return model


# ------------------------------------------------------------------ possible worlds


def bucket_assignments(recs: Sequence[Record]) -> list[tuple[str, ...]]:
    """Definition 5.2: the distinct ways to give the bucket's SA multiset to its records."""
    return sorted(set(itertools.permutations([s for _, s in recs])))


def world_vectors(buckets: Buckets, model: Model) -> list[list[Fraction]]:
    """Definition 5.3: every assignment of the whole release as a vector over ``model``'s
    full-joint variables ``(q, s, b)``."""
    n = n_records(buckets)
    index = {v: j for j, v in enumerate(model.variables)}
    per_bucket = [bucket_assignments(b) for b in buckets]
    out: list[list[Fraction]] = []
    for combo in itertools.product(*per_bucket):
        vec = [Fraction(0)] * model.n
        for b, (recs, assign) in enumerate(zip(buckets, combo, strict=True)):
            for (q, _), s in zip(recs, assign, strict=True):
                vec[index[(q, s, b)]] += Fraction(1, n)
        out.append(vec)
    return out


def pseudonym_world_vectors(buckets: Buckets, model: Model) -> list[list[Fraction]]:
    """Worlds of the pseudonym model: additionally, the people of each QI value are matched
    to that value's records in every possible way."""
    n = n_records(buckets)
    persons = people(buckets)
    index = {v: j for j, v in enumerate(model.variables)}
    slots = [(b, k) for b, recs in enumerate(buckets) for k in range(len(recs))]
    by_q: dict[tuple[str, ...], list[tuple[int, int]]] = {}
    for b, k in slots:
        by_q.setdefault(buckets[b][k][0], []).append((b, k))
    owners_by_q = {q: [i for i, p in enumerate(persons) if p == q] for q in by_q}
    matchings = [
        [dict(zip(owners_by_q[q], perm, strict=True)) for perm in itertools.permutations(by_q[q])]
        for q in sorted(by_q)
    ]
    per_bucket = [bucket_assignments(b) for b in buckets]
    out: list[list[Fraction]] = []
    for match in itertools.product(*matchings):
        place = {i: slot for m in match for i, slot in m.items()}
        for combo in itertools.product(*per_bucket):
            vec = [Fraction(0)] * model.n
            for i, (b, k) in place.items():
                vec[index[(i, combo[b][k], b)]] += Fraction(1, n)
            out.append(vec)
    return out


def rank_fraction(rows: Sequence[Sequence[Fraction]]) -> int:
    """Exact rank by Gaussian elimination over the rationals."""
    mat = [list(r) for r in rows]
    rank = 0
    cols = len(mat[0]) if mat else 0
    for c in range(cols):
        pivot = next((i for i in range(rank, len(mat)) if mat[i][c] != 0), None)
        if pivot is None:
            continue
        mat[rank], mat[pivot] = mat[pivot], mat[rank]
        for i in range(len(mat)):
            if i != rank and mat[i][c] != 0:
                f = mat[i][c] / mat[rank][c]
                mat[i] = [a - f * b for a, b in zip(mat[i], mat[rank], strict=True)]
        rank += 1
    return rank


# ------------------------------------------------------------------ optimality


def entropy(x: FloatArray) -> float:
    p = x[x > 0]
    return float(-(p * np.log(p)).sum())


def forced_zero(model: Model, j: int) -> bool:
    """Is variable ``j`` zero in every feasible point? (maximize it by LP)"""
    a, b, g, lo, hi = model.dense()
    c = np.zeros(model.n)
    c[j] = -1.0
    a_ub = np.vstack([g, -g]) if g.size else None
    b_ub = np.concatenate([hi, -lo]) if g.size else None
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a, b_eq=b, bounds=(0, None), method="highs")
    assert res.status == 0, res.message
    return bool(-res.fun <= 1e-10)


def feasible(model: Model) -> bool:
    a, b, g, lo, hi = model.dense()
    a_ub = np.vstack([g, -g]) if g.size else None
    b_ub = np.concatenate([hi, -lo]) if g.size else None
    res = linprog(
        np.zeros(model.n), A_ub=a_ub, b_ub=b_ub, A_eq=a, b_eq=b, bounds=(0, None), method="highs"
    )
    return bool(res.status == 0)


def support(model: Model) -> npt.NDArray[np.bool_]:
    return np.array([not forced_zero(model, j) for j in range(model.n)], dtype=bool)


def kkt_violation(model: Model, x: FloatArray, zero_tol: float = 1e-11) -> dict[str, float]:
    """How far ``x`` is from the maximum-entropy point of ``model``: ``feasibility`` (largest
    constraint violation), ``support`` (largest LP maximum of a cell ``x`` leaves at zero),
    ``stationarity`` (least-squares residual of ``log x`` against the active rows with
    sign-constrained multipliers)."""
    a, b, g, lo, hi = model.dense()
    feas = float(np.max(np.abs(a @ x - b), initial=0.0))
    if g.size:
        gx = g @ x
        feas = max(feas, float(np.max(np.maximum(gx - hi, lo - gx))))
    feas = max(feas, float(-np.min(x)))
    on = x > zero_tol
    worst_support = 0.0
    for j in np.flatnonzero(~on):
        c = np.zeros(model.n)
        c[j] = -1.0
        a_ub = np.vstack([g, -g]) if g.size else None
        b_ub = np.concatenate([hi, -lo]) if g.size else None
        res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a, b_eq=b, bounds=(0, None), method="highs")
        worst_support = max(worst_support, float(-res.fun))
    # stationarity on the support: log x = A^T lam + G^T nu, signs by activity
    cols = [a[:, on].T]
    lower = [np.full(a.shape[0], -np.inf)]
    upper = [np.full(a.shape[0], np.inf)]
    if g.size:
        gx = g @ x
        at_lo = np.abs(gx - lo) <= 1e-10
        at_hi = np.abs(gx - hi) <= 1e-10
        cols.append(g[:, on].T)
        lower.append(np.where(at_hi, -np.inf, 0.0))  # nu < 0 only when held at high
        upper.append(np.where(at_lo, np.inf, 0.0))  # nu > 0 only when held at low
    mat = np.hstack(cols)
    target = np.log(x[on])
    lb, ub = np.concatenate(lower), np.concatenate(upper)
    fixed = lb == ub
    res = lsq_linear(
        mat[:, ~fixed],
        target,
        bounds=(lb[~fixed], ub[~fixed]),
        method="bvls",
        tol=1e-14,
        max_iter=10_000,
    )
    stat = float(np.max(np.abs(mat[:, ~fixed] @ res.x - target), initial=0.0))
    return {"feasibility": feas, "support": worst_support, "stationarity": stat}


def solve_dense(model: Model) -> FloatArray:
    """A plain maximum-entropy solver for *equality* models: support by LP, then damped
    Newton on ``min sum exp(A^T lam) - b^T lam`` over the support with least-squares steps."""
    assert all(lo == hi for lo, hi in zip(model.k_low, model.k_high, strict=True))
    sup = support(model)
    a, b, g, lo, _ = model.dense()
    full_a = np.vstack([a, g]) if g.size else a
    full_b = np.concatenate([b, lo]) if g.size else b
    m = full_a[:, sup]
    keep = np.abs(m).sum(axis=1) > 0
    m, rhs = m[keep], full_b[keep]
    lam = np.zeros(m.shape[0])

    def dual(v: FloatArray) -> float:
        return float(np.exp(m.T @ v).sum() - rhs @ v)

    for _ in range(500):
        xs = np.exp(m.T @ lam)
        grad = m @ xs - rhs
        if np.max(np.abs(grad)) < 1e-15:
            break
        hess = (m * xs) @ m.T
        step = -np.linalg.lstsq(hess, grad, rcond=1e-13)[0]
        t, d0 = 1.0, dual(lam)
        while t > 1e-12 and dual(lam + t * step) > d0 + 1e-4 * t * (grad @ step) + 1e-16:
            t /= 2
        lam = lam + t * step
    out = np.zeros(model.n)
    out[sup] = np.exp(m.T @ lam)
    return out


def closed_form(buckets: Buckets, model: Model) -> list[Fraction]:
    """Theorem 5 / eq. (9): ``P(q, s, b) = P(q, b) P(s, b) / P(b)``, exactly."""
    n = n_records(buckets)
    out = []
    for q, s, b in model.variables:
        recs = buckets[b]
        nqb = sum(1 for r in recs if r[0] == q)
        nsb = sum(1 for r in recs if r[1] == s)
        out.append(Fraction(nqb * nsb, n * len(recs)))
    return out
