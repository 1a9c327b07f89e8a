"""The anonymizers' single-group tests agree with the registry and the definitions.

Mondrian and the suppression step judge single groups with vectorized tests
(anonymize/criteria.py). For every criterion with an exact test, on random count matrices:
the test's verdict for a group = the registry's verdict on a release holding that group
alone (t-closeness: the EMD to the whole table, exact fractions); for negation-safety also
= the possible-worlds oracle's maximum (exact). The (c,k)-safety test is a necessary one:
a group failing on its own makes every release containing it fail.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.criteria.registry import evaluate
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError
from tests.oracle import max_disclosure_negations
from tests.test_anonymize_oracle import emd_to_table

EXACT: dict[str, list[dict[str, Any]]] = {
    "k-anonymity": [{"k": 1}, {"k": 3}, {"k": 6}],
    "distinct-l-diversity": [{"l": 1}, {"l": 2}, {"l": 4}],
    "entropy-l-diversity": [{"l": 1}, {"l": 1.7}, {"l": 2}, {"l": 3}, {"l": 4}],
    "recursive-cl-diversity": [
        {"c": 0.5, "l": 1},
        {"c": 1, "l": 2},
        {"c": 3, "l": 2},
        {"c": 2, "l": 3},
    ],
    "negation-safety": [
        {"c": 0.5, "k": 0},
        {"c": 0.6, "k": 1},
        {"c": 0.9, "k": 2},
        {"c": 1.0, "k": 3},
    ],
    "t-closeness": [
        {"t": 0.05},
        {"t": 0.2},
        {"t": 0.5},
        {"t": 0.2, "ordered": False},
        {"t": 0.3, "ordered": True},
    ],
}


@st.composite
def matrices(draw: st.DrawFn) -> tuple[np.ndarray, tuple[str, ...]]:
    v = draw(st.integers(1, 5))
    g = draw(st.integers(1, 8))
    rows = [[draw(st.integers(0, 5)) for _ in range(v)] for _ in range(g)]
    for row in rows:
        if sum(row) == 0:
            row[0] = draw(st.integers(1, 4))
    numeric = draw(st.booleans())
    labels = (
        tuple(str(3 * j + 1) for j in range(v)) if numeric else tuple(f"v{j}" for j in range(v))
    )
    return np.asarray(rows, dtype=np.int64), labels


def _expand(row: np.ndarray, labels: tuple[str, ...]) -> list[str]:
    return [labels[j] for j, c in enumerate(row.tolist()) for _ in range(c)]


@pytest.mark.parametrize("name", sorted(EXACT))
@settings(max_examples=150, deadline=None)
@given(data=matrices(), pick=st.data())
def test_single_group_tests_match_the_registry(
    name: str, data: tuple[np.ndarray, tuple[str, ...]], pick: st.DataObject
) -> None:
    counts, labels = data
    params: dict[str, Any] = pick.draw(st.sampled_from(EXACT[name]))
    cs = CriteriaSet.parse([(name, params)]).bind(labels)
    totals = counts.sum(axis=0)
    if name == "t-closeness":
        table = [x for row in counts for x in _expand(row, labels)]
        if params.get("ordered") and not all(lab.isdigit() for lab in labels):
            with pytest.raises(InputError, match="ordered=True needs numeric"):
                cs.groups_passing(counts, totals)
            return
        want = [
            float(emd_to_table(_expand(row, labels), table, params.get("ordered"))) <= params["t"]
            for row in counts
        ]
    else:
        want = [
            evaluate(Bucketization.from_group_counts([row.tolist()], labels), name, params).safe
            for row in counts
        ]
    assert cs.groups_passing(counts, totals).tolist() == want
    assert cs.local() and not cs.global_indices()


@settings(max_examples=60, deadline=None)
@given(row=st.lists(st.integers(0, 3), min_size=1, max_size=3).filter(lambda r: 0 < sum(r) <= 6),
       k=st.integers(0, 2), c=st.sampled_from([0.4, 0.5, 0.6, 2 / 3, 0.75, 1.0]))  # fmt: skip
def test_negation_group_test_matches_the_possible_worlds_oracle(
    row: list[int], k: int, c: float
) -> None:
    cs = CriteriaSet.parse([("negation-safety", {"c": c, "k": k})]).bind(
        tuple(f"v{j}" for j in range(len(row)))
    )
    counts = np.asarray([row], dtype=np.int64)
    exact = max_disclosure_negations([row], k).value
    assert cs.groups_passing(counts, counts[0]).tolist() == [float(exact) < c]


@settings(max_examples=80, deadline=None)
@given(data=matrices(), c=st.sampled_from([0.5, 0.7, 0.9]), k=st.integers(0, 3))
def test_ck_safety_group_test_is_necessary(
    data: tuple[np.ndarray, tuple[str, ...]], c: float, k: int
) -> None:
    counts, labels = data
    cs = CriteriaSet.parse([("ck-safety", {"c": c, "k": k})]).bind(labels)
    alone = cs.groups_passing(counts, counts.sum(axis=0))
    whole = evaluate(Bucketization.from_group_counts(counts, labels), "ck-safety", {"c": c, "k": k})
    if not alone.all():
        assert not whole.safe
    assert cs.global_indices() == [0] and not cs.local()


def test_cheap_criteria_are_checked_first_and_the_failure_is_reported() -> None:
    cs = CriteriaSet.parse([("ck-safety", {"c": 0.9, "k": 1}), ("k-anonymity", {"k": 10})])
    assert cs.by_cost() == [1, 0]
    b = Bucketization.from_group_counts([[3, 1], [2, 2]])
    failure = cs.first_failure(b)
    assert failure is not None and failure.criterion == "k-anonymity"
    assert [r.criterion for r in cs.evaluate_all(b)] == ["ck-safety", "k-anonymity"]
    assert cs.items[0].label == "ck-safety (c=0.9, k=1)"
