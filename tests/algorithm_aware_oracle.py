"""Brute-force oracle for algorithm-aware disclosure, written from the definitions of Zhang,
Jajodia, Brodsky (CCS 2007, section 2) and the criteria's papers, independent of
``airflow_privacy.core.algorithm_aware`` (it imports nothing from the project).

* ``D``: every distinct arrangement of the table's multiset of sensitive values over the
  people (the adversary knows the QIs and, from any release, the multiset).
* A candidate is a list ``groups[p]``; the table it shows on world ``y`` is, per group, the
  sorted tuple of the group's values.
* Naive DDF: the first candidate whose table passes the criterion.
* Safe DDF: go through the candidates in order; the worlds not released yet are split by
  the table each shows through candidate ``i``; a part is released at ``i`` when the
  criterion holds on the posterior over that part.
* Posterior over a set of worlds ``S``: ``Pr(t holds v) = |{y in S: y_t = v}| / |S|``, exact
  fractions.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

World = tuple[str, ...]
Dist = dict[str, Fraction]
Criterion = tuple[str, dict[str, Any]]


def all_worlds(values: Sequence[str]) -> list[World]:
    return sorted(set(itertools.permutations(values)))


def shown(groups: Sequence[int], world: World) -> tuple[tuple[int, tuple[str, ...]], ...]:
    by_group: dict[int, list[str]] = defaultdict(list)
    for g, v in zip(groups, world, strict=True):
        by_group[g].append(v)
    return tuple(sorted((g, tuple(sorted(vs))) for g, vs in by_group.items()))


def _dist(vals: Sequence[str]) -> Dist:
    c = Counter(vals)
    return {v: Fraction(k, len(vals)) for v, k in c.items()}


def dist_passes(name: str, params: dict[str, Any], d: Dist, overall: Dist) -> bool:
    """The l-diversity family / t-closeness condition on one distribution."""
    probs = sorted((p for p in d.values() if p > 0), reverse=True)
    if name == "distinct-l-diversity":
        return bool(len(probs) >= params["l"])
    if name == "entropy-l-diversity":
        h = -sum(float(p) * math.log(float(p)) for p in probs)
        return bool(math.exp(h) >= params["l"] * (1 - 1e-9))
    if name == "recursive-cl-diversity":
        l = int(params["l"])  # noqa: E741
        return probs[0] < Fraction(params["c"]) * sum(probs[l - 1 :], Fraction(0))
    if name == "t-closeness":
        keys = set(d) | set(overall)
        emd = sum((abs(d.get(k, Fraction(0)) - overall.get(k, Fraction(0))) for k in keys),
                  Fraction(0)) / 2  # fmt: skip
        return emd <= Fraction(params["t"]).limit_denominator(10**9)
    raise ValueError(name)


def table_passes(crit: Criterion, groups: Sequence[int], world: World) -> bool:
    name, params = crit
    by_group: dict[int, list[str]] = defaultdict(list)
    for g, v in zip(groups, world, strict=True):
        by_group[g].append(v)
    if name == "k-anonymity":
        return all(len(vs) >= params["k"] for vs in by_group.values())
    overall = _dist(world)
    return all(dist_passes(name, params, _dist(vs), overall) for vs in by_group.values())


def posterior(worlds: Sequence[World]) -> list[Dist]:
    n = len(worlds[0])
    out = []
    for t in range(n):
        c = Counter(y[t] for y in worlds)
        out.append({v: Fraction(k, len(worlds)) for v, k in c.items()})
    return out


def set_passes(crit: Criterion, groups: Sequence[int], worlds: Sequence[World]) -> bool:
    name, params = crit
    if name == "k-anonymity":
        return bool(min(Counter(groups).values()) >= params["k"])
    overall = _dist(worlds[0])
    return all(dist_passes(name, params, d, overall) for d in posterior(worlds))


def naive_release(cands: Sequence[Sequence[int]], crit: Criterion, world: World) -> int | None:
    for i, g in enumerate(cands):
        if table_passes(crit, g, world):
            return i
    return None


def naive_disclosure_set(
    cands: Sequence[Sequence[int]], crit: Criterion, x: World, r: int
) -> list[World]:
    """Worlds showing the same table through ``T_r`` on which every earlier table fails."""
    key = shown(cands[r], x)
    return [
        y for y in all_worlds(x)
        if shown(cands[r], y) == key
        and not any(table_passes(crit, cands[j], y) for j in range(r))
    ]  # fmt: skip


def safe_ddf(
    cands: Sequence[Sequence[int]], crit: Criterion, x: World, limit: int | None = None
) -> dict[World, int]:
    """World -> candidate the safe DDF releases (absent: nothing released). With ``limit``,
    a block of more than ``limit`` worlds (all of ``D`` showing that table) is declined."""
    released: dict[World, int] = {}
    every = all_worlds(x)
    for i, g in enumerate(cands):
        parts: dict[Any, list[World]] = defaultdict(list)
        block = Counter(shown(g, y) for y in every)
        for y in every:
            if y not in released:
                parts[shown(g, y)].append(y)
        for key, ys in parts.items():
            if limit is not None and block[key] > limit:
                continue
            if set_passes(crit, g, ys):
                for y in ys:
                    released[y] = i
    return released


def safe_disclosure_set(
    cands: Sequence[Sequence[int]], crit: Criterion, x: World, r: int, limit: int | None = None
) -> list[World]:
    """Worlds showing the same table through ``T_r`` that the safe DDF does not release
    before ``r``."""
    released = safe_ddf(cands, crit, x, limit)
    key = shown(cands[r], x)
    return [
        y for y in all_worlds(x)
        if shown(cands[r], y) == key and released.get(y, len(cands)) >= r
    ]  # fmt: skip
