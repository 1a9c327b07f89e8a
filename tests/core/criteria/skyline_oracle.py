"""An exhaustive possible-worlds enumerator for the privacy skyline (checked itself in
``tests/core/criteria/test_skyline_oracle.py``).

Written from the definitions of Chen, LeFevre, Ramakrishnan, "Privacy Skyline: Privacy with
Multidimensional Adversarial Knowledge" (VLDB 2007; the talk's slides "Theoretical Framework",
"Probability Definition", "3D Knowledge Expression") only, with
exact arithmetic. It does not use the closed form the engine uses (no ``R``, no
hypergeometric ``H``, no congregation): a probability is a ratio of world counts.

* A bucketization is a list of count rows: ``counts[g][v]`` people of group ``g`` hold value
  ``v``. The worlds (reconstructions) are every assignment of each group's multiset of
  values to its people, groups independent, all equally likely.
* Knowledge ``L_{t,s}(l, k, m)`` about target person ``t = (g, p)`` and value ``s``:
  ``t[S] != x`` for each excluded ``x``; ``u[S] = y`` for each known person ``u``;
  ``v[S] = s -> t[S] = s`` for each implied person ``v``. ``t``, the ``u``'s and the ``v``'s
  are distinct people; at most ``l`` / ``k`` / ``m`` of each kind.
* The breach of a knowledge is ``Pr(t[S] = s | D*, K)``; the maximum breach at ``(l, k, m)``
  is the largest over every target, value and knowledge consistent with the release.

Three enumerators, checked against one another below:

``breach_table_all``     every person as target, every set of people, every value: the
                         definition verbatim, tiny inputs only;
``breach_table``         people in a group are exchangeable in the random-worlds model, so the
                         target is the group's first person and the known / implied people the
                         next ones; knowledge differs only in how many of each role sit in each
                         group and which values the known people hold. Still world counting;
``breach_by_groups``     groups are independent, so ``Pr(K)`` and ``Pr(K and t = s)`` factor
                         into per-group probabilities, counted by inclusion-exclusion over
                         the named people's values; every allocation of the roles to groups
                         is searched (exact min-product dynamic program over groups), which
                         reaches releases with many and large groups.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

Rows = tuple[tuple[int, ...], ...]
Person = tuple[int, int]
Point = tuple[int, int, int]


# --------------------------------------------------------------------------- worlds
def _key(counts: Sequence[Sequence[int]]) -> Rows:
    key = tuple(tuple(int(c) for c in row) for row in counts)
    assert key and all(sum(row) > 0 for row in key), "every group needs a person"
    assert len({len(row) for row in key}) == 1, "one count per value in every group"
    return key


def _arrangements(row: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every distinct sequence of value indices with multiset ``row``."""
    items = [v for v, c in enumerate(row) for _ in range(c)]
    return sorted(set(itertools.permutations(items)))


@dataclass(frozen=True)
class _Space:
    full: int
    masks: Mapping[tuple[int, int, int], int]  # (group, person, value) -> worlds bitmask


@lru_cache(maxsize=512)
def _space(key: Rows) -> _Space:
    worlds = list(itertools.product(*(_arrangements(row) for row in key)))
    masks: dict[tuple[int, int, int], int] = {}
    for i, world in enumerate(worlds):
        for g, people in enumerate(world):
            for p, v in enumerate(people):
                masks[(g, p, v)] = masks.get((g, p, v), 0) | (1 << i)
    return _Space((1 << len(worlds)) - 1, masks)


def posterior(
    counts: Sequence[Sequence[int]],
    target: Person,
    value: int,
    excluded: Iterable[int] = (),
    known: Mapping[Person, int] | None = None,
    implied: Iterable[Person] = (),
) -> Fraction | None:
    """``Pr(t[S] = value | D*, K)`` by counting worlds; ``None`` if ``K`` is impossible.

    ``K`` = ``t[S] != x`` for ``x`` in ``excluded``, ``u[S] = y`` for ``(u, y)`` in
    ``known``, ``v[S] = value -> t[S] = value`` for ``v`` in ``implied``.
    """
    key = _key(counts)
    sp = _space(key)
    known = dict(known or {})
    implied = list(implied)
    people = [target, *known, *implied]
    assert len(set(people)) == len(people), "t, the u's and the v's must be distinct"
    for g, p in people:
        assert 0 <= g < len(key) and 0 <= p < sum(key[g]), f"no person {(g, p)}"

    def atom(person: Person, v: int) -> int:
        return sp.masks.get((person[0], person[1], v), 0)

    t_s = atom(target, value)
    event = sp.full
    for x in excluded:
        event &= sp.full ^ atom(target, x)
    for u, y in known.items():
        event &= atom(u, y)
    for v in implied:
        event &= (sp.full ^ atom(v, value)) | t_s
    if event == 0:
        return None
    return Fraction((event & t_s).bit_count(), event.bit_count())


# ------------------------------------------------------------------ knowledge records
@dataclass(frozen=True)
class Knowledge:
    """One knowledge instance: target, value, excluded values, known people with their
    values, implied people (the ``v``'s)."""

    target: Person
    value: int
    excluded: tuple[int, ...]
    known: tuple[tuple[Person, int], ...]
    implied: tuple[Person, ...]

    @property
    def size(self) -> Point:
        return (len(self.excluded), len(self.known), len(self.implied))

    def breach(self, counts: Sequence[Sequence[int]]) -> Fraction | None:
        return posterior(
            counts, self.target, self.value, self.excluded, dict(self.known), self.implied
        )


Table = dict[Point, tuple[Fraction, Knowledge | None]]


def _at_most(exact: Table, bounds: Point) -> Table:
    """From "exactly (l, k, m) pieces" to "at most (l, k, m)": the running maximum."""
    out: Table = {}
    for l, k, m in itertools.product(*(range(b + 1) for b in bounds)):  # noqa: E741
        point = (l, k, m)
        best: tuple[Fraction, Knowledge | None] = (Fraction(0), None)
        for size, entry in exact.items():
            if all(a <= b for a, b in zip(size, point, strict=True)) and entry[0] > best[0]:
                best = entry
        out[point] = best
    return out


def _record(table: Table, kn: Knowledge, value: Fraction | None) -> None:
    if value is None:
        return
    old = table.get(kn.size)
    if old is None or value > old[0]:
        table[kn.size] = (value, kn)


def breach_table_all(counts: Sequence[Sequence[int]], bounds: Point) -> tuple[Table, Table]:
    """The definition verbatim: every target person, value, set of at most ``l`` excluded
    values, set of at most ``k`` known people with every combination of values, and set of
    at most ``m`` implied people. Returns (exactly-sized table, at-most table)."""
    key = _key(counts)
    n_values = len(key[0])
    people = [(g, p) for g, row in enumerate(key) for p in range(sum(row))]
    big_l, big_k, big_m = bounds
    exact: Table = {}
    for target in people:
        for s in range(n_values):
            others = [v for v in range(n_values) if v != s]
            for nl in range(min(big_l, len(others)) + 1):
                for excluded in itertools.combinations(others, nl):
                    rest = [q for q in people if q != target]
                    for nk in range(min(big_k, len(rest)) + 1):
                        for us in itertools.combinations(rest, nk):
                            for ys in itertools.product(range(n_values), repeat=nk):
                                known = tuple(zip(us, ys, strict=True))
                                free = [q for q in rest if q not in us]
                                for nm in range(min(big_m, len(free)) + 1):
                                    for vs in itertools.combinations(free, nm):
                                        kn = Knowledge(target, s, excluded, known, vs)
                                        _record(exact, kn, kn.breach(key))
    return exact, _at_most(exact, bounds)


def breach_table(
    counts: Sequence[Sequence[int]], bounds: Point, benign: Iterable[int] = ()
) -> tuple[Table, Table]:
    """Same maximum, people taken in order within each group (exchangeability): the
    target is person 0 of its group, then per group some known people (a multiset of
    values) and then some implied people. Returns (exactly-sized, at-most) tables.

    ``benign`` (value indices): a disclosure of a benign value is no breach, so the target
    value ``s`` ranges over the other values only (the knowledge may name any value)."""
    skip = frozenset(benign)
    key = _key(counts)
    n_values = len(key[0])
    sizes = [sum(row) for row in key]
    big_l, big_k, big_m = bounds
    exact: Table = {}

    def allocations(
        g: int, k_left: int, m_left: int, tg: int
    ) -> Iterable[tuple[tuple[tuple[Person, int], ...], tuple[Person, ...]]]:
        if g == len(key):
            yield (), ()
            return
        first = 1 if g == tg else 0
        room = sizes[g] - first
        for nk in range(min(k_left, room) + 1):
            for ys in itertools.combinations_with_replacement(range(n_values), nk):
                known = tuple(((g, first + i), y) for i, y in enumerate(ys))
                for nm in range(min(m_left, room - nk) + 1):
                    implied = tuple((g, first + nk + j) for j in range(nm))
                    for more_known, more_implied in allocations(
                        g + 1, k_left - nk, m_left - nm, tg
                    ):
                        yield known + more_known, implied + more_implied

    for tg in range(len(key)):
        for s in range(n_values):
            if key[tg][s] == 0 or s in skip:
                continue  # Pr(t[S] = s) = 0 whatever the knowledge, or s is benign
            others = [v for v in range(n_values) if v != s]
            for nl in range(min(big_l, len(others)) + 1):
                for excluded in itertools.combinations(others, nl):
                    for known, implied in allocations(0, big_k, big_m, tg):
                        kn = Knowledge((tg, 0), s, excluded, known, implied)
                        _record(exact, kn, kn.breach(key))
    return exact, _at_most(exact, bounds)


# ------------------------------------------------------------ group-product enumerator
def _falling(x: int, k: int) -> int:
    out = 1
    for i in range(k):
        out *= x - i
    return out


@lru_cache(maxsize=1 << 16)
def group_probability(
    row: tuple[int, ...], target_value: int | None, excluded: tuple[int, ...],
    known: tuple[int, ...], n_implied: int, value: int,
) -> Fraction:  # fmt: skip
    """Probability, over the uniformly random arrangements of one group, that: person 0 is
    the target (if ``target_value`` is not None: it holds ``target_value``; if it is ``-1``:
    it holds neither ``value`` nor an excluded value), the next people hold ``known``, and
    the next ``n_implied`` people do not hold ``value``.

    Counting, not a closed form: ``k`` named people hold named values in
    ``prod_v falling(n_v, k_v)`` of the ``falling(n, k)`` ordered ways, and the "does not
    hold" conditions are removed by inclusion-exclusion over the forbidden atoms.
    """
    n = sum(row)
    fixed: dict[int, int] = {}
    forbidden: list[tuple[int, int]] = []
    first = 0
    if target_value is not None:
        first = 1
        if target_value >= 0:
            fixed[0] = target_value
        else:
            forbidden += [(0, value), *((0, x) for x in excluded)]
    for i, y in enumerate(known):
        fixed[first + i] = y
    start = first + len(known)
    forbidden += [(start + j, value) for j in range(n_implied)]
    assert start + n_implied <= n, "more people than the group has"
    total = Fraction(0)
    for size in range(len(forbidden) + 1):
        for atoms in itertools.combinations(forbidden, size):
            assign = dict(fixed)
            if any(assign.setdefault(p, v) != v for p, v in atoms):
                continue  # one person, two values: impossible
            per_value = [0] * len(row)
            for v in assign.values():
                per_value[v] += 1
            ways = 1
            for v, k in enumerate(per_value):
                ways *= _falling(row[v], k)
            term = Fraction(ways, _falling(n, len(assign)))
            total += -term if size % 2 else term
    return total


def group_probability_by_worlds(
    row: tuple[int, ...], target_value: int | None, excluded: tuple[int, ...],
    known: tuple[int, ...], n_implied: int, value: int,
) -> Fraction:  # fmt: skip
    """:func:`group_probability` by listing the group's arrangements (small groups)."""
    first = 0 if target_value is None else 1
    arrangements = _arrangements(row)
    hits = 0
    for arr in arrangements:
        if target_value is not None:
            t = arr[0]
            if target_value >= 0 and t != target_value:
                continue
            if target_value < 0 and (t == value or t in excluded):
                continue
        if any(arr[first + i] != y for i, y in enumerate(known)):
            continue
        start = first + len(known)
        if any(arr[start + j] == value for j in range(n_implied)):
            continue
        hits += 1
    return Fraction(hits, len(arrangements))


def breach_by_groups(
    counts: Sequence[Sequence[int]], point: Point, benign: Iterable[int] = ()
) -> tuple[Fraction, tuple[int, int, tuple[int, ...]]]:
    """The maximum breach at ``point`` (at most ``l, k, m``) by per-group counting.

    For target group ``B`` and value ``s``: ``Pr(t = s, K) = a_B * prod_g e_g`` and
    ``Pr(t != s, K) = d_B * prod_g f_g`` (when ``t = s`` every implication holds; groups are
    independent), with ``a, d, e, f`` counted in each group's own arrangements. The breach
    is ``1 / (1 + (d_B / a_B) * prod_g (f_g / e_g))``; the product is minimized exactly over
    every allocation of known and implied people to groups (a min-product DP: the factors
    are non-negative and independent). Returns the breach and ``(B, s, excluded)``. Values in
    ``benign`` are never the target value (their disclosure is no breach); 0 if none is left.
    """
    skip = frozenset(benign)
    key = _key(counts)
    n_values = len(key[0])
    big_l, big_k, big_m = point
    best: tuple[Fraction, tuple[int, int, tuple[int, ...]]] = (Fraction(0), (0, 0, ()))

    def group_options(
        g: int, s: int, tg: int, excluded: tuple[int, ...]
    ) -> dict[tuple[int, int], Fraction | None]:
        """Per (known, implied) count in group g: least factor (None = impossible)."""
        row = key[g]
        size = sum(row)
        first = 1 if g == tg else 0
        out: dict[tuple[int, int], Fraction | None] = {}
        for nk in range(min(big_k, size - first) + 1):
            for ys in itertools.combinations_with_replacement(range(n_values), nk):
                for nm in range(min(big_m, size - first - nk) + 1):
                    if g == tg:
                        a = group_probability(row, s, excluded, ys, 0, s)
                        d = group_probability(row, -1, excluded, ys, nm, s)
                    else:
                        a = group_probability(row, None, (), ys, 0, s)
                        d = group_probability(row, None, (), ys, nm, s)
                    if a == 0:
                        continue  # K and t = s impossible: no breach from this knowledge
                    factor = d / a
                    old = out.get((nk, nm))
                    if old is None or factor < old:
                        out[(nk, nm)] = factor
        return out

    for tg in range(len(key)):
        for s in range(n_values):
            if key[tg][s] == 0 or s in skip:
                continue
            others = [v for v in range(n_values) if v != s]
            for nl in range(min(big_l, len(others)) + 1):
                for excluded in itertools.combinations(others, nl):
                    # dp[(k, m)] = least product over the groups so far
                    dp: dict[tuple[int, int], Fraction] = {}
                    target_opts = group_options(tg, s, tg, excluded)
                    for km, f in target_opts.items():
                        if f is not None and (km not in dp or f < dp[km]):
                            dp[km] = f
                    for g in range(len(key)):
                        if g == tg:
                            continue
                        opts = group_options(g, s, tg, excluded)
                        nxt: dict[tuple[int, int], Fraction] = {}
                        for (k1, m1), f1 in dp.items():
                            for (k2, m2), f2 in opts.items():
                                if f2 is None or k1 + k2 > big_k or m1 + m2 > big_m:
                                    continue
                                km = (k1 + k2, m1 + m2)
                                f = f1 * f2
                                if km not in nxt or f < nxt[km]:
                                    nxt[km] = f
                        dp = nxt
                    if not dp:
                        continue
                    ratio = min(dp.values())
                    value = 1 / (1 + ratio)
                    if value > best[0]:
                        best = (value, (tg, s, excluded))
    return best


# ------------------------------------------------------------------ the oracle's checks
