"""Cells that every feasible distribution sets to zero, found without an LP.

The maximum-entropy optimum is positive exactly on the cells some feasible distribution
makes positive; the dual Newton method needs those forced zeros removed first (their
multipliers would run to minus infinity). Four sound rules, applied until nothing changes:

1. a knowledge row whose upper limit is 0 (``P(V | Q_v) = 0``, "Alice does not have s")
   zeroes all its cells;
2. a knowledge row whose lower limit is its *capacity* (``P(V | Q_v) = 1``: the people it is
   about hold, in total, that many records) zeroes those people's cells outside ``V``;
3. a statement ``P(V | Q_v) in [lo, hi]`` can hold at most ``min(n(Q_v, b), n(V, b))`` and
   at least ``max(0, n(Q_v, b) + n(V, b) - n_b)`` of its records in bucket ``b``; when ``lo``
   reaches the sum of the maxima (or ``hi`` the sum of the minima) every bucket is at that
   bound, which forces, per bucket: all of ``V`` onto ``Q_v`` people (the others' ``V`` cells
   are zero) or all ``Q_v`` people onto ``V`` (their other cells are zero); at the minimum,
   no ``Q_v`` person holds ``V`` or nobody outside ``Q_v`` holds a value outside ``V``.
   Mined rules often sit exactly there (a rule of support 3 whose three buckets each give
   ``s`` to the ``Q_v`` person);
4. within a bucket, the cells allowed so far form a transportation problem (the QI- and
   SA-invariants of the bucket, eqs. 4-5): a cell ``(q, s)`` can be positive iff some
   feasible flow is positive on it, i.e. iff a feasible flow already uses it or ``q`` and
   ``s`` lie in one strongly connected component of the flow's residual graph (an
   alternating cycle can shift mass onto it). One maximum flow and one SCC pass over all
   buckets at once (scipy.sparse.csgraph). If no feasible flow exists, the zeros are
   contradictory and the knowledge is infeasible.

Rule 4 looks at one bucket and ignores the knowledge rows' sums, so it is a relaxation: a
cell it rules out is forced zero in the full problem (sound), but a few zeros forced by
knowledge across buckets can remain; the solver then falls back to the phase-1 LP.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from airflow_privacy.core.maxent.constraints import ConstraintSystem

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class ZerosInfeasible(Exception):
    """The forced zeros leave some bucket without a way to place its records."""


def propagate(
    system: ConstraintSystem,
    cells: IntArray,
    knowledge_rows: sp.csr_matrix,
    live: BoolArray,
    rounds: int = 20,
) -> BoolArray:
    """Refine ``live`` (a mask over ``cells``, the sub-problem's columns of the system;
    ``knowledge_rows`` are the system's knowledge rows restricted to them) by the rules."""
    live = live.copy()
    k = knowledge_rows.shape[0]
    low, high = system.knowledge_low, system.knowledge_high
    indptr, indices = knowledge_rows.indptr, knowledge_rows.indices
    for r in np.flatnonzero(high <= 0):
        live[indices[indptr[r] : indptr[r + 1]]] = False
    group = system.cell_group[cells]
    svals = system.cell_s[cells]
    full = [
        i for i in range(k) if low[i] > 0 and low[i] >= system.knowledge_capacity[i] * (1 - 1e-12)
    ]
    if full:
        n_groups = len(system.groups)
        for i in full:
            covered = np.zeros(n_groups, dtype=bool)
            covered[system.knowledge_cover[i]] = True
            live &= ~(covered[group] & ~system.knowledge_values[i][svals])
    live = _at_bucket_bounds(system, cells, live)
    for _ in range(rounds):
        before = int(live.sum())
        live = _transport(system, cells, live)
        if int(live.sum()) == before:
            break
    return live


def _at_bucket_bounds(system: ConstraintSystem, cells: IntArray, live: BoolArray) -> BoolArray:
    """Rule 3, for the statements about the data distribution (their people's mass in each
    bucket is fixed by the QI-invariants)."""
    from airflow_privacy.core.maxent.knowledge import DistributionFact

    rel = system.release
    nb = rel.n_buckets
    sizes = rel.bucket_sizes.astype(np.float64)
    cq = system.cell_q[cells]
    cs = system.cell_s[cells]
    cb = system.cell_b[cells]
    q_of_group = system.group_q
    for r, fact in enumerate(system.facts):
        if not isinstance(fact, DistributionFact):
            continue
        lo, hi = system.knowledge_low[r], system.knowledge_high[r]
        classes = np.zeros(len(rel.qi_values), dtype=bool)
        classes[q_of_group[system.knowledge_cover[r]]] = True
        n_qv = np.bincount(rel.qb[:, 1], weights=rel.qb[:, 2] * classes[rel.qb[:, 0]], minlength=nb)
        vmask = system.knowledge_values[r]
        n_v = rel.sb[:, vmask].sum(axis=1).astype(np.float64)
        most = np.minimum(n_qv, n_v)
        least = np.maximum(0.0, n_qv + n_v - sizes)
        slack = 1e-9 * max(1.0, float(most.sum()))
        at_most = lo > 0 and lo >= most.sum() - slack
        at_least = hi <= least.sum() + slack
        if not (at_most or at_least):
            continue  # the usual case: the statement leaves room at both ends
        in_qv = classes[cq]
        in_v = vmask[cs]
        if at_most:
            v_full = n_v <= n_qv  # all of V goes to Q_v people
            qv_full = n_qv <= n_v  # all Q_v people take V
            live &= ~(v_full[cb] & in_v & ~in_qv)
            live &= ~(qv_full[cb] & in_qv & ~in_v)
        if at_least:
            none = least[cb] == 0  # no Q_v person holds V in such a bucket
            live &= ~(none & in_qv & in_v)
            live &= ~(~none & ~in_qv & ~in_v)  # else nobody else holds a value outside V
    return live


def _transport(system: ConstraintSystem, cells: IntArray, live: BoolArray) -> BoolArray:
    from scipy.sparse.csgraph import connected_components, maximum_flow

    rel = system.release
    nv = len(rel.values)
    qb_node = system.cell_qb[cells]
    sb_node = system.cell_b[cells] * nv + system.cell_s[cells]
    # class-level edges (q, b) -> (s, b); an edge is allowed when any of its cells is live
    edge_key = qb_node * (rel.n_buckets * nv) + sb_node
    keys, edge_of_cell = np.unique(edge_key, return_inverse=True)
    edge_of_cell = np.asarray(edge_of_cell).ravel()
    allowed = np.zeros(keys.size, dtype=bool)
    allowed[edge_of_cell[live]] = True
    if allowed.all():
        return live
    e_qb = keys // (rel.n_buckets * nv)
    e_sb = keys % (rel.n_buckets * nv)
    e_b = rel.qb[e_qb, 1]
    buckets = np.unique(e_b[~allowed])  # only buckets with a forbidden edge can lose more
    in_scope = np.isin(e_b, buckets)
    qb_ids = np.unique(e_qb[in_scope])
    sb_ids = np.unique(e_sb[in_scope])
    # nodes: 0 source, 1 sink, then qb nodes, then sb nodes
    q_pos = {int(v): 2 + i for i, v in enumerate(qb_ids.tolist())}
    s_base = 2 + qb_ids.size
    s_index = np.searchsorted(sb_ids, e_sb)
    use = in_scope & allowed
    e_from = np.array([q_pos[int(v)] for v in e_qb[use].tolist()], dtype=np.int64)
    e_to = s_base + s_index[use]
    supply = rel.qb[qb_ids, 2]
    demand = rel.sb[sb_ids // nv, sb_ids % nv]
    n_nodes = s_base + sb_ids.size
    big = int(rel.n_records) + 1
    rows = np.concatenate(
        [np.zeros(qb_ids.size, np.int64), e_from, s_base + np.arange(sb_ids.size)]
    )
    cols = np.concatenate([2 + np.arange(qb_ids.size), e_to, np.ones(sb_ids.size, np.int64)])
    caps = np.concatenate([supply, np.full(e_from.size, big), demand]).astype(np.int32)
    graph = sp.csr_matrix((caps, (rows, cols)), shape=(n_nodes, n_nodes), dtype=np.int32)
    res = maximum_flow(graph, 0, 1)
    if int(res.flow_value) < int(supply.sum()):
        raise ZerosInfeasible
    flow = res.flow.tocsr()
    f_edge = np.asarray(flow[e_from, e_to]).ravel()
    # residual graph on qb/sb nodes: forward along allowed edges, backward where flow > 0
    pos = f_edge > 0
    r_rows = np.concatenate([e_from, e_to[pos]])
    r_cols = np.concatenate([e_to, e_from[pos]])
    resid = sp.csr_matrix((np.ones(r_rows.size), (r_rows, r_cols)), shape=(n_nodes, n_nodes))
    _, label = connected_components(resid, directed=True, connection="strong")
    ok_edge = pos | (label[e_from] == label[e_to])
    # map back: edges in scope that are allowed but cannot carry mass are forced zero
    edge_ok = allowed.copy()
    use_idx = np.flatnonzero(use)
    edge_ok[use_idx] = ok_edge
    out: BoolArray = live & edge_ok[edge_of_cell]
    return out
