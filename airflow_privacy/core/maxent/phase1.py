"""Phase 1: is the knowledge consistent with the release, and which unknowns can be positive?

Both questions are linear programs over the constraint polytope
``{x >= 0 : A x = b, low <= K x <= high}`` (invariants ``A``, knowledge ``K``).

* **Support.** The maximum-entropy distribution is strictly positive exactly on the cells
  that *some* feasible distribution makes positive (the polytope's minimal face); on the
  others it is zero, and the dual would have to send a multiplier to minus infinity. The
  cells that can be positive come from one LP over the homogenized cone (Freund, Roundy
  and Todd's facial-reduction LP): maximize ``sum y`` subject to ``A z = b t``,
  ``low t <= K z <= high t``, ``0 <= y <= min(z, 1)``, ``t >= 1``. Scaling a relative-interior
  point makes every possibly-positive cell at least 1, so ``y_i = 1`` exactly on the support.
  The LP is infeasible exactly when the knowledge is.
* **Conflict.** When the knowledge is infeasible, an elastic LP (minimize the total amount
  by which knowledge rows are violated; the invariants are facts) certifies it, the rows
  with non-zero dual values form a conflicting set (the support of a Farkas certificate),
  and a deletion filter shrinks it to an irreducible one: every statement in the report is
  needed for the conflict.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Polytope:
    """``{x >= 0 : eq x = eq_rhs, low <= ineq x <= high}`` (sparse)."""

    eq: sp.csr_matrix
    eq_rhs: FloatArray
    ineq: sp.csr_matrix
    low: FloatArray
    high: FloatArray

    @property
    def n(self) -> int:
        return int(self.eq.shape[1])


class Infeasible(Exception):
    """Raised by :func:`support` when the polytope is empty."""


def support(poly: Polytope, candidates: IntArray | None = None) -> BoolArray:
    """Mask of the variables some feasible point makes positive; raises :class:`Infeasible`.

    Only the ``candidates`` (default: every variable) are examined; the others are reported
    positive (the caller knows them to be).
    """
    from scipy.optimize import linprog

    n = poly.n
    cand = np.arange(n, dtype=np.int64) if candidates is None else np.asarray(candidates)
    c_n = int(cand.size)
    pick = sp.csr_matrix((np.ones(c_n), (np.arange(c_n), cand)), shape=(c_n, n))
    a_eq = sp.hstack(
        [poly.eq, sp.csr_matrix((poly.eq.shape[0], c_n)), -sp.csr_matrix(poly.eq_rhs[:, None])],
        format="csr",
    )
    blocks = [sp.hstack([-pick, sp.identity(c_n, format="csr"), sp.csr_matrix((c_n, 1))])]
    if poly.ineq.shape[0]:
        # K z - high t <= 0, and -K z + low t <= 0 where low > 0 (K >= 0 makes low = 0 moot)
        up = np.isfinite(poly.high)
        if up.any():
            blocks.append(
                sp.hstack(
                    [
                        poly.ineq[up],
                        sp.csr_matrix((int(up.sum()), c_n)),
                        -sp.csr_matrix(poly.high[up][:, None]),
                    ],
                )
            )
        lo = poly.low > 0
        if lo.any():
            blocks.append(
                sp.hstack(
                    [
                        -poly.ineq[lo],
                        sp.csr_matrix((int(lo.sum()), c_n)),
                        sp.csr_matrix(poly.low[lo][:, None]),
                    ],
                )
            )
    a_ub = sp.vstack(blocks, format="csr")
    c = np.concatenate([np.zeros(n), -np.ones(c_n), [0.0]])
    bounds = [(0.0, None)] * n + [(0.0, 1.0)] * c_n + [(1.0, None)]
    res = linprog(
        c,
        A_ub=a_ub,
        b_ub=np.zeros(a_ub.shape[0]),
        A_eq=a_eq,
        b_eq=np.zeros(a_eq.shape[0]),
        bounds=bounds,
        method="highs",
    )
    if res.status == 2:
        raise Infeasible
    if res.status != 0:
        raise RuntimeError(f"phase-1 LP failed: {res.message}")
    out: BoolArray = np.ones(n, dtype=bool)
    out[cand] = res.x[n : n + c_n] > 0.5
    return out


def violation(poly: Polytope) -> tuple[float, FloatArray]:
    """Elastic LP: the least total violation of ``poly``'s knowledge rows (the invariants
    are kept exactly), and each knowledge row's dual value (non-zero on a conflicting set)."""
    from scipy.optimize import linprog

    n = poly.n
    k = int(poly.ineq.shape[0])
    m = poly.eq.shape[0]
    # variables: x (n), over (k), under (k); K x - over <= high ; -K x - under <= -low
    eye = sp.identity(k, format="csr")
    zk = sp.csr_matrix((k, k))
    a_ub = sp.vstack(
        [sp.hstack([poly.ineq, -eye, zk]), sp.hstack([-poly.ineq, zk, -eye])], format="csr"
    )
    b_ub = np.concatenate([poly.high, -poly.low])
    a_eq = sp.hstack([poly.eq, sp.csr_matrix((m, 2 * k))], format="csr")
    c = np.concatenate([np.zeros(n), np.ones(2 * k)])
    res = linprog(
        c,
        A_ub=a_ub if k else None,
        b_ub=b_ub if k else None,
        A_eq=a_eq,
        b_eq=poly.eq_rhs,
        bounds=(0, None),
        method="highs",
    )
    if res.status != 0:
        raise RuntimeError(f"elastic phase-1 LP failed: {res.message}")
    duals = np.zeros(k)
    if k:
        marg = np.asarray(res.ineqlin.marginals, dtype=np.float64)
        duals = np.abs(marg[:k]) + np.abs(marg[k:])
    return float(res.fun), duals


def conflict(
    n_rows: int,
    polytope_of: Callable[[list[int]], Polytope],
    tol: float,
    budget_seconds: float = 30.0,
) -> tuple[list[int], bool]:
    """A set of knowledge rows that, with the invariants, has no solution, and whether it
    is irreducible (every row needed). ``polytope_of(rows)`` builds the polytope with the
    invariants and only those knowledge rows. Returns ``([], True)`` when all rows together
    are feasible after all."""
    start = time.perf_counter()
    everything = list(range(n_rows))
    total, duals = violation(polytope_of(everything))
    if total <= tol:
        return [], True
    candidates = [r for r in everything if duals[r] > 1e-9]
    if not candidates or violation(polytope_of(candidates))[0] <= tol:
        candidates = everything
    keep = list(candidates)
    for r in list(candidates):
        if time.perf_counter() - start > budget_seconds:
            return keep, False
        trial = [x for x in keep if x != r]
        if trial and violation(polytope_of(trial))[0] > tol:
            keep = trial
    return keep, True
