"""Exhaustive possible-worlds oracle for worst-case background knowledge.

Written from the definitions of Martin et al. 2007 (sections 2.1-2.3) only, with exact
arithmetic; it deliberately does not use the paper's algorithms (no Lemma 12 formula, no
Minimize1/Minimize2), so it can judge an engine that does.

* A bucketization is a list of count lists: ``counts[g][v]`` is the number of people of group
  ``g`` holding value ``v`` (value labels are kept separately, default ``v0, v1, ...``).
* The sample space (random-worlds assumption): every distinct assignment of each group's
  sensitive multiset to the group's people, groups independent, all equally likely. A world is
  a tuple with, per group, the tuple of value indices of its people.
* An atom ``(group, person, value)`` is the event "person ``person`` of ``group`` has value
  ``value``" (0-based indices).
* Events are represented as bitmasks (Python ints) over the enumerated world list, so a
  probability is a ratio of popcounts and every result is an exact :class:`Fraction`.

Only tiny inputs are feasible: the number of worlds is a product of multinomials, and the
basic-implication search enumerates every distinct basic implication.

*Benign values* (``benign``: a set of value indices): a disclosure of a benign value is not
a breach, so the maximum is taken over target atoms whose value is not benign only (Martin
et al. define disclosure as the maximum over target atoms; the restriction applies to the
targets alone: the knowledge may still name benign values). With no target left the
maximum disclosure is 0.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

World = tuple[tuple[int, ...], ...]
Counts = Sequence[Sequence[int]]
CountsKey = tuple[tuple[int, ...], ...]
OAtom = tuple[int, int, int]
"""An atom ``(group, person, value_index)``."""
Implication = tuple[tuple[OAtom, ...], tuple[OAtom, ...]]
"""A basic implication ``(antecedent atoms, consequent atoms)``: AND antecedent -> OR consequent."""


# --------------------------------------------------------------------------- sample space


def _key(counts: Counts) -> CountsKey:
    key = tuple(tuple(int(c) for c in row) for row in counts)
    if not key:
        raise ValueError("a bucketization needs at least one group")
    width = len(key[0])
    for g, row in enumerate(key):
        if len(row) != width:
            raise ValueError("every group must have one count per value")
        if any(c < 0 for c in row):
            raise ValueError("counts must be non-negative")
        if sum(row) == 0:
            raise ValueError(f"group {g} has no people")
    return key


def default_labels(counts: Counts) -> list[str]:
    """Value labels ``v0, v1, ...`` (the ones ``Bucketization.from_group_counts`` uses)."""
    return [f"v{j}" for j in range(len(counts[0]))]


def _group_assignments(row: tuple[int, ...]) -> list[tuple[int, ...]]:
    """All distinct sequences of value indices with multiset ``row`` (lexicographic)."""
    out: list[tuple[int, ...]] = []
    left = list(row)
    n = sum(row)
    cur: list[int] = []

    def rec() -> None:
        if len(cur) == n:
            out.append(tuple(cur))
            return
        for v, c in enumerate(left):
            if c:
                left[v] -= 1
                cur.append(v)
                rec()
                cur.pop()
                left[v] += 1

    rec()
    return out


@lru_cache(maxsize=256)
def _worlds(key: CountsKey) -> tuple[World, ...]:
    per_group = [_group_assignments(row) for row in key]
    return tuple(itertools.product(*per_group))


def worlds(counts: Counts) -> list[World]:
    """Every distinct table consistent with the bucketization (the sample space).

    Each world is equally likely: within a group every distinct assignment of the group's
    multiset of values to its people has the same number of underlying permutations, and
    groups are independent.
    """
    return list(_worlds(_key(counts)))


def probability(
    counts: Counts,
    event: Callable[[World], bool],
    given: Callable[[World], bool] | None = None,
) -> Fraction:
    """``Pr(event | B and given)`` by counting worlds. Raises if ``given`` is impossible."""
    space = _worlds(_key(counts))
    cond = [w for w in space if given is None or given(w)]
    if not cond:
        raise ValueError("the condition is inconsistent with the bucketization")
    return Fraction(sum(1 for w in cond if event(w)), len(cond))


def holds(world: World, atom: OAtom) -> bool:
    """Whether ``atom`` is true in ``world``."""
    g, p, v = atom
    return world[g][p] == v


def all_atoms(counts: Counts) -> list[OAtom]:
    """Every atom: every person of every group with every value (including absent values)."""
    key = _key(counts)
    width = len(key[0])
    return [(g, p, v) for g, row in enumerate(key) for p in range(sum(row)) for v in range(width)]


def format_atom(atom: OAtom, labels: Sequence[str] | None = None) -> str:
    """``t[g1.p0] = v2`` (for messages of failing tests)."""
    g, p, v = atom
    value = labels[v] if labels is not None else f"v{v}"
    return f"t[g{g}.p{p}] = {value}"


def _check_atom(key: CountsKey, atom: OAtom) -> None:
    g, p, v = atom
    if not (0 <= g < len(key) and 0 <= p < sum(key[g]) and 0 <= v < len(key[0])):
        raise ValueError(f"atom {atom} does not name a person and value of the bucketization")


# --------------------------------------------------------------------------- bitmask events


@dataclass(frozen=True)
class _Space:
    n_worlds: int
    full: int
    atoms: tuple[OAtom, ...]
    masks: dict[OAtom, int]


@lru_cache(maxsize=256)
def _space(key: CountsKey) -> _Space:
    space = _worlds(key)
    atoms = tuple(
        (g, p, v) for g, row in enumerate(key) for p in range(sum(row)) for v in range(len(row))
    )
    masks = dict.fromkeys(atoms, 0)
    for i, w in enumerate(space):
        bit = 1 << i
        for g, assignment in enumerate(w):
            for p, v in enumerate(assignment):
                masks[(g, p, v)] |= bit
    return _Space(len(space), (1 << len(space)) - 1, atoms, masks)


def _ratio(num: int, den: int) -> Fraction:
    return Fraction(num, den)


def _better(num: int, den: int, best_num: int, best_den: int) -> bool:
    """``num/den > best_num/best_den`` (positive denominators)."""
    return num * best_den > best_num * den


@dataclass(frozen=True)
class OracleResult:
    """A maximum disclosure and one argmax: the atom ``target`` whose posterior is maximal
    and the atoms of the knowledge that attain it (read ``A_i -> target`` for
    :func:`max_disclosure_simple`, ``not A_i`` for :func:`max_disclosure_negations`)."""

    value: Fraction
    target: OAtom
    atoms: tuple[OAtom, ...]


@dataclass(frozen=True)
class BasicResult:
    """A maximum disclosure over conjunctions of basic implications and one argmax: the
    atom ``target`` and at most ``k`` basic implications (fewer when fewer suffice)."""

    value: Fraction
    target: OAtom
    implications: tuple[Implication, ...]


# --------------------------------------------------------------------------- posteriors


def posterior_implications(counts: Counts, target: OAtom, atoms: Iterable[OAtom]) -> Fraction:
    """``Pr(target | B and AND_i (atoms[i] -> target))``; raises if the knowledge is
    inconsistent with the bucketization (probability zero)."""
    key = _key(counts)
    sp = _space(key)
    _check_atom(key, target)
    t = sp.masks[target]
    x = sp.full
    for a in atoms:
        _check_atom(key, a)
        x &= (sp.full ^ sp.masks[a]) | t
    if x == 0:
        raise ValueError("the knowledge is inconsistent with the bucketization")
    return _ratio((x & t).bit_count(), x.bit_count())


def posterior_negations(counts: Counts, target: OAtom, atoms: Iterable[OAtom]) -> Fraction:
    """``Pr(target | B and AND_i not atoms[i])``; raises if the knowledge is inconsistent
    with the bucketization (probability zero)."""
    key = _key(counts)
    sp = _space(key)
    _check_atom(key, target)
    x = sp.full
    for a in atoms:
        _check_atom(key, a)
        x &= sp.full ^ sp.masks[a]
    if x == 0:
        raise ValueError("the knowledge is inconsistent with the bucketization")
    return _ratio((x & sp.masks[target]).bit_count(), x.bit_count())


def posterior_basic(counts: Counts, target: OAtom, implications: Iterable[Implication]) -> Fraction:
    """``Pr(target | B and AND of the basic implications)`` (direct world counting)."""
    key = _key(counts)
    imps = list(implications)
    for ant, cons in imps:
        if not ant or not cons:
            raise ValueError("a basic implication needs m >= 1 and n >= 1 atoms")
        for a in (*ant, *cons):
            _check_atom(key, a)
    _check_atom(key, target)

    def knowledge(w: World) -> bool:
        return all(
            not all(holds(w, a) for a in ant) or any(holds(w, b) for b in cons)
            for ant, cons in imps
        )

    return probability(key, lambda w: holds(w, target), knowledge)


# --------------------------------------------------------------------------- maxima


def _best_over_targets(x: int, targets: Sequence[tuple[OAtom, int]]) -> tuple[int, OAtom]:
    best = -1
    arg = targets[0][0]
    for atom, m in targets:
        c = (x & m).bit_count()
        if c > best:
            best, arg = c, atom
    return best, arg


def _distinct_targets(sp: _Space, benign: Iterable[int] = ()) -> list[tuple[OAtom, int]]:
    """One representative atom per distinct non-empty event (first in atom order), among
    the atoms whose value is not in ``benign``."""
    skip = frozenset(benign)
    seen: dict[int, OAtom] = {}
    for a in sp.atoms:
        m = sp.masks[a]
        if m and m not in seen and a[2] not in skip:
            seen[m] = a
    return [(a, m) for m, a in seen.items()]


_NO_TARGET: OAtom = (-1, -1, -1)
"""The ``target`` of a result when every present value is benign (disclosure 0)."""


def max_disclosure_none(counts: Counts) -> OracleResult:
    """k = 0: ``max_{p, s} Pr(t_p[S] = s | B)`` by world counting."""
    return max_disclosure_simple(counts, 0)


def _knowledge_sets(sp: _Space, k: int) -> Iterable[tuple[tuple[OAtom, ...], int]]:
    """Every set of at most ``k`` atoms with the event ``AND_i not A_i``.

    Atoms with the same event are interchangeable, and atoms with an empty event (a value
    absent from the person's group) contribute ``not A_i = true``; only one representative
    per distinct non-empty event is used. Sets are drawn without repetition: a repeated atom
    adds nothing.
    """
    reps = _distinct_targets(sp)
    for size in range(k + 1):
        for combo in itertools.combinations(reps, size):
            x = sp.full
            for _, m in combo:
                x &= sp.full ^ m
            yield tuple(a for a, _ in combo), x


def max_disclosure_simple(counts: Counts, k: int, benign: Iterable[int] = ()) -> OracleResult:
    """``max Pr(A | B and AND_i (A_i -> A))`` over atoms ``A`` and ``k`` atoms ``A_i``.

    The ``A_i`` range over all people (including ``A``'s own person) and all values. A
    multiset of ``k`` atoms is equivalent to the set of its distinct atoms, and a set of
    fewer than ``k`` atoms can be padded with ``A`` itself (``A -> A`` is a tautology), so
    sets of at most ``k`` atoms are enumerated.
    """
    if k < 0:
        raise ValueError("k must be >= 0")
    sp = _space(_key(counts))
    targets = _distinct_targets(sp, benign)
    if not targets:
        return OracleResult(Fraction(0), _NO_TARGET, ())
    best_num, best_den = -1, 1
    best: tuple[OAtom, tuple[OAtom, ...]] = (targets[0][0], ())
    for atoms, neg in _knowledge_sets(sp, k):
        for atom, m in targets:
            # AND_i (A_i -> A) = A or AND_i not A_i
            num = m.bit_count()
            den = num + (neg & ~m).bit_count()
            if _better(num, den, best_num, best_den):
                best_num, best_den = num, den
                best = (atom, atoms)
    return OracleResult(_ratio(best_num, best_den), best[0], best[1])


def max_disclosure_negations(counts: Counts, k: int, benign: Iterable[int] = ()) -> OracleResult:
    """``max Pr(A | B and AND_i not N_i)`` over atoms ``A`` and sets of at most ``k`` atoms
    ``N_i`` (any people), over knowledge consistent with the bucketization."""
    if k < 0:
        raise ValueError("k must be >= 0")
    sp = _space(_key(counts))
    targets = _distinct_targets(sp, benign)
    if not targets:
        return OracleResult(Fraction(0), _NO_TARGET, ())
    best_num, best_den = -1, 1
    best: tuple[OAtom, tuple[OAtom, ...]] = (targets[0][0], ())
    for atoms, x in _knowledge_sets(sp, k):
        if x == 0:
            continue
        den = x.bit_count()
        num, atom = _best_over_targets(x, targets)
        if _better(num, den, best_num, best_den):
            best_num, best_den = num, den
            best = (atom, atoms)
    return OracleResult(_ratio(best_num, best_den), best[0], best[1])


# --------------------------------------------------------------------------- basic implications


def _antecedents(key: CountsKey, sp: _Space) -> dict[int, tuple[OAtom, ...]]:
    """Distinct events of satisfiable antecedents (non-empty conjunctions of atoms).

    A conjunction with two different values for one person, or with a value set no world
    realizes, is unsatisfiable; its implication is a tautology, the same event as ``A -> A``,
    which is kept. So only partial assignments (at most one value per person) with a
    non-empty event are enumerated.
    """
    people = [(g, p) for g, row in enumerate(key) for p in range(sum(row))]
    width = len(key[0])
    out: dict[int, tuple[OAtom, ...]] = {}

    def rec(i: int, mask: int, chosen: tuple[OAtom, ...]) -> None:
        if i == len(people):
            if chosen and mask not in out:
                out[mask] = chosen
            return
        rec(i + 1, mask, chosen)
        g, p = people[i]
        for v in range(width):
            m = mask & sp.masks[(g, p, v)]
            if m:
                rec(i + 1, m, (*chosen, (g, p, v)))

    rec(0, sp.full, ())
    return out


def _consequents(sp: _Space, within: int) -> dict[int, tuple[OAtom, ...]]:
    """Distinct events ``within and (OR of a non-empty set of atoms)``.

    An implication ``P -> Q`` is the event ``not P or (P and Q)``, so only the part of the
    consequent inside the antecedent's event ``P`` matters; enumerating the distinct unions
    of the atoms' restrictions to ``P`` visits every distinct implication with antecedent
    ``P`` once.
    """
    out: dict[int, tuple[OAtom, ...]] = {}
    for a in sp.atoms:
        m = sp.masks[a] & within
        new: dict[int, tuple[OAtom, ...]] = {}
        if m not in out:
            new[m] = (a,)
        for u, atoms in out.items():
            w = u | m
            if w not in out and w not in new:
                new[w] = (*atoms, a)
        out.update(new)
    return out


@lru_cache(maxsize=64)
def _implications(key: CountsKey) -> tuple[tuple[int, Implication], ...]:
    """Every distinct event of a basic implication, with one representative formula."""
    sp = _space(key)
    out: dict[int, Implication] = {}
    for pm, pa in _antecedents(key, sp).items():
        not_p = sp.full ^ pm
        for qm, qa in _consequents(sp, pm).items():
            m = not_p | qm
            if m not in out:
                out[m] = (pa, qa)
    return tuple(out.items())


def count_basic_implications(counts: Counts) -> int:
    """Number of distinct events expressible by one basic implication (size diagnostic)."""
    return len(_implications(_key(counts)))


def max_disclosure_basic(counts: Counts, k: int, benign: Iterable[int] = ()) -> BasicResult:
    """The true maximum over all conjunctions of ``k`` basic implications.

    Every basic implication ``(AND A_i) -> (OR B_j)`` is turned into its event (a set of
    worlds); the events reachable as intersections of ``j <= k`` of them are enumerated
    (deduplicated), and the maximum of ``|X and A| / |X|`` is taken over non-empty reachable
    ``X`` and all atoms ``A``. ``A -> A`` (the sure event) is among the implications, so
    fewer than ``k`` implications are covered. Exponential: tiny inputs only.
    """
    if k < 0:
        raise ValueError("k must be >= 0")
    key = _key(counts)
    sp = _space(key)
    targets = _distinct_targets(sp, benign)
    if not targets:
        return BasicResult(Fraction(0), _NO_TARGET, ())
    imps = _implications(key) if k else ()
    reach: dict[int, tuple[Implication, ...]] = {sp.full: ()}
    for _ in range(k):
        nxt = dict(reach)
        for x, why in reach.items():
            for m, imp in imps:
                y = x & m
                if y and y not in nxt:
                    nxt[y] = (*why, imp)
        reach = nxt
    best_num, best_den = -1, 1
    best: tuple[OAtom, tuple[Implication, ...]] = (targets[0][0], ())
    for x, why in reach.items():
        den = x.bit_count()
        num, atom = _best_over_targets(x, targets)
        if _better(num, den, best_num, best_den):
            best_num, best_den = num, den
            best = (atom, why)
    return BasicResult(_ratio(best_num, best_den), best[0], best[1])
