"""Which attribute drives a failing witness (core/criteria/drivers.py) against a computation
from the rows: the records that agree with the witness group on every other column, counted
and judged by the criterion's definition written out here."""

from __future__ import annotations

import io
import json
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.cli import main
from airflow_privacy.core.criteria.drivers import attribute_drivers, drivers_sentence
from airflow_privacy.core.criteria.registry import create
from airflow_privacy.core.model import Bucketization

Row = tuple[str, str, str, str]  # a, b, c, s
COLUMNS = ("a", "b", "c")


def _bucketization(rows: list[Row]) -> Bucketization:
    counts = Counter(rows)
    return Bucketization.from_counts(
        [(*r[:3], r[3], n) for r, n in counts.items()], list(COLUMNS), "s"
    )


def _definition(name: str, values: list[str], k: int) -> bool:
    """The criterion on one group of sensitive values, from its definition."""
    if name == "k-anonymity":
        return len(values) >= k
    if name == "distinct-l-diversity":
        return len(set(values)) >= k
    assert name == "prosecutor-risk"
    return Fraction(1, len(values)) <= Fraction(repr(1 / k))  # the limit as written


rows_st = st.lists(
    st.tuples(
        st.sampled_from(["a1", "a2", "a3"]),
        st.sampled_from(["b1", "b2"]),
        st.sampled_from(["c1", "c2", "c3"]),
        st.sampled_from(["x", "y", "z"]),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(rows_st, st.sampled_from(["k-anonymity", "distinct-l-diversity", "prosecutor-risk"]),
       st.integers(2, 4), st.data())  # fmt: skip
def test_merged_groups_and_verdicts_match_the_rows(
    rows: list[Row], name: str, k: int, data: st.DataObject
) -> None:
    b = _bucketization(rows)
    params = {"k": k} if name == "k-anonymity" else {"l": k} if name[0] == "d" else {
        "highest": 1 / k}  # fmt: skip
    criterion = create(name, params)
    g = data.draw(st.integers(0, b.n_groups - 1))
    key = b.groups[g]
    drivers = attribute_drivers(b, criterion, g)
    assert [d["column"] for d in drivers] == list(COLUMNS)
    for j, d in enumerate(drivers):
        merged = [r for r in rows if all(r[i] == key[i] for i in range(3) if i != j)]
        assert d["records"] == len(merged)
        assert d["groups"] == len({r[:3] for r in merged})
        assert d["passes"] == _definition(name, [r[3] for r in merged], k)


def test_sentence_prefers_the_smallest_fixing_merge() -> None:
    drivers = [
        {"column": "age", "records": 144, "groups": 41, "passes": True},
        {"column": "sex", "records": 3, "groups": 2, "passes": False},
        {"column": "race", "records": 20, "groups": 5, "passes": True},
    ]
    text = drivers_sentence(drivers, necessary_only=False)
    assert text.startswith("without 'race' the group would hold 20 records (5 groups merged)")
    assert "leaving out 'age' would also do" in text
    assert "on its own" in drivers_sentence(drivers, necessary_only=True)
    none = [dict(d, passes=False) for d in drivers]
    assert "not enough" in drivers_sentence(none, False) and "'age'" in drivers_sentence(
        none, False
    )


def test_check_reports_the_attribute_for_failing_criteria_only(tmp_path: Path) -> None:
    rel = tmp_path / "r.csv"
    lines = ["a,b,s"] + [f"a{i % 2},b{i % 3},{'v' + str(i % 4)}" for i in range(12)]
    lines.append("a9,b0,SECRETVALUE")
    rel.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = io.StringIO()
    code = main(["check", str(rel), "--sensitive", "s", "--group", "a", "--group", "b",
                 "--criterion", "k-anonymity:k=2", "--criterion", "distinct-l-diversity:l=1",
                 "--format", "json", "--quiet"], out)  # fmt: skip
    assert code == 1
    env = json.loads(out.getvalue())
    failing, passing = env["results"]
    assert not failing["safe"] and passing["safe"]
    assert "which_attribute" not in passing["details"]
    assert failing["details"]["which_attribute"].startswith("without 'a' the group")
    assert [d["column"] for d in failing["witness"]["attributes"]] == ["a", "b"]
    assert "SECRETVALUE" not in out.getvalue()
    text = io.StringIO()
    main(["check", str(rel), "--sensitive", "s", "--group", "a", "--group", "b",
          "--criterion", "k-anonymity:k=2", "--quiet"], text)  # fmt: skip
    assert "  which:   without 'a' the group would hold" in text.getvalue()


@pytest.mark.parametrize("columns", [["a"], ["a", "b"]])
def test_one_column_merges_the_whole_table(tmp_path: Path, columns: list[str]) -> None:
    b = Bucketization.from_counts(
        [("a1", "x", 1), ("a2", "y", 3)] if columns == ["a"] else
        [("a1", "b1", "x", 1), ("a2", "b1", "y", 3)], columns, "s")  # fmt: skip
    drivers = attribute_drivers(b, create("k-anonymity", {"k": 4}), 0)
    assert drivers[0]["records"] == 4 and drivers[0]["passes"]


def test_population_criteria_merge_the_population_classes_too() -> None:
    """k-map against a population: the merged group passes iff its merged population class
    holds at least k people (Sweeney 2002), counted here from the classes."""
    b = Bucketization.from_counts(
        [("a1", "b1", "x", 1), ("a1", "b2", "y", 2), ("a2", "b1", "x", 2)], ["a", "b"], "s"
    ).with_population([2, 3, 4])
    drivers = attribute_drivers(b, create("k-map", {"k": 5}), 0)  # group a1,b1: F = 2
    by_column = {d["column"]: d for d in drivers}
    assert by_column["a"]["records"] == 3 and by_column["a"]["passes"]  # F = 2 + 4
    assert by_column["b"]["records"] == 3 and by_column["b"]["passes"]  # F = 2 + 3
    drivers = attribute_drivers(b, create("k-map", {"k": 6}), 0)
    assert [d["passes"] for d in drivers] == [True, False]


def test_benign_values_reach_the_group_test() -> None:
    """negation-safety with the majority value benign: the merged group passes with it
    declared and fails without (docs/worst-case-engine.md, benign values)."""
    rows = [("a1", "b1", "none", 3), ("a1", "b1", "flu", 1), ("a1", "b2", "none", 1)]
    plain = Bucketization.from_counts(rows, ["a", "b"], "s")
    marked = plain.with_benign(["none"])
    crit = create("negation-safety", {"c": 0.6, "k": 0})
    assert not [d for d in attribute_drivers(plain, crit, 0) if d["passes"]]
    assert all(d["passes"] for d in attribute_drivers(marked, crit, 0))
