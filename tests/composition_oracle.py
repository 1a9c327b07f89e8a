"""Exhaustive possible-worlds oracle for composition attacks, from the definitions only.

Written from Ganta et al., "Composition Attacks and Auxiliary Information in Data Privacy"
(KDD 2008, section 2.1, Definitions 6-9) and the random-worlds assumption (Martin et al. 2007,
section 2.2), with exact arithmetic; it knows
nothing of the engine's vectorized locating, its union-of-groups rule or its product
formula, so it can judge them.

A *scenario* is a set of people with exact QI values and true sensitive values, and a list
of releases. A release is a list of groups; each group has a descriptor the adversary sees
(a predicate on QI tuples, or for a bucketized release the multiset of exact QI tuples of its
records) and the published multiset of its members' sensitive values.

The adversary knows every person's QI values and who is in which release, but not which
record is whose beyond what the descriptors say. A *world* is, for every release, an
assignment of its people to its groups (each person to a group whose descriptor fits them,
group sizes as published; for a bucketized release the QI tuples of each bucket as
published) together with one sensitive value per person, such that every group's multiset
of values is the published one. All worlds are equally likely; ``Pr(s_i = v)`` is the share
of worlds in which person ``i`` has ``v``.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

QI = tuple[str, ...]


@dataclass(frozen=True)
class OGroup:
    members: tuple[int, ...]
    fits: Callable[[QI], bool] | None = None  # generalized: does the descriptor cover a QI tuple
    bucket: bool = False  # bucketized: the QI tuples of the members are published exactly


@dataclass(frozen=True)
class OScenario:
    qis: tuple[QI, ...]  # qis[p]: person p's QI tuple
    values: tuple[str, ...]  # values[p]: person p's true sensitive value
    releases: tuple[tuple[OGroup, ...], ...]

    def people(self, j: int) -> list[int]:
        return sorted(p for g in self.releases[j] for p in g.members)

    def multiset(self, j: int, g: int) -> Counter[str]:
        return Counter(self.values[p] for p in self.releases[j][g].members)

    def domain(self) -> list[str]:
        return sorted(set(self.values))


def _group_fits(s: OScenario, j: int, g: int, p: int) -> bool:
    group = s.releases[j][g]
    if group.bucket:
        return s.qis[p] in {s.qis[m] for m in group.members}
    assert group.fits is not None
    return group.fits(s.qis[p])


def _assignments(s: OScenario, j: int) -> list[tuple[frozenset[int], ...]]:
    """Every way to put release ``j``'s people into its groups that the adversary cannot
    rule out: descriptors fit, sizes (and, bucketized, QI tuple multisets) as published."""
    people = s.people(j)
    groups = s.releases[j]
    out: list[tuple[frozenset[int], ...]] = []
    sizes = [len(g.members) for g in groups]
    qi_sets = [Counter(s.qis[m] for m in g.members) for g in groups]

    def rec(k: int, left: frozenset[int], acc: list[frozenset[int]]) -> None:
        if k == len(groups):
            if not left:
                out.append(tuple(acc))
            return
        cand = [p for p in sorted(left) if _group_fits(s, j, k, p)]
        for combo in itertools.combinations(cand, sizes[k]):
            if groups[k].bucket and Counter(s.qis[p] for p in combo) != qi_sets[k]:
                continue
            rec(k + 1, left - set(combo), [*acc, frozenset(combo)])

    rec(0, frozenset(people), [])
    return out


def posterior(s: OScenario, target: int) -> dict[str, Fraction]:
    """``Pr(s_target = v)`` over all worlds (exact)."""
    everyone = sorted({p for j in range(len(s.releases)) for p in s.people(j)})
    domain = s.domain()
    per_release = [_assignments(s, j) for j in range(len(s.releases))]
    published = [
        [s.multiset(j, g) for g in range(len(s.releases[j]))] for j in range(len(s.releases))
    ]
    weight: Counter[str] = Counter()
    for combo in itertools.product(domain, repeat=len(everyone)):
        val = dict(zip(everyone, combo, strict=True))
        worlds = 1
        for j, options in enumerate(per_release):
            ok = 0
            for parts in options:
                if all(
                    Counter(val[p] for p in part) == published[j][g] for g, part in enumerate(parts)
                ):
                    ok += 1
            worlds *= ok
            if not worlds:
                break
        if worlds:
            weight[val[target]] += worlds
    total = sum(weight.values())
    return {v: Fraction(c, total) for v, c in weight.items() if c}


def possible_values(s: OScenario, target: int) -> set[str]:
    return set(posterior(s, target))


# ----------------------------------------------------- Algorithm 1, by its definitions


def located_groups(s: OScenario, j: int, qi: QI) -> list[int]:
    """Definition 6: the groups of release ``j`` whose descriptor fits ``qi``."""
    out = []
    for g, group in enumerate(s.releases[j]):
        if group.bucket:
            if qi in {s.qis[m] for m in group.members}:
                out.append(g)
        else:
            assert group.fits is not None
            if group.fits(qi):
                out.append(g)
    return out


def value_set(s: OScenario, j: int, groups: Sequence[int]) -> set[str]:
    """``Sensitive_value_set`` of the located groups (their union when several)."""
    return {s.values[p] for g in groups for p in s.releases[j][g].members}


@dataclass(frozen=True)
class Definitions:
    """Algorithm 1 / Definitions 7-9 for one individual."""

    used: tuple[int, ...]
    ea: dict[int, int]
    intersection: frozenset[str]
    ea_hat: int
    anon_drop: int
    confidence: Fraction


def algorithm1(s: OScenario, person_qi: QI, present: Sequence[bool]) -> Definitions | None:
    """Intersection attack for one individual present in the releases flagged ``present``
    (release 0 = the candidate). With an empty intersection, the subset of priors (with the
    candidate) whose intersection is smallest but non-empty (ties: more releases); None when
    the individual is not in the candidate and a prior at once."""
    sets = {
        j: value_set(s, j, located_groups(s, j, person_qi)) for j, ok in enumerate(present) if ok
    }
    if 0 not in sets or len(sets) < 2:
        return None
    priors = [j for j in sets if j != 0]
    best: tuple[int, ...] | None = None
    for size in range(len(priors), 0, -1):
        for combo in itertools.combinations(priors, size):
            chosen = (0, *combo)
            inter = frozenset.intersection(*(frozenset(sets[j]) for j in chosen))
            if not inter:
                continue
            if best is None:
                best = chosen
                continue
            prev = frozenset.intersection(*(frozenset(sets[j]) for j in best))
            if (len(inter), -len(chosen)) < (len(prev), -len(best)):
                best = chosen
        if best is not None and size == len(priors):
            break  # the full intersection is non-empty: the paper's definition applies
    if best is None:
        return None
    inter = frozenset.intersection(*(frozenset(sets[j]) for j in best))
    ea = {j: len(sets[j]) for j in best}
    return Definitions(
        used=best,
        ea=ea,
        intersection=inter,
        ea_hat=len(inter),
        anon_drop=min(ea.values()) - len(inter),
        confidence=Fraction(1, len(inter)),
    )


# ----------------------------------------------------------------- benign values


def pinned_to_harmful(d: Definitions, c: Fraction, benign: frozenset[str]) -> bool:
    """Ganta's measure with benign values: the adversary holds each value of ``S_i`` with
    confidence ``1 / |S_i|``; a breach at ``C`` needs a non-benign value among them and
    ``1 / |S_i| >= C``. A person whose ``S_i`` holds benign values only is pinned to a
    benign value: no breach."""
    return bool(d.intersection - benign) and d.confidence >= c


def harmful_posterior(s: OScenario, target: int, benign: frozenset[str]) -> Fraction:
    """The largest ``Pr(s_target = v)`` over non-benign ``v`` (0 when none is possible)."""
    return max((p for v, p in posterior(s, target).items() if v not in benign), default=Fraction(0))
