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
from airflow_privacy.core.hierarchy import Hierarchy
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.core.recoding_advice import coarsened, current_level, recoding_advice

AGE = Hierarchy.from_rows("age", [
    [str(a), f"{a // 5 * 5}-{a // 5 * 5 + 4}", f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"]
    for a in range(20, 60)
])  # fmt: skip
ZIP = Hierarchy.from_rows("zip", [
    [z, z[:3] + "*", z[:2] + "**", "*"] for z in ("1301", "1302", "1311", "1312", "1401",
                                                 "1402", "1411", "1412")
])  # fmt: skip
SEX = Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]])
HIER = {"age": AGE, "zip": ZIP, "sex": SEX}
SPEC = ReleaseSpec(sensitive="disease", group_columns=("age", "zip", "sex"))


def records(rng: random.Random, n: int) -> list[dict[str, str]]:
    return [{"age": str(rng.randrange(20, 60)), "zip": rng.choice(ZIP.values),
             "sex": rng.choice("MF"), "disease": rng.choice(["flu", "cold", "hiv", "tb"])}
            for _ in range(n)]  # fmt: skip


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
    rng = random.Random(seed)
    rows = records(rng, rng.randrange(30, 160))
    start = {"age": rng.randrange(0, 2), "zip": rng.randrange(0, 2), "sex": 0}
    name, params = CRITERIA[seed % len(CRITERIA)]
    criterion = create(name, params)
    release = at(rows, start)
    if criterion.evaluate(release).safe is True:
        pytest.skip("the release passes already")
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
