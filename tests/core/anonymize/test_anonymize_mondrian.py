"""Mondrian: output format, valid generalizations, every partition passes and (for
criteria judged group by group) no allowable split is left; utility from the definitions."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.anonymize import anonymize
from airflow_privacy.core.criteria.registry import evaluate
from airflow_privacy.core.datasets import adult_hierarchies, load_adult
from airflow_privacy.errors import InputError
from tests.core.anonymize.oracle import (
    Criteria,
    Problem,
    bucketization,
    fails_alone,
    problems,
)

TOL = 1e-9

LOCAL = st.one_of(
    st.builds(lambda k: ("k-anonymity", {"k": k}), st.integers(1, 4)),
    st.builds(lambda l: ("distinct-l-diversity", {"l": l}), st.integers(1, 3)),  # noqa: E741
    st.builds(lambda l: ("entropy-l-diversity", {"l": l}), st.sampled_from([1.5, 2])),  # noqa: E741
    st.builds(lambda c: ("recursive-cl-diversity", {"c": c, "l": 2}), st.sampled_from([1, 3])),
    st.builds(lambda t: ("t-closeness", {"t": t}), st.sampled_from([0.2, 0.4])),
    st.builds(lambda c: ("negation-safety", {"c": c, "k": 1}), st.sampled_from([0.7, 1.0])),
)


def _number(v: str) -> float | None:
    try:
        x = float(v)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _numeric(p: Problem, q: str) -> bool:
    return all(_number(r[q]) is not None for r in p.rows)


def _lca(p: Problem, q: str, values: set[str]) -> str:
    """Lowest label shared by every value (hierarchy, or value / * without one)."""
    for level in p.levels_of(q):
        labels = {level[v] for v in values}
        if len(labels) == 1:
            return labels.pop()
    return "*"


def _split(p: Problem, q: str, rows: list[int]) -> list[list[int]]:
    """The candidate split of a partition on QI ``q`` (docs/anonymizers.md)."""
    if _numeric(p, q):
        vals = sorted(float(p.rows[i][q]) for i in rows)
        distinct = sorted(set(vals))
        if len(distinct) < 2:
            return []
        median = vals[(len(vals) - 1) // 2]
        cut = median if median < distinct[-1] else distinct[-2]
        left = [i for i in rows if float(p.rows[i][q]) <= cut]
        return [left, [i for i in rows if i not in left]]
    levels = p.levels_of(q)
    values = {p.rows[i][q] for i in rows}
    lv = next(
        (i for i, level in enumerate(levels) if len({level[v] for v in values}) == 1), len(levels)
    )
    if lv == 0:
        return []
    child = levels[lv - 1]
    parts: dict[str, list[int]] = {}
    for i in rows:
        parts.setdefault(child[p.rows[i][q]], []).append(i)
    return list(parts.values())


def _groups(result: Any, qis: list[str]) -> dict[tuple[str, ...], list[int]]:
    out: dict[tuple[str, ...], list[int]] = {}
    for row, src in zip(result.release.to_pylist(), result.source_rows.tolist(), strict=True):
        out.setdefault(tuple(row[q] for q in qis), []).append(src)
    return out


_FOUR = Problem([{"q0": v, "s": s} for v, s in zip("1234", "xyxy", strict=True)], ["q0"], {})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(max_rows=24, max_values=5), criteria=st.lists(LOCAL, min_size=1, max_size=2))
@example(p=_FOUR, criteria=[("k-anonymity", {"k": 2})])  # the lower median splits 1,2 | 3,4
def test_mondrian_partitions_are_valid_passing_and_maximal(p: Problem, criteria: Criteria) -> None:
    table_s = [r["s"] for r in p.rows]
    try:
        result = anonymize(p.table, p.qis, "s", "mondrian", criteria, p.hierarchies,
                           categorical_split="hierarchy")  # fmt: skip
    except InputError as exc:
        assert fails_alone(table_s, table_s, criteria) or not all(
            evaluate(bucketization({("all",): table_s}, ["g"]), n, prm).safe for n, prm in criteria
        ), str(exc)
        return
    groups = _groups(result, p.qis)
    assert sorted(i for rows in groups.values() for i in rows) == list(range(len(p.rows)))
    assert len(groups) == len(result.manifest.details["partitions"]) == result.manifest.groups
    for labels, rows in groups.items():
        for q, label in zip(p.qis, labels, strict=True):
            values = {p.rows[i][q] for i in rows}
            if _numeric(p, q):  # "lo-hi" of the values present, or the single value
                nums = sorted(float(v) for v in values)
                lo = min(values, key=float)
                hi = max(values, key=float)
                assert label == (lo if nums[0] == nums[-1] else f"{lo}-{hi}")
            else:  # each value maps to its ancestor: the lowest common one
                assert label == _lca(p, q, values)
        # the partition passes every criterion on its own ...
        assert not fails_alone([p.rows[i]["s"] for i in rows], table_s, criteria)
        # ... and no allowable split is left (LeFevre et al. 2006: strict partitioning)
        for q in p.qis:
            parts = _split(p, q, rows)
            if len(parts) >= 2:
                assert any(
                    fails_alone([p.rows[i]["s"] for i in part], table_s, criteria) for part in parts
                ), f"partition {labels} could still be split on {q}"
    for r in result.release.to_pylist():
        assert r["s"] in set(table_s)


def test_adult_five_anonymous_release_format() -> None:
    t = load_adult()
    qis = [c for c in t.column_names if c != "occupation"]
    hierarchies = adult_hierarchies()
    result = anonymize(t, qis, "occupation", "mondrian", [("k-anonymity", {"k": 5})],
                       {q: hierarchies[q] for q in qis}, categorical_split="hierarchy")  # fmt: skip
    m = result.manifest
    assert m.details["dimensions"]["age"] == "numeric"
    assert m.details["dimensions"]["education"] == "categorical"
    sizes = [part["size"] for part in m.details["partitions"]]
    assert min(sizes) >= 5 and sum(sizes) == t.num_rows
    ages = {r for r in result.release.column("age").to_pylist()}
    for a in ages:
        lo, _, hi = a.partition("-")
        assert lo.isdigit() and (hi == "" or (hi.isdigit() and int(lo) < int(hi)))
    edu = set(result.release.column("education").to_pylist())
    h = adult_hierarchies()["education"]
    known = {lab for level in h.levels for lab in level.values()}
    assert edu <= known
    assert m.utility["average-class-size"] == pytest.approx(t.num_rows / m.groups)
    assert 0 < m.utility["loss"] < 1  # type: ignore[operator]


def test_utility_from_the_definitions() -> None:
    rows = [("20", "a", "x"), ("21", "a", "y"), ("30", "b", "x"), ("35", "b", "y"),
            ("36", "a", "x"), ("50", "b", "y")]  # fmt: skip
    t = pa.table(
        {"age": [r[0] for r in rows], "c": [r[1] for r in rows], "s": [r[2] for r in rows]}
    )
    result = anonymize(t, ["age", "c"], "s", "mondrian", [("k-anonymity", {"k": 2})])
    n, q = len(rows), 2
    groups = _groups(result, ["age", "c"])
    loss = nue = 0.0
    freq_age = Counter(r[0] for r in rows)
    freq_c = Counter(r[1] for r in rows)
    for (age, c), members in groups.items():
        lo, _, hi = age.partition("-")
        hi = hi or lo
        loss += len(members) * (float(hi) - float(lo)) / (50 - 20)
        loss += len(members) * (0.0 if c != "*" else 1.0)
        covered_age = sum(1 for r in rows if float(lo) <= float(r[0]) <= float(hi))
        covered_c = n if c == "*" else freq_c[c]
        for i in members:
            nue += -math.log2(freq_age[rows[i][0]] / covered_age)
            nue += -math.log2(freq_c[rows[i][1]] / covered_c)
    u = result.manifest.utility
    assert u["loss"] == pytest.approx(loss / (n * q), abs=TOL)
    assert u["non-uniform-entropy"] == pytest.approx(nue, abs=TOL)
    assert u["discernibility"] == sum(len(m) ** 2 for m in groups.values())
    assert u["precision"] is None


def test_background_knowledge_criteria_are_checked_on_the_whole_release() -> None:
    t = load_adult().slice(0, 3000)
    qis = ["age", "sex", "education"]
    h = adult_hierarchies()
    result = anonymize(t, qis, "occupation", "mondrian",
                       [("ck-safety", {"c": 0.6, "k": 2})], {q: h[q] for q in qis})  # fmt: skip
    d = result.manifest.details
    assert d["criteria_checked_on_whole_release"] == ["ck-safety (c=0.6, k=2)"]
    assert result.manifest.criteria_results[0].safe
    assert result.manifest.groups > 1


def test_impossible_criterion_names_itself() -> None:
    t = load_adult().slice(0, 500)
    with pytest.raises(
        InputError, match=r"no partitioning passes criterion distinct-l-diversity \(l=15\)"
    ):
        anonymize(t, ["age"], "occupation", "mondrian", [("distinct-l-diversity", {"l": 15})])


def test_deterministic_and_seeded_row_order() -> None:
    t = load_adult().slice(0, 800)
    crit = [("k-anonymity", {"k": 4})]
    a = anonymize(t, ["age", "sex"], "occupation", "mondrian", crit, seed=1)
    b = anonymize(t, ["age", "sex"], "occupation", "mondrian", crit, seed=1)
    c = anonymize(t, ["age", "sex"], "occupation", "mondrian", crit, seed=2)
    assert a.release.equals(b.release)
    assert not a.release.equals(c.release)
    assert a.manifest.details["partitions"] == c.manifest.details["partitions"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(max_rows=24, max_values=5), criteria=st.lists(LOCAL, min_size=1, max_size=2))
def test_the_default_split_publishes_the_finer_of_both(p: Problem, criteria: Criteria) -> None:
    """``categorical_split="auto"`` (the default; issue 24): both partitionings are made and
    the one with more classes (the smaller average class size) is published, the hierarchy's
    on a tie; the release is exactly that split's own."""
    runs: dict[str, Any] = {}
    for split in ("hierarchy", "halving", "auto"):
        try:
            runs[split] = anonymize(p.table, p.qis, "s", "mondrian", criteria, p.hierarchies,
                                    categorical_split=split)  # fmt: skip
        except InputError:
            runs[split] = None
    if runs["hierarchy"] is None:  # the whole table fails: no split can help
        assert runs["halving"] is None and runs["auto"] is None
        return
    groups = {k: runs[k].manifest.groups for k in ("hierarchy", "halving")}
    best = "halving" if groups["halving"] > groups["hierarchy"] else "hierarchy"
    chosen = runs["auto"]
    assert chosen.manifest.parameters["categorical_split"] == best
    assert chosen.manifest.groups == max(groups.values())
    assert chosen.release.equals(runs[best].release)
    if any(not _numeric(p, q) for q in p.qis):
        assert chosen.manifest.details["partitions_by_split"] == groups
