"""The paper's dynamic program, implemented straightforwardly (the benchmark baseline).

Martin et al. 2007, section 3.3: Minimize1 (Algorithm 1) memoized per bucket, then
Minimize2 (Algorithm 2) as a dynamic program over all buckets, budgets and the target
flag, in plain Python floats. Two corrections to the pseudo-code are applied, because the
algorithm as printed returns infinity (docs/paper-errata.md): Minimize2's base case returns
1 when every atom is placed and the target atom has been placed, and the initial call has
the flag *false* (target not yet placed). Minimize1 also stops at ``n_b`` people (the
printed recursion divides by zero for buckets smaller than the number of atoms).

No profile deduplication, no candidate pruning, no vectorization: this is what the engine
is measured against.
"""

from __future__ import annotations

from collections.abc import Sequence


def minimize1(
    sorted_counts: Sequence[int], k: int, memo: dict[tuple[int, int, int], float]
) -> float:
    """Algorithm 1, ``Minimize1(b, 0, k, k)``, memoized on ``(i, k_hat_i, k_hat)``."""
    n = sum(sorted_counts)
    prefix = [0]
    for c in sorted_counts:
        prefix.append(prefix[-1] + c)
    width = len(sorted_counts)

    def top(j: int) -> int:
        return prefix[min(j, width)]

    def rec(i: int, cap: int, rem: int) -> float:
        key = (i, cap, rem)
        if key in memo:
            return memo[key]
        p_min = 1.0
        if i < n:
            for ki in range(1, min(cap, rem) + 1):
                p = rec(i + 1, ki, rem - ki)
                p = max(n - i - top(ki), 0) / (n - i) * p
                p_min = min(p_min, p)
        memo[key] = p_min
        return p_min

    return rec(0, k, k)


def max_disclosure_dp(groups: Sequence[Sequence[int]], k: int) -> float:
    """Maximum disclosure w.r.t. k basic implications, by the paper's DP (Algorithms 1, 2)."""
    prepared = []
    for counts in groups:
        sc = sorted((int(c) for c in counts), reverse=True)
        memo: dict[tuple[int, int, int], float] = {}
        m1 = [minimize1(sc, h, memo) for h in range(k + 2)]
        prepared.append((sum(sc), sc[0], m1))
    n_buckets = len(prepared)
    inf = float("inf")
    # best[i][h][a]: Minimize2(i, h, a) — min over buckets i.. of the remaining h atoms,
    # a = target already placed in an earlier bucket
    nxt = [[inf, inf] for _ in range(k + 1)]
    nxt[0][1] = 1.0  # corrected base case: everything placed, target placed
    for i in range(n_buckets - 1, -1, -1):
        n_b, top_b, m1 = prepared[i]
        cur = [[inf, inf] for _ in range(k + 1)]
        for h in range(k + 1):
            for h_here in range(h + 1):
                u = m1[h_here]
                x = nxt[h - h_here][1]
                # a = true: the target is in an earlier bucket
                cur[h][1] = min(cur[h][1], u * x)
                # a = false: the target is in this bucket ...
                v = m1[h_here + 1]
                cur[h][0] = min(cur[h][0], v * x * n_b / top_b)
                # ... or in a later one
                cur[h][0] = min(cur[h][0], u * nxt[h - h_here][0])
        nxt = cur
    r_min = min(nxt[h][0] for h in range(k + 1))
    return 1.0 / (1.0 + r_min)
