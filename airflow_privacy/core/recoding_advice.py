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
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from airflow_privacy.core.advice import Advice

if TYPE_CHECKING:
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
    columns: list[tuple[int, str, Hierarchy, int]] = []
    for i, name in enumerate(b.group_columns):
        h = hierarchies.get(name)
        if h is None:
            continue
        level = current_level([g[i] for g in b.groups], h)
        if level is not None and level < h.height - 1:
            columns.append((i, name, h, level))
    if not columns:
        return None
    room = [h.height - 1 - level for _, _, h, level in columns]
    evaluated = 0
    for steps in range(1, min(sum(room), MAX_STEPS) + 1):
        passing: list[tuple[int, tuple[int, ...], Bucketization]] = []
        for raise_by in _compositions(steps, room):
            if evaluated >= MAX_NODES:
                return None
            maps: dict[int, dict[str, str]] = {}
            for (i, _name, h, level), d in zip(columns, raise_by, strict=True):
                if d:
                    found = ancestors(h, level, level + d)
                    if found is None:
                        break
                    maps[i] = found
            else:
                merged = coarsened(b, maps)
                evaluated += 1
                if criterion.evaluate(merged).safe is True:
                    passing.append((merged.n_groups, raise_by, merged))
        if passing:
            _groups, raise_by, merged = max(passing, key=lambda t: (t[0], [-d for d in t[1]]))
            return _advice(b, criterion, columns, raise_by, merged)
    return None


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
    label = criterion.label
    text = (
        f"generalizing {' and '.join(parts)} merges {b.n_groups:,} groups into "
        f"{merged.n_groups:,} and passes {label} (re-checked on the merged groups; no "
        "record suppressed)"
    )
    return Advice(
        kind="coarser-recoding", criterion=label, text=text,
        groups=[f"{name}={level + d}" for (_i, name, _h, level), d in zip(columns, raise_by,
                                                                          strict=True) if d],
        records=b.n_records,
    )  # fmt: skip
