"""The coarser-recoding way forward against a brute force from the original records: every
node of the lattice above the release's node, generalized from the records themselves and
checked; the advice must pick a passing node with the fewest steps (and, among those, the
most groups), and nothing with fewer steps may pass."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pyarrow as pa
import pytest

from airflow_privacy.core.criteria.registry import create
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.core.recoding_advice import coarsened, current_level, recoding_advice
from tests.core.recoding_cases import (
    AGE,
    HIER,
    ZIP,
    advice_table,
    records,
)

SPEC = ReleaseSpec(sensitive="disease", group_columns=("age", "zip", "sex"))


def at(rows: list[dict[str, str]], levels: dict[str, int]) -> Bucketization:
    """The records generalized to ``levels`` (straight from the hierarchies), counted."""
    table = pa.table({
        c: [HIER[c].generalize_value(r[c], levels[c]) for r in rows] for c in ("age", "zip", "sex")
    } | {"disease": [r["disease"] for r in rows]})  # fmt: skip
    return Bucketization.from_arrow(table, SPEC)


CRITERIA: list[tuple[str, dict[str, Any]]] = [
    ("k-anonymity", {"k": 4}), ("k-anonymity", {"k": 9}), ("distinct-l-diversity", {"l": 3}),
    ("recursive-cl-diversity", {"c": 3, "l": 2}),
]  # fmt: skip


@pytest.mark.parametrize("seed", range(24))
def test_the_advice_is_the_smallest_passing_node(seed: int) -> None:
    name, params = CRITERIA[seed % len(CRITERIA)]
    criterion = create(name, params)
    for attempt in range(50):  # the first draw the criterion fails
        rng = random.Random(1000 * seed + attempt)
        rows = records(rng, rng.randrange(30, 160))
        start = {"age": rng.randrange(0, 2), "zip": rng.randrange(0, 2), "sex": 0}
        release = at(rows, start)
        if criterion.evaluate(release).safe is not True:
            break
    else:
        raise AssertionError("no failing release in 50 draws")
    # brute force: every node above the start, generalized from the records
    passing = {}
    for levels in itertools.product(range(4), range(4), range(2)):
        node = dict(zip(("age", "zip", "sex"), levels, strict=True))
        if any(node[c] < start[c] for c in node):
            continue
        b = at(rows, node)
        if criterion.evaluate(b).safe is True:
            passing[levels] = (sum(node[c] - start[c] for c in node), b.n_groups)
    advice = recoding_advice(release, criterion, HIER)
    if not passing:
        assert advice is None
        return
    fewest = min(steps for steps, _ in passing.values())
    most = max(groups for steps, groups in passing.values() if steps == fewest)
    assert advice is not None and advice.kind == "coarser-recoding"
    chosen = dict(start)
    for item in advice.groups:  # "age=3": the column and its new level
        column, level = item.split("=")
        chosen[column] = int(level)
    key = (chosen["age"], chosen["zip"], chosen["sex"])
    assert key in passing, (advice.text, passing)
    assert passing[key] == (fewest, most), (advice.text, passing[key], fewest, most)
    assert f"into {most:,}" in advice.text


def test_merging_adds_the_counts_of_the_groups_that_coincide() -> None:
    rows = records(random.Random(3), 200)
    low, high = at(rows, {"age": 0, "zip": 0, "sex": 0}), at(rows, {"age": 2, "zip": 1, "sex": 1})
    maps = {0: {v: AGE.levels[2][v] for v in AGE.values},
            1: {v: ZIP.levels[1][v] for v in ZIP.values}, 2: {"M": "*", "F": "*"}}  # fmt: skip
    merged = coarsened(low, maps)
    assert sorted(zip(merged.groups, map(tuple, merged.counts.tolist()), strict=True)) == sorted(
        zip(high.groups, map(tuple, high.counts.tolist()), strict=True)
    )
    assert current_level(["20-24", "35-39"], AGE) == 1 and current_level(["x"], AGE) is None


def test_no_hierarchy_no_advice() -> None:
    rows = records(random.Random(5), 40)
    release = at(rows, {"age": 0, "zip": 0, "sex": 0})
    assert recoding_advice(release, create("k-anonymity", {"k": 5}), {}) is None
    # every column at its top already: nothing left to raise
    top = at(rows, {"age": 3, "zip": 3, "sex": 1})
    assert recoding_advice(top, create("k-anonymity", {"k": 10_000}), HIER) is None


@pytest.mark.parametrize("seed", range(12))
def test_a_blocked_audit_gets_the_smallest_recoding_that_passes(seed: int) -> None:
    """Two releases of the same people at different nodes pin some of them; the advice's
    recoding of the candidate is, among the nodes above it (each generalized from the
    records and audited against the same prior), a passing one with the fewest steps and
    the most groups."""
    from airflow_privacy.core.composition.attack import composition_audit
    from airflow_privacy.core.composition.locate import Population
    from airflow_privacy.core.composition.release import PublishedRelease
    from airflow_privacy.core.composition.result import gate
    from airflow_privacy.core.recoding_advice import composition_recoding

    qis = ("age", "zip", "sex")
    start = {"age": 1, "zip": 1, "sex": 0}

    def case(attempt: int) -> tuple[list[dict[str, str]], Any, Any, float]:
        rng = random.Random(1000 * seed + attempt)
        rows = records(rng, rng.randrange(120, 240))
        population = Population.from_arrow(advice_table(rows, {"age": 0, "zip": 0, "sex": 0}), qis)
        prior = PublishedRelease.from_arrow(advice_table(rows, {"age": 2, "zip": 2, "sex": 1}), qis,
                                            "disease", name="prior")  # fmt: skip
        return rows, population, prior, rng.choice([5.0, 10.0, 20.0])

    def audit_with(population: Any, prior: Any, release: PublishedRelease) -> Any:
        return composition_audit(population, release, [prior], hierarchies=HIER, top=0,
                                 confidences=(1.0,))  # fmt: skip

    for attempt in range(50):  # the first draw whose candidate the audit blocks
        rows, population, prior, max_pvp = case(attempt)
        candidate = PublishedRelease.from_arrow(advice_table(rows, start), qis, "disease", name="c")
        if gate(audit_with(population, prior, candidate), 1.0, max_pvp).safe is not True:
            break
    else:
        raise AssertionError("no blocked candidate in 50 draws")

    def audit(release: PublishedRelease) -> Any:
        return audit_with(population, prior, release)

    def passes(result: Any) -> bool:
        return gate(result, 1.0, max_pvp).safe is True

    passing = {}
    for levels in itertools.product(range(4), range(4), range(2)):
        node = dict(zip(qis, levels, strict=True))
        if any(node[c] < start[c] for c in qis) or node == start:
            continue
        release = PublishedRelease.from_arrow(advice_table(rows, node), qis, "disease")
        if passes(audit(release)):
            passing[levels] = (sum(node[c] - start[c] for c in qis), len(release.keys))
    advice = composition_recoding(candidate, HIER, audit, passes, "composition")
    fewest_all = min((s for s, _ in passing.values()), default=None)
    if advice is None:  # none at all, or none within the 12 re-audits (beyond 2 steps here)
        assert fewest_all is None or fewest_all > 2, passing
        return
    chosen = dict(start)
    for item in advice.groups:
        column, level = item.split("=")
        chosen[column] = int(level)
    key = (chosen["age"], chosen["zip"], chosen["sex"])
    fewest = min(s for s, _ in passing.values())
    most = max(g for s, g in passing.values() if s == fewest)
    assert passing.get(key) == (fewest, most), (advice.text, passing)
