"""Maximize ``H(Q, S, B)`` subject to the invariants and the knowledge (Du et al. 2008,
sections 3.2-3.3 and 5.5).

* **Theorem 5 split.** Buckets no knowledge row touches (Definition 5.6, *irrelevant*) get
  the closed form ``P(q, s, b) = P(q, b) P(s, b) / P(b)``; only the relevant buckets go to
  the solver (Proposition 1: their optimum does not depend on the irrelevant ones).
* **Forced zeros** (:mod:`.zeros`): cells every feasible distribution sets to zero are
  removed first (sound propagation rules), so the optimum is interior to what is left.
* **Dual Newton.** With equality rows ``A x = b`` and interval rows ``lo <= K x <= hi``
  (count units), the optimum is ``x = exp(A^T lam + K^T nu)`` for the multipliers
  minimizing the convex dual
  ``D = sum exp(A^T lam + K^T nu) - b^T lam - sum_r min(lo_r nu_r, hi_r nu_r)``.
  Its gradient is the constraint residual (for an interval row: ``K_r x - lo_r`` when
  ``nu_r > 0``, ``K_r x - hi_r`` when ``nu_r < 0``), its Hessian ``M diag(x) M^T``.
  A projected Newton method (Bertsekas 1982) keeps each interval multiplier on one side of
  its kink at zero per step (rows inside their interval have ``nu_r = 0``), with Armijo
  backtracking and a sparse LU of the Hessian; it converges quadratically. It starts from
  the closed form's multipliers, or from a previous solution's (*warm start*). This is
  Kazama and Tsujii's inequality extension (the paper's section 4.5) in dual form: at the
  end every KKT condition holds.
* **Phase 1** (:mod:`.phase1`): infeasible knowledge drives the dual below
  ``N - N log N``, which is impossible for feasible constraints; an LP then confirms it and
  names an irreducible set of conflicting statements. A forced zero the rules missed only
  slows Newton down (the cell decays geometrically to below the tolerance); if Newton
  stalls for any reason, an LP finds the support and Newton restarts on it.

The residual reported is the largest violation of any row (invariant or knowledge), in
probability units.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.maxent import phase1, zeros
from airflow_privacy.core.maxent.constraints import PERSON_ROW, QI_ROW, SA_ROW, ConstraintSystem
from airflow_privacy.core.maxent.knowledge import Fact
from airflow_privacy.core.maxent.newton import newton
from airflow_privacy.errors import InputError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class InfeasibleKnowledge(InputError):
    """The knowledge contradicts the release (or itself); ``facts`` is an irreducible
    conflicting set."""

    def __init__(self, message: str, facts: tuple[Fact, ...]) -> None:
        super().__init__(message)
        self.facts = facts


@dataclass(frozen=True)
class SolverOptions:
    """``tol``: target residual in probability units; ``split``: use the Theorem 5 closed
    form for irrelevant buckets (``False`` solves every bucket jointly); ``phase1``: allow
    the LP fallback; ``linear``: Newton's linear solve (``"auto"``, ``"schur"``, ``"lu"``)."""

    tol: float = 1e-14
    split: bool = True
    max_newton: int = 200
    phase1: bool = True
    linear: str = "auto"
    conflict_budget_seconds: float = 30.0


@dataclass(frozen=True)
class SolveStats:
    buckets: int
    buckets_solved: int
    cells: int
    cells_solved: int
    forced_zero: int
    knowledge_rows: int
    newton_iterations: int
    active_inequalities: int
    lp_fallback: bool
    phase1_seconds: float
    newton_seconds: float
    seconds: float
    residual: float
    split: bool

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True, eq=False)
class Solution:
    """``x[c]``: the maximum-entropy count ``N * P(i, s, b)`` of every cell of ``system``."""

    system: ConstraintSystem
    x: FloatArray
    stats: SolveStats
    multipliers: Mapping[Hashable, float] = field(default_factory=dict)

    @property
    def probabilities(self) -> FloatArray:
        out: FloatArray = self.x / self.system.n_records
        return out


def solve(
    system: ConstraintSystem,
    options: SolverOptions | None = None,
    warm_start: Solution | None = None,
) -> Solution:
    """The maximum-entropy solution of ``system`` (raises :class:`InfeasibleKnowledge`).
    With ``linear="auto"``, Newton whose chosen linear solve stalls short of the residual is
    run once more with the Schur solve before the knowledge is refused: on degenerate but
    consistent knowledge the regularized LU step can stall (one bucket (a, b, c, a) with
    three statements that pin people 0, 1 and 3: residual 3.2e-8), where Schur converges."""
    opts = options or SolverOptions()
    try:
        return _solve(system, opts, warm_start)
    except _Stalled as stalled:
        if opts.linear != "auto":
            raise InputError(stalled.message) from None
        try:
            return _solve(system, replace(opts, linear="schur"), warm_start)
        except _Stalled:
            raise InputError(stalled.message) from None


class _Stalled(Exception):
    """Newton ended short of the residual (:func:`solve` refuses with ``message``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _solve(system: ConstraintSystem, opts: SolverOptions, warm_start: Solution | None) -> Solution:
    t0 = time.perf_counter()
    n_rec = system.n_records
    tol_counts = opts.tol * n_rec
    _check_empty_rows(system)
    x = system.closed_form()
    touched = system.touched_buckets() if opts.split else np.ones(system.release.n_buckets, bool)
    cells = np.flatnonzero(touched[system.cell_b])
    stats_extra = {"newton": 0, "active": 0, "p1": 0.0, "nt": 0.0, "zero": 0, "lp": 0}
    multipliers: dict[Hashable, float] = {}
    if cells.size and (system.knowledge.shape[0] or not opts.split):
        sub = _Subproblem(system, touched, cells)
        sub_x, multipliers = _solve_sub(sub, opts, tol_counts, warm_start, stats_extra)
        x = x.copy()
        x[cells] = sub_x
    residual = residual_of(system, x) / n_rec
    stats = SolveStats(
        buckets=system.release.n_buckets,
        buckets_solved=int(touched.sum()) if cells.size else 0,
        cells=system.n_cells,
        cells_solved=int(cells.size),
        forced_zero=int(stats_extra["zero"]),
        knowledge_rows=int(system.knowledge.shape[0]),
        newton_iterations=int(stats_extra["newton"]),
        active_inequalities=int(stats_extra["active"]),
        lp_fallback=bool(stats_extra["lp"]),
        phase1_seconds=float(stats_extra["p1"]),
        newton_seconds=float(stats_extra["nt"]),
        seconds=time.perf_counter() - t0,
        residual=residual,
        split=opts.split,
    )
    if not residual <= max(1e-8, opts.tol):
        raise _Stalled(
            f"the maximum-entropy solver did not converge (constraint residual {residual:.2e} "
            "> 1e-8); the knowledge may be nearly contradictory"
        )
    return Solution(system, x, stats, multipliers)


def residual_of(system: ConstraintSystem, x: FloatArray) -> float:
    """Largest violation (count units) of an invariant or knowledge row by ``x``."""
    worst = 0.0
    if system.invariants.shape[0]:
        worst = float(np.max(np.abs(system.invariants @ x - system.invariant_rhs)))
    if system.knowledge.shape[0]:
        kx = system.knowledge @ x
        over = np.maximum(kx - system.knowledge_high, system.knowledge_low - kx)
        worst = max(worst, float(np.max(over)))
    if x.size:
        worst = max(worst, float(-np.min(x)))
    return worst


# ---------------------------------------------------------------------------- internals


def _check_empty_rows(system: ConstraintSystem) -> None:
    lengths = np.diff(system.knowledge.indptr)
    for r in np.flatnonzero(lengths == 0):
        if system.knowledge_low[r] > 0:
            fact = system.facts[int(r)]
            raise InfeasibleKnowledge(
                f"the knowledge is infeasible: {fact.source.describe()} cannot hold: its "
                f"lower bound is {fact.bound.low:g} > 0 but no bucket that holds the "
                "records it is about contains "
                + ("its sensitive value" if len(fact.values) == 1 else "any of its values"),
                (fact,),
            )


class _Subproblem:
    """The relevant buckets' cells and rows (count units)."""

    def __init__(self, system: ConstraintSystem, touched: BoolArray, cells: IntArray) -> None:
        self.system = system
        self.cells = cells
        ib = system.invariant_bucket
        inv_keep = np.flatnonzero((ib < 0) | touched[np.maximum(ib, 0)])
        self.inv_rows = inv_keep
        self.eq = system.invariants[inv_keep][:, cells].tocsr()
        self.eq_rhs = system.invariant_rhs[inv_keep]
        self.inv_bucket = ib[inv_keep]
        self.know = system.knowledge[:, cells].tocsr()
        self.low = system.knowledge_low
        self.high = system.knowledge_high
        self.cell_b = system.cell_b[cells]
        self.init_eta = _closed_form_multipliers(system, inv_keep)

    def polytope(self, rows: list[int], live: BoolArray) -> phase1.Polytope:
        """Invariants of the buckets the knowledge ``rows`` involve (closed under the
        buckets of named people), those rows, over the ``live`` cells."""
        idx = np.asarray(rows, dtype=np.int64)
        know = self.know[idx]
        nb = self.system.release.n_buckets
        buckets = np.zeros(nb, dtype=bool)
        buckets[self.cell_b[know.indices]] = True
        person = self.inv_bucket < 0
        if person.any():
            prow = self.eq[np.flatnonzero(person)]
            while True:
                hit = np.asarray(prow[:, buckets[self.cell_b]].sum(axis=1)).ravel() > 0
                extra = np.zeros(nb, dtype=bool)
                sub = prow[np.flatnonzero(hit)]
                extra[self.cell_b[sub.indices]] = True
                if not (extra & ~buckets).any():
                    break
                buckets |= extra
        cols = np.flatnonzero(live & buckets[self.cell_b])
        eq_rows = np.flatnonzero(person | buckets[np.maximum(self.inv_bucket, 0)] & ~person)
        eq = self.eq[eq_rows][:, cols].tocsr()
        nz = np.diff(eq.indptr) > 0
        return phase1.Polytope(
            eq[nz],
            self.eq_rhs[eq_rows][nz],
            know[:, cols].tocsr(),
            self.low[idx],
            self.high[idx],
        )


def _closed_form_multipliers(system: ConstraintSystem, rows: IntArray) -> FloatArray:
    """Multipliers of the invariant ``rows`` whose exponential is Theorem 5's closed form."""
    rel = system.release
    kind = system.invariant_kind[rows]
    ids = system.invariant_id[rows]
    out = np.zeros(rows.size)
    nv = len(rel.values)
    # the dropped SA row of each bucket is its first present value
    first_s = np.argmax(rel.sb > 0, axis=1)
    n_first = rel.sb[np.arange(rel.n_buckets), first_s].astype(np.float64)
    # the last person group of each class carries no person row
    gq = system.group_q
    last = np.ones(gq.size, dtype=bool)
    last[:-1] = gq[1:] != gq[:-1]
    w_last = np.zeros(len(rel.qi_values))
    w_last[gq[last]] = system.group_weight[last]
    qi = kind == QI_ROW
    q, b, nqb = (rel.qb[ids[qi], j] for j in range(3))
    out[qi] = (
        np.log(nqb)
        - np.log(rel.bucket_sizes[b])
        + np.log(n_first[b])
        + np.log(w_last[q] / rel.qi_counts[q])
    )
    sa = kind == SA_ROW
    sb_b, sb_s = ids[sa] // nv, ids[sa] % nv
    out[sa] = np.log(rel.sb[sb_b, sb_s]) - np.log(n_first[sb_b])
    pr = kind == PERSON_ROW
    g = ids[pr]
    out[pr] = np.log(system.group_weight[g]) - np.log(w_last[gq[g]])
    return out


def _row_keys(system: ConstraintSystem, rows: IntArray) -> list[Hashable]:
    keys: list[Hashable] = []
    for kind, i in zip(
        system.invariant_kind[rows].tolist(), system.invariant_id[rows].tolist(), strict=True
    ):
        if kind == PERSON_ROW:
            g = system.groups[i]
            keys.append(("person", g.q, g.name))
        else:
            keys.append(("qi" if kind == QI_ROW else "sa", i))
    return keys


@dataclass
class _Newton:
    status: str  # "converged", "infeasible" (dual below its bound) or "stalled"
    lam: FloatArray
    nu: FloatArray
    x: FloatArray
    iterations: int


def _solve_sub(
    sub: _Subproblem,
    opts: SolverOptions,
    tol: float,
    warm: Solution | None,
    stats: dict[str, float],
) -> tuple[FloatArray, dict[Hashable, float]]:
    system = sub.system
    n = sub.cells.size
    k = sub.know.shape[0]
    t0 = time.perf_counter()
    live = np.ones(n, dtype=bool)
    if k:
        try:
            live = zeros.propagate(system, sub.cells, sub.know, live)
        except zeros.ZerosInfeasible:
            _raise_conflict(sub, live, tol, opts)
        # a row left without any cell that may be positive must allow 0
        left = np.asarray(sub.know[:, np.flatnonzero(live)].sum(axis=1)).ravel()
        if np.any((left == 0) & (sub.low > tol)):
            _raise_conflict(sub, live, tol, opts)
    stats["p1"] += time.perf_counter() - t0
    lam0 = sub.init_eta.copy()
    nu0 = np.zeros(k)
    keys = _row_keys(system, sub.inv_rows)
    if warm is not None and warm.multipliers:
        wm = warm.multipliers
        for i, key in enumerate(keys):
            if key in wm:
                lam0[i] = wm[key]
        for r in range(k):
            nu0[r] = wm.get(("fact", system.facts[r]), 0.0)
    bound = float(system.n_records) * (np.log(max(system.n_records, 1)) - 1.0) + 1.0
    t1 = time.perf_counter()
    res = _newton_on(sub, live, lam0, nu0, tol, opts.max_newton, bound, opts.linear)
    stats["newton"] += res.iterations
    stats["nt"] += time.perf_counter() - t1
    if res.status == "infeasible":
        _raise_conflict(sub, live, tol, opts)
    if res.status == "stalled":
        # a forced zero the rules missed slows Newton down but it still converges (the
        # cell decays geometrically); stalling means trouble: find the support by LP
        if not opts.phase1:
            raise InputError("the maximum-entropy solver did not converge")
        stats["lp"] = 1
        t2 = time.perf_counter()
        cols = np.flatnonzero(live)
        poly = phase1.Polytope(
            sub.eq[:, cols].tocsr(), sub.eq_rhs, sub.know[:, cols].tocsr(), sub.low, sub.high
        )
        try:
            sup = phase1.support(poly)
        except phase1.Infeasible:
            _raise_conflict(sub, live, tol, opts)
        live[cols[~sup]] = False
        stats["p1"] += time.perf_counter() - t2
        t3 = time.perf_counter()
        res = _newton_on(sub, live, res.lam, res.nu, tol, 4 * opts.max_newton, bound, opts.linear)
        stats["newton"] += res.iterations
        stats["nt"] += time.perf_counter() - t3
        if res.status == "infeasible":
            _raise_conflict(sub, live, tol, opts)
    stats["zero"] = int(n - live.sum())
    stats["active"] = int(np.count_nonzero(res.nu[sub.low < sub.high]))
    multipliers: dict[Hashable, float] = dict(zip(keys, res.lam.tolist(), strict=True))
    for r in range(k):
        multipliers[("fact", system.facts[r])] = float(res.nu[r])
    out = np.zeros(n)
    out[live] = res.x[live]
    return out, multipliers


def _newton_on(
    sub: _Subproblem,
    live: BoolArray,
    lam0: FloatArray,
    nu0: FloatArray,
    tol: float,
    max_iter: int,
    bound: float,
    linear: str,
) -> _Newton:
    cols = np.flatnonzero(live)
    eq = sub.eq[:, cols].tocsr()
    know = sub.know[:, cols].tocsr()
    res = newton(
        eq,
        sub.eq_rhs,
        sub.inv_bucket,
        know,
        sub.low,
        sub.high,
        lam0,
        nu0,
        tol,
        max_iter,
        bound,
        linear,
    )
    x = np.zeros(live.size)
    x[cols] = res.x
    return _Newton(res.status, res.lam, res.nu, x, res.iterations)


def _raise_conflict(sub: _Subproblem, live: BoolArray, tol: float, opts: SolverOptions) -> None:
    # diagnose on every cell: the zeros found so far are consequences of *all* the
    # statements, and a subset must be judged without the others' consequences
    del live
    k = sub.know.shape[0]
    every = np.ones(sub.cells.size, dtype=bool)
    rows, minimal = phase1.conflict(
        k,
        lambda r: sub.polytope(r, every),
        tol=max(tol, 1e-9),
        budget_seconds=opts.conflict_budget_seconds,
    )
    facts = tuple(sub.system.facts[r] for r in rows)
    if not facts:  # numerically borderline: the elastic LP found a solution after all
        raise InputError(
            "the knowledge is (numerically) at the edge of being infeasible; "
            "loosen a bound slightly"
        )
    listed = "; ".join(f.source.describe() for f in facts)
    if len(facts) == 1:
        msg = f"the knowledge is infeasible: {listed} contradicts the published buckets"
    else:
        some = "" if minimal else " (possibly not all of them needed)"
        msg = (
            f"the knowledge is infeasible: these {len(facts)} statements conflict with each "
            f"other and the published buckets{some}: {listed}"
        )
    raise InfeasibleKnowledge(msg, facts)
