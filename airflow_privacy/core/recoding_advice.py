"""The way forward from a failed criterion by a coarser recoding of the release: the fewest
further generalization steps, on the group columns whose hierarchies are given, after which
the criterion passes, re-checked on the merged groups.

A released label of a column is at some level ``L`` of the column's hierarchy (the lowest
level holding every label the release shows). Raising the column to ``L + d`` maps each label
to its ancestor (the hierarchy's level ``L + d`` label of any original value under it: a
proper hierarchy gives one) and merges the groups that then share every label: their
sensitive counts add (and their population classes, for k-map / delta-presence). This is
what re-running the lattice anonymizer at that node would release, computed from the
release's own counts: no original record is read.

The search walks the nodes of the lattice above the release's node by the number of steps
(breadth first), evaluates the criterion on each, and stops at the first size that has a
passing node: among those, the one that keeps the most groups. At most :data:`MAX_NODES`
nodes are evaluated (none is suggested beyond). The advice names the columns, their levels
and a few label mappings, and its cost: groups merged. (Sweeney 2002 and LeFevre et al. 2005
generalize full domains this way; the lattice anonymizer, docs/anonymizers.md.)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from airflow_privacy.core.advice import Advice

if TYPE_CHECKING:
    from airflow_privacy.core.composition.release import PublishedRelease
    from airflow_privacy.core.criteria.base import Criterion
    from airflow_privacy.core.hierarchy import Hierarchy
    from airflow_privacy.core.model import Bucketization

MAX_NODES = 200
MAX_STEPS = 8


def current_level(labels: Sequence[str], hierarchy: Hierarchy) -> int | None:
    """The lowest level of ``hierarchy`` whose labels include every one of ``labels`` (None:
    no level does)."""
    shown = set(labels)
    for level in range(hierarchy.height):
        if shown <= set(hierarchy.levels[level].values()):
            return level
    return None


def ancestors(hierarchy: Hierarchy, level: int, higher: int) -> dict[str, str] | None:
    """Each label of ``level`` -> its label at ``higher`` (None when a label has two: not a
    hierarchy one can coarsen by)."""
    out: dict[str, str] = {}
    for value, label in hierarchy.levels[level].items():
        up = hierarchy.levels[higher][value]
        if out.setdefault(label, up) != up:
            return None
    return out


def coarsened(b: Bucketization, maps: Mapping[int, Mapping[str, str]]) -> Bucketization:
    """``b`` with the labels of group column ``i`` mapped by ``maps[i]`` and the groups that
    then coincide merged (counts and population classes added)."""
    index: dict[tuple[str, ...], int] = {}
    rows: list[int] = []
    for g in b.groups:
        key = tuple(maps[i].get(v, v) if i in maps else v for i, v in enumerate(g))
        rows.append(index.setdefault(key, len(index)))
    target = np.asarray(rows, dtype=np.int64)
    counts = np.zeros((len(index), len(b.values)), dtype=np.int64)
    np.add.at(counts, target, np.asarray(b.counts, dtype=np.int64))
    population = None
    if b.population is not None:
        population = np.zeros(len(index), dtype=np.int64)
        np.add.at(population, target, np.asarray(b.population, dtype=np.int64))
    return replace(b, groups=tuple(index), counts=counts, population=population)


def recoding_advice(
    b: Bucketization, criterion: Criterion, hierarchies: Mapping[str, Hierarchy]
) -> Advice | None:
    """The smallest coarser recoding that passes ``criterion`` (module doc); None when no
    given hierarchy applies or no node within the search passes."""
    columns = _raisable(b.group_columns, b.groups, hierarchies)
    found = _smallest(
        columns, MAX_NODES, lambda maps: coarsened(b, maps),
        lambda merged: criterion.evaluate(merged).safe is True, lambda merged: merged.n_groups,
    )  # fmt: skip
    if found is None:
        return None
    raise_by, merged = found
    return _advice(b, criterion, columns, raise_by, merged)


T = TypeVar("T")


def _smallest(
    columns: Sequence[tuple[int, str, Hierarchy, int]],
    limit: int,
    change: Callable[[dict[int, dict[str, str]]], T | None],
    passes: Callable[[T], bool],
    groups: Callable[[T], int],
) -> tuple[tuple[int, ...], T] | None:
    """The search both advisers share (module doc): the nodes above the release by the
    number of steps; ``change`` builds a node's release from its label maps (None: nothing
    to judge, not counted), ``passes`` judges it, at most ``limit`` judged; among the passing
    nodes of the fewest steps, the one with the most ``groups``."""
    if not columns:
        return None
    room = [h.height - 1 - level for _, _, h, level in columns]
    judged = 0
    for steps in range(1, min(sum(room), MAX_STEPS) + 1):
        passing: list[tuple[int, tuple[int, ...], T]] = []
        for raise_by in _compositions(steps, room):
            maps = _maps(columns, raise_by)
            if maps is None:
                continue
            changed = change(maps)
            if changed is None:
                continue
            if judged >= limit:
                return None
            judged += 1
            if passes(changed):
                passing.append((groups(changed), raise_by, changed))
        if passing:
            _n, raise_by, changed = max(passing, key=lambda t: (t[0], [-d for d in t[1]]))
            return raise_by, changed
    return None


def _raisable(
    names: Sequence[str], keys: Sequence[Sequence[str]], hierarchies: Mapping[str, Hierarchy]
) -> list[tuple[int, str, Hierarchy, int]]:
    """The columns that can be raised: (position, name, hierarchy, current level) of each
    column with a hierarchy whose labels sit at a level below its top."""
    out = []
    for i, name in enumerate(names):
        h = hierarchies.get(name)
        if h is None:
            continue
        level = current_level([k[i] for k in keys], h)
        if level is not None and level < h.height - 1:
            out.append((i, name, h, level))
    return out


def _compositions(total: int, room: Sequence[int]) -> list[tuple[int, ...]]:
    """Every way to raise the columns by ``total`` steps in all, each within its room, in a
    fixed order."""
    ranges = [range(min(r, total) + 1) for r in room]
    return [c for c in itertools.product(*ranges) if sum(c) == total]


def _advice(
    b: Bucketization,
    criterion: Criterion,
    columns: Sequence[tuple[int, str, Hierarchy, int]],
    raise_by: Sequence[int],
    merged: Bucketization,
) -> Advice:
    text = (
        f"generalizing {' and '.join(_described(columns, raise_by))} merges {b.n_groups:,} "
        f"groups into {merged.n_groups:,} and passes {criterion.label} (re-checked on the "
        "merged groups; no record suppressed)"
    )
    return Advice(
        kind="coarser-recoding", criterion=criterion.label, text=text,
        groups=_levels(columns, raise_by), records=b.n_records,
    )  # fmt: skip


#: re-audits the composition search may spend (each is a whole composition audit)
MAX_AUDITS = 12


def coarsened_release(
    release: PublishedRelease, maps: Mapping[int, Mapping[str, str]]
) -> PublishedRelease:
    """A generalized release with the labels of QI ``i`` mapped by ``maps[i]`` and the
    groups that then coincide merged (their sensitive counts added)."""
    index: dict[tuple[str, ...], int] = {}
    rows = [
        index.setdefault(tuple(maps[i].get(v, v) if i in maps else v for i, v in enumerate(k)),
                         len(index))
        for k in release.keys
    ]  # fmt: skip
    counts = np.zeros((len(index), len(release.values)), dtype=np.int64)
    np.add.at(counts, np.asarray(rows, dtype=np.int64), np.asarray(release.counts, np.int64))
    return replace(release, keys=tuple(index), counts=counts, members=None)


def composition_recoding(
    candidate: PublishedRelease,
    hierarchies: Mapping[str, Hierarchy],
    reaudit: Callable[[PublishedRelease], Any],
    passes: Callable[[Any], bool],
    label: str,
) -> Advice | None:
    """The fewest further generalization steps of the candidate (its QIs with a hierarchy)
    after which the composition audit, run again against the same people and earlier
    releases (``reaudit``), passes (``passes``); among those, the most groups kept. At most
    :data:`MAX_AUDITS` re-audits; None for a release that is not generalized."""
    if candidate.kind != "generalized" or candidate.members is not None:
        return None
    columns = _raisable(candidate.qis, candidate.keys, hierarchies)

    def merged(maps: dict[int, dict[str, str]]) -> PublishedRelease | None:
        changed = coarsened_release(candidate, maps)
        # nothing merged: the audit would see the same groups
        return None if len(changed.keys) == len(candidate.keys) else changed

    found = _smallest(columns, MAX_AUDITS, merged, lambda r: passes(reaudit(r)),
                      lambda r: len(r.keys))  # fmt: skip
    if found is None:
        return None
    raise_by, changed = found
    text = (
        f"generalizing {' and '.join(_described(columns, raise_by))} merges "
        f"{len(candidate.keys):,} groups of the candidate into {len(changed.keys):,} "
        "and passes the composition audit (re-audited against the same people and "
        "earlier releases; no record suppressed)"
    )
    return Advice(
        kind="coarser-recoding", criterion=label, text=text,
        groups=_levels(columns, raise_by), records=int(np.asarray(candidate.counts).sum()),
    )  # fmt: skip


def _maps(
    columns: Sequence[tuple[int, str, Hierarchy, int]], raise_by: Sequence[int]
) -> dict[int, dict[str, str]] | None:
    maps: dict[int, dict[str, str]] = {}
    for (i, _name, h, level), d in zip(columns, raise_by, strict=True):
        if d:
            found = ancestors(h, level, level + d)
            if found is None:
                return None
            maps[i] = found
    return maps


def _described(
    columns: Sequence[tuple[int, str, Hierarchy, int]], raise_by: Sequence[int]
) -> list[str]:
    parts = []
    for (_i, name, h, level), d in zip(columns, raise_by, strict=True):
        if not d:
            continue
        mapping = ancestors(h, level, level + d) or {}
        shown = sorted({f"{k} -> {v}" for k, v in mapping.items() if k != v})[:3]
        parts.append(
            f"{name} from level {level} to {level + d} ({'; '.join(shown)}"
            f"{'; ...' if len(mapping) > 3 else ''})"
        )
    return parts


def _levels(
    columns: Sequence[tuple[int, str, Hierarchy, int]], raise_by: Sequence[int]
) -> list[str]:
    return [f"{name}={level + d}" for (_i, name, _h, level), d in zip(columns, raise_by,
                                                                     strict=True) if d]  # fmt: skip
