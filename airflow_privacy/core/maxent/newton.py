"""Projected Newton on the Privacy-MaxEnt dual, with a structured linear solve.

The dual (see :mod:`.solver`) is
``D(lam, nu) = sum exp(A^T lam + K^T nu) - b^T lam - sum_r min(lo_r nu_r, hi_r nu_r)``:
equality rows ``A`` (invariants and exact knowledge) with free multipliers ``lam``, interval
rows ``K`` with multipliers ``nu`` whose sign says which end is held (Bertsekas's projected
Newton keeps each ``nu_r`` on one side of zero within a step; rows strictly inside their
interval have ``nu_r = 0``).

The Newton system ``(M X M^T) d = -g`` has a structure worth using. *Local* rows (the QI-
and SA-invariants of one bucket) only meet the cells of that bucket, so their block of the
Hessian is block diagonal with one small block per bucket; *global* rows (knowledge rows,
person rows) are few but may span every bucket. Eliminating the local rows bucket by bucket
(batched pseudo-inverses of the small blocks) leaves a dense Schur complement over the
global rows only:

    S = H_GG - W^T H_LL^+ W,  W = H_LG,   S d_G = -g_G + W^T H_LL^+ g_L,
    d_L = H_LL^+ (-g_L - W d_G).

Pseudo-inverses handle the dependent rows that forced zeros can create (a consistent
system, so the minimum-norm step is a Newton step). From 20,000 cells on, ``S`` and the
pseudo-inverses are computed in two fixed halves of the buckets on two threads; BLAS runs on
one thread throughout (:func:`_one_blas_thread` says why). While the global rows are light (few
non-zeros), or a bucket is very large, or there are very many global rows, a sparse LU of
the whole Hessian is faster and is used instead (``linear="auto"``).

Two safeguards: if the line search rejects the Newton step (a degenerate system, e.g. an
interval row that duplicates an equality), Levenberg-Marquardt damping is tried; and when
convergence turns linear (cells decaying towards a face of the polytope that the zero rules
did not detect: they shrink by ``e`` per full step), the accepted step is doubled while the
dual keeps decreasing.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
P = ParamSpec("P")
R = TypeVar("R")

_EXP_MAX = 700.0
_MAX_BLOCK = 400
_MAX_GLOBAL = 3000
# the sparse LU of the whole Hessian is faster while the global rows are light; the Schur
# complement once they span the release (benchmarks/bench_maxent.py: LU/Schur time 0.35-0.5
# up to ~8k non-zeros in the global rows, 1.8-4.1 from ~20k)
_SCHUR_FROM = 12_000
_DAMPING = (0.0, 1e-6, 1e-3, 1.0, 1e3)
# from this many cells the Schur complement is formed in two halves of the buckets, on two
# threads where the machine has two cores (scipy's sparse products release the GIL); the
# halves are fixed by the buckets alone, so the result does not depend on the core count
_HALVES_FROM = 20_000
_POOL: dict[int, ThreadPoolExecutor] = {}  # by process id: a forked child makes its own
_BLAS: list[Any] = []  # threadpoolctl's controller, made once


@dataclass
class NewtonResult:
    status: str  # "converged", "infeasible" (dual below its bound) or "stalled"
    lam: FloatArray
    nu: FloatArray
    x: FloatArray
    iterations: int


def _on_one_blas_thread(solve: Callable[P, R]) -> Callable[P, R]:
    """``solve`` with BLAS and LAPACK on one thread (:func:`_one_blas_thread`)."""

    @functools.wraps(solve)
    def limited(*args: P.args, **kwargs: P.kwargs) -> R:
        with _one_blas_thread():
            return solve(*args, **kwargs)

    return limited


def _one_blas_thread() -> AbstractContextManager[Any]:
    """BLAS and LAPACK on one thread while Newton runs. Their dense work here is small (the
    Schur complement's Cholesky factor, 516 x 516 for 1,000 rules on Adult), and OpenBLAS's
    threads spin for a while after each call, competing with the sparse products that
    follow: on 2 cores the 1,000 rules took 2.8 s of wall time and 5.2 s of CPU with them,
    2.0 s and 3.3 s without (benchmarks/bench_maxent.py). One thread also makes the result
    the same whatever the machine's core count (OpenBLAS's sums depend on it)."""
    import scipy.linalg  # noqa: F401  (loads SciPy's BLAS, so that the controller sees it)
    from threadpoolctl import ThreadpoolController

    if not _BLAS:
        _BLAS.append(ThreadpoolController())
    limit: AbstractContextManager[Any] = _BLAS[0].limit(limits=1, user_api="blas")
    return limit


@_on_one_blas_thread
def newton(
    eq: sp.csr_matrix,
    eq_rhs: FloatArray,
    eq_bucket: IntArray,
    know: sp.csr_matrix,
    low: FloatArray,
    high: FloatArray,
    lam0: FloatArray,
    nu0: FloatArray,
    tol: float,
    max_iter: int,
    bound: float,
    linear: str = "auto",
    trace: list[dict[str, float]] | None = None,
) -> NewtonResult:
    """Minimize the dual. ``eq_bucket[i]`` is the bucket of equality row ``i`` (-1 for rows
    that span buckets); knowledge rows with ``low == high`` are equalities, the others
    intervals. ``bound``: the dual of a feasible problem never falls below ``-bound``.
    ``linear``: ``"schur"``, ``"lu"`` or ``"auto"``. BLAS runs on one thread meanwhile."""
    k = know.shape[0]
    row_nnz = np.diff(know.indptr)
    exact = (low == high) & (row_nnz > 0)
    interval = (low < high) & (row_nnz > 0)
    eq_t = eq.T.tocsr()
    know_t = know.T.tocsr()
    lam = lam0.astype(np.float64).copy()
    nu = np.where(row_nnz == 0, 0.0, nu0.astype(np.float64))
    local = eq_bucket >= 0
    eq_global_nnz = int(eq[np.flatnonzero(~local)].nnz)
    blocks = _Blocks.build(eq, eq_bucket) if linear != "lu" else None
    if blocks is not None and linear == "auto" and blocks.max_size > _MAX_BLOCK:
        blocks = None

    def dual(lv: FloatArray, vv: FloatArray) -> tuple[float, FloatArray]:
        eta = eq_t @ lv + know_t @ vv
        if eta.size and float(np.max(eta)) > _EXP_MAX:
            return float("inf"), eta
        xx = np.exp(eta)
        lin = float(eq_rhs @ lv) + float(np.sum(np.where(vv >= 0, low * vv, high * vv)))
        return float(xx.sum()) - lin, xx

    value, x = dual(lam, nu)
    its = 0
    previous_resid: float | None = None
    for its in range(max_iter + 1):
        kx = know @ x
        plus = interval & ((nu > 0) | ((nu == 0) & (kx < low)))
        minus = interval & ((nu < 0) | ((nu == 0) & (kx > high)))
        free = exact | plus | minus
        target = np.where(minus, high, low)
        g_eq = eq @ x - eq_rhs
        g_k = kx - target
        resid = max(
            float(np.max(np.abs(g_eq), initial=0.0)), float(np.max(np.abs(g_k[free]), initial=0.0))
        )
        if trace is not None:
            trace.append(
                {
                    "iteration": its,
                    "residual": resid,
                    "dual": value,
                    "min_x": float(x.min(initial=0.0)),
                }
            )
        if resid <= tol:
            return NewtonResult("converged", lam, nu, x, its)
        if value < -bound:
            return NewtonResult("infeasible", lam, nu, x, its)
        if its == max_iter:
            break
        slow = previous_resid is not None and resid > 0.2 * previous_resid
        previous_resid = resid
        fidx = np.flatnonzero(free)
        n_global = int((~local).sum()) + fidx.size
        coupling = int(eq_global_nnz + know[fidx].nnz)
        use_schur = blocks is not None and (
            linear == "schur"
            or (linear == "auto" and n_global <= _MAX_GLOBAL and coupling >= _SCHUR_FROM)
        )
        accepted = False
        # a Newton step first; if the line search rejects it (a degenerate system: an
        # interval row dependent on the equalities, or vanishing cells), Levenberg-Marquardt
        # damping
        for damping in _DAMPING:
            step = None
            if use_schur and blocks is not None:
                step = _schur_step(eq, local, know[fidx], x, g_eq, g_k[fidx], blocks, damping)
            if step is None:
                mat = sp.vstack([eq, know[fidx]], format="csr")
                step = _lu_step(mat, x, np.concatenate([g_eq, g_k[fidx]]), damping)
            if step is None or not np.all(np.isfinite(step)):
                continue
            d_lam = step[: eq.shape[0]]
            d_nu = np.zeros(k)
            d_nu[fidx] = step[eq.shape[0] :]
            t = 1.0
            while t > 1e-10:
                cand_lam = lam + t * d_lam
                cand_nu = nu + t * d_nu
                cand_nu = np.where(plus, np.maximum(cand_nu, 0.0), cand_nu)
                cand_nu = np.where(minus, np.minimum(cand_nu, 0.0), cand_nu)
                new_value, new_x = dual(cand_lam, cand_nu)
                moved = float(g_eq @ (cand_lam - lam)) + float(g_k @ (cand_nu - nu))
                if new_value <= value + 1e-4 * moved + 1e-15 * abs(value):
                    if t == 1.0 and slow:
                        # linear convergence: cells decaying towards a face (e^-t per full
                        # step); longer steps along the same direction get there faster
                        t, cand_lam, cand_nu, new_value, new_x = _expand(
                            dual, lam, nu, d_lam, d_nu, plus, minus, new_value,
                            cand_lam, cand_nu, new_x,
                        )  # fmt: skip
                    lam, nu, value, x = cand_lam, cand_nu, new_value, new_x
                    accepted = True
                    if trace is not None:
                        trace[-1]["step"] = t
                        trace[-1]["damping"] = damping
                    break
                t *= 0.5
            if accepted:
                break
        if not accepted:
            # no further descent at rounding level: converged if the residual is tiny
            if resid <= 100 * tol:
                return NewtonResult("converged", lam, nu, x, its)
            break
    return NewtonResult("stalled", lam, nu, x, its)


def _expand(
    dual: Callable[[FloatArray, FloatArray], tuple[float, FloatArray]],
    lam: FloatArray,
    nu: FloatArray,
    d_lam: FloatArray,
    d_nu: FloatArray,
    plus: npt.NDArray[np.bool_],
    minus: npt.NDArray[np.bool_],
    value: float,
    best_lam: FloatArray,
    best_nu: FloatArray,
    best_x: FloatArray,
) -> tuple[float, FloatArray, FloatArray, float, FloatArray]:
    """Double the step while the dual keeps decreasing (from the accepted full step)."""
    t = 1.0
    for _ in range(40):
        cand_lam = lam + 2 * t * d_lam
        cand_nu = nu + 2 * t * d_nu
        cand_nu = np.where(plus, np.maximum(cand_nu, 0.0), cand_nu)
        cand_nu = np.where(minus, np.minimum(cand_nu, 0.0), cand_nu)
        new_value, new_x = dual(cand_lam, cand_nu)
        if not new_value < value - 1e-15 * abs(value):
            break
        t, value, best_lam, best_nu, best_x = 2 * t, new_value, cand_lam, cand_nu, new_x
    return t, best_lam, best_nu, value, best_x


# ----------------------------------------------------------------- linear algebra


def _lu_step(
    mat: sp.csr_matrix, x: FloatArray, g: FloatArray, damping: float = 0.0
) -> FloatArray | None:
    from scipy.sparse.linalg import splu

    hess = (mat.multiply(x[None, :]) @ mat.T).tocsc()
    if damping:
        hess = hess + sp.identity(hess.shape[0], format="csc") * damping
    scale = max(float(hess.diagonal().max(initial=1.0)), 1.0)
    size = hess.shape[0]
    for reg in (1e-13, 1e-9, 1e-6):
        try:
            lu = splu(
                hess + sp.identity(size, format="csc") * (reg * scale), permc_spec="MMD_AT_PLUS_A"
            )
        except RuntimeError:
            continue
        step: FloatArray = -lu.solve(g)
        if np.all(np.isfinite(step)):
            return _refined(step, g, lambda d: hess @ d, lu.solve)
    return None


def _refined(
    step: FloatArray,
    g: FloatArray,
    hess: Callable[[FloatArray], FloatArray],
    solve: Callable[[FloatArray], FloatArray],
) -> FloatArray:
    """``step`` (an approximate solution of ``H d = -g``) improved by iterative refinement
    (Golub & Van Loan, *Matrix Computations*, 4th ed., section 3.5.3): the residual is
    computed with the exact ``H`` and the approximate solve corrects for it, while that
    halves the residual (at most four rounds). The regularization a singular or nearly
    singular ``H`` needs (dependent rows, knowledge that pins cells) no longer limits how far
    Newton converges. Used by the LU step only (:func:`_schur_step` says why)."""
    size = float(np.max(np.abs(g), initial=0.0))
    misfit = float(np.max(np.abs(-g - hess(step)), initial=0.0))
    for _ in range(4):
        if misfit <= 1e-14 * max(size, 1e-300):
            break
        better = step + solve(-g - hess(step))
        if not np.all(np.isfinite(better)):
            break
        now = float(np.max(np.abs(-g - hess(better)), initial=0.0))
        if not now < 0.5 * misfit:
            break
        step, misfit = better, now
    return step


@dataclass(frozen=True)
class _Blocks:
    """The local rows grouped into per-bucket blocks, and which cell feeds which entry."""

    n_local: int
    local_rows: IntArray  # indices into eq of the local rows, in local order
    local_eq: sp.csr_matrix  # eq with the global rows zeroed
    groups: tuple[tuple[int, IntArray, IntArray], ...]  # (size, rows (n, size), offsets (n,))
    pair_cell: IntArray  # cell of every (row i, row j) contribution
    pair_flat: IntArray  # flat index of that entry in the concatenated blocks
    total: int
    max_size: int
    halves: tuple[IntArray, IntArray] | None  # cells of two halves of the buckets, or None

    @classmethod
    def build(cls, eq: sp.csr_matrix, eq_bucket: IntArray) -> _Blocks | None:
        local_rows = np.flatnonzero(eq_bucket >= 0)
        if local_rows.size == 0:
            return None
        bucket = eq_bucket[local_rows]
        order = np.argsort(bucket, kind="stable")
        rows_sorted = local_rows[order]
        b_sorted = bucket[order]
        starts = np.flatnonzero(np.r_[True, b_sorted[1:] != b_sorted[:-1]])
        sizes = np.diff(np.r_[starts, b_sorted.size])
        pos_sorted = np.arange(b_sorted.size) - np.repeat(starts, sizes)
        offsets = np.cumsum(np.r_[0, sizes[:-1] ** 2])
        block_of = np.repeat(np.arange(starts.size), sizes)
        # per eq row: block id and position (local rows only)
        blk = np.full(eq.shape[0], -1, dtype=np.int64)
        pos = np.full(eq.shape[0], -1, dtype=np.int64)
        blk[rows_sorted] = block_of
        pos[rows_sorted] = pos_sorted
        lmat = eq[local_rows].tocsc()
        # every pair of local rows sharing a cell
        counts = np.diff(lmat.indptr)
        rows_of = local_rows[lmat.indices]
        col_of = np.repeat(np.arange(counts.size), counts)
        pair_counts = counts**2
        pc = np.repeat(np.arange(counts.size), pair_counts)
        first = np.repeat(lmat.indptr[:-1], pair_counts)
        k_rep = np.repeat(counts, pair_counts)
        within = np.arange(pc.size) - np.repeat(np.cumsum(pair_counts) - pair_counts, pair_counts)
        ri = rows_of[first + within // k_rep]
        rj = rows_of[first + within % k_rep]
        del col_of
        bi = blk[ri]
        size_i = sizes[bi]
        flat = offsets[bi] + pos[ri] * size_i + pos[rj]
        groups: list[tuple[int, IntArray, IntArray]] = []
        for size in np.unique(sizes).tolist():
            which = np.flatnonzero(sizes == size)
            rows = rows_sorted[starts[which][:, None] + np.arange(size)[None, :]]
            groups.append((int(size), rows, offsets[which]))
        keep = np.zeros(eq.shape[0])
        keep[local_rows] = 1.0
        local_eq = (sp.diags(keep) @ eq).tocsr()
        local_eq.eliminate_zeros()
        halves = None
        if eq.shape[1] >= _HALVES_FROM and starts.size > 1:
            # a cell's bucket is that of its local rows (a cell no local row meets: -1)
            cell_bucket = np.full(eq.shape[1], -1, dtype=np.int64)
            met = np.flatnonzero(counts)
            cell_bucket[met] = eq_bucket[rows_of[lmat.indptr[met]]]
            ids, per = np.unique(cell_bucket, return_counts=True)
            cut = ids[min(int(np.searchsorted(np.cumsum(per), eq.shape[1] / 2)), ids.size - 2)]
            first_half = cell_bucket <= cut
            halves = (np.flatnonzero(first_half), np.flatnonzero(~first_half))
        return cls(
            int(local_rows.size),
            local_rows,
            local_eq,
            tuple(groups),
            pc.astype(np.int64),
            flat.astype(np.int64),
            int((sizes**2).sum()),
            int(sizes.max()),
            halves,
        )

    def pseudo_inverses(self, x: FloatArray, damping: float = 0.0) -> list[FloatArray]:
        flat = np.bincount(self.pair_flat, weights=x[self.pair_cell], minlength=self.total)
        out: list[FloatArray] = []
        for size, _, offs in self.groups:
            idx = offs[:, None] + np.arange(size * size)[None, :]
            h = flat[idx].reshape(-1, size, size)
            if damping:
                h = h + damping * np.eye(size)[None, :, :]
            if self.halves is not None and h.shape[0] > 1:
                # each block is inverted on its own: halving the batch changes no digit
                out.append(np.concatenate(list(_pool().map(_pinv, np.array_split(h, 2)))))
            else:
                out.append(_pinv(h))
        return out

    def sparse_pseudo_inverse(self, x: FloatArray, m: int, damping: float = 0.0) -> sp.csr_matrix:
        """``H_LL^+`` as an ``m x m`` sparse matrix over the eq rows (zero off the local
        blocks)."""
        rows_l: list[IntArray] = []
        cols_l: list[IntArray] = []
        vals_l: list[FloatArray] = []
        for (size, rows, _), p in zip(self.groups, self.pseudo_inverses(x, damping), strict=True):
            rows_l.append(np.repeat(rows, size, axis=1).ravel())
            cols_l.append(np.tile(rows, (1, size)).ravel())
            vals_l.append(p.ravel())
        return sp.csr_matrix(
            (np.concatenate(vals_l), (np.concatenate(rows_l), np.concatenate(cols_l))),
            shape=(m, m),
        )


def _pinv(h: FloatArray) -> FloatArray:
    """Pseudo-inverses of a batch of symmetric positive semi-definite blocks (eigenvalues
    below 1e-12 of a block's largest count as zero)."""
    w, v = np.linalg.eigh(h)
    cut = 1e-12 * np.maximum(w[:, -1:], 1e-300)
    inv_w = np.where(w > cut, 1.0 / np.where(w > cut, w, 1.0), 0.0)
    out: FloatArray = np.einsum("nij,nj,nkj->nik", v, inv_w, v)
    return out


def _pool() -> ThreadPoolExecutor:
    """Two threads where the process may use two cores, else one (same halves, same sums).
    One pool per process: a child forked after the pool started has none of its threads
    (work handed to the parent's pool would wait forever)."""
    pid = os.getpid()
    if pid not in _POOL:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        _POOL[pid] = ThreadPoolExecutor(max_workers=min(2, max(cores, 1)))
    return _POOL[pid]


def _schur_step(
    eq: sp.csr_matrix,
    local: npt.NDArray[np.bool_],
    know_free: sp.csr_matrix,
    x: FloatArray,
    g_eq: FloatArray,
    g_know: FloatArray,
    blocks: _Blocks,
    damping: float = 0.0,
) -> FloatArray | None:
    """The Newton step by the Schur complement. With ``L`` the local rows and ``G`` the
    global ones, ``S = G P G^T`` where ``P = X - X L^T H_LL^+ L X`` is block diagonal over the
    cells of each bucket, so nothing of size (local rows x global rows) is ever formed.

    Two faster variants were measured and rejected (docs/benchmarks.md): forming ``S`` as
    ``G X G^T - W^T H_LL^+ W`` (``W = L X G^T``, ``P`` never formed) solves 1,000
    single-attribute rules on Adult in 12 steps and 2.6 s instead of 15 and 3.6 s, but the
    subtraction loses digits where knowledge nearly pins cells: a 6-person release (buckets
    of 1, 4 and 1, five statements) stalled at residual 2e-9 after 1,000 steps, where this
    form converges in 8. Refining this step (:func:`_refined`, as the LU step is) moved the
    multipliers along the Hessian's null space on the 1,000 rules: Newton stalled at 3e-10."""
    import scipy.linalg as sla

    m = eq.shape[0]
    glob = sp.vstack([eq[np.flatnonzero(~local)], know_free], format="csr")
    n_g = glob.shape[0]
    hinv = blocks.sparse_pseudo_inverse(x, m, damping)
    g_loc = np.where(local, g_eq, 0.0)
    u = hinv @ g_loc
    out = np.zeros(m + know_free.shape[0])
    if n_g == 0:
        out[:m] = -u
        return out
    lx = blocks.local_eq.multiply(x[None, :]).tocsr()

    def schur(cells: IntArray | None) -> FloatArray:
        # G P G^T over some buckets' cells (P is block diagonal over the buckets)
        if cells is None:
            lx_c, glob_c, x_c = lx, glob, x
        else:
            lx_c, glob_c, x_c = lx[:, cells], glob[:, cells], x[cells]
        p = (sp.diags(x_c) - lx_c.T @ hinv @ lx_c).tocsr()
        return np.asarray((glob_c @ p @ glob_c.T).todense())

    if blocks.halves is None:
        s = schur(None)
    else:
        first, second = _pool().map(schur, blocks.halves)
        s = first + second
    s += damping * np.eye(n_g)
    g_glob = np.concatenate([g_eq[~local], g_know])
    rhs = -g_glob + glob @ (lx.T @ u)
    scale = max(float(np.max(np.diag(s), initial=1.0)), 1.0)
    d_g = None
    for reg in (1e-13, 1e-9):
        try:
            c = sla.cho_factor(s + np.eye(n_g) * (reg * scale), check_finite=False)
            d_g = sla.cho_solve(c, rhs, check_finite=False)
            break
        except np.linalg.LinAlgError:
            continue
    if d_g is None:
        d_g = np.linalg.lstsq(s, rhs, rcond=1e-12)[0]
    d_loc = -u - hinv @ (lx @ (glob.T @ d_g))
    n_pr = int((~local).sum())
    out[:m] = np.where(local, d_loc, 0.0)
    out[np.flatnonzero(~local)] = d_g[:n_pr]
    out[m:] = d_g[n_pr:]
    return out
