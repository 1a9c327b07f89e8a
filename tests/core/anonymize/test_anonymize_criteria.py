"""The anonymizers' single-group tests agree with the registry and the definitions.

Mondrian and the suppression step judge single groups with vectorized tests
(anonymize/criteria.py). For every criterion with an exact test, on random count matrices:
the test's verdict for a group = the registry's verdict on a release holding that group
alone (t-closeness: the EMD to the whole table, exact fractions, compared with t as written);
for negation-safety also = the possible-worlds oracle's maximum (exact). The (c,k)-safety
test is a necessary one: a group failing on its own makes every release containing it fail.

Near a threshold the anonymizer decides exactly as the registry does (the same verdict
helpers and core/thresholds.py comparisons): a group a hair below the limit never passes
the anonymizer only to fail the re-check of the release it wrote (an internal error).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core import thresholds
from airflow_privacy.core.anonymize import anonymize
from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.criteria.classic import (
    entropy_groups_pass,
    recursive_groups_pass,
    t_closeness_groups_pass,
)
from airflow_privacy.core.criteria.registry import evaluate
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError
from tests.core.anonymize.oracle import emd_to_table
from tests.oracle import max_disclosure_negations

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
            thresholds.at_most(
                emd_to_table(_expand(row, labels), table, params.get("ordered")), params["t"]
            )
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


# ------------------------------------------------------------------ near the threshold
# Two values in almost equal shares: exp(H) = 2 - 1/N^2 (about 1.1e-9 below 2 for N = 30,001),
# inside the tolerance band of l = 2, so entropy 2-diversity is settled exactly: it fails.
HAIR_BELOW = [15_000, 15_001]
EVEN = [15_000, 15_000]


def test_a_group_a_hair_below_log_l_fails_the_anonymizer_as_it_fails_the_registry() -> None:
    counts = np.asarray([HAIR_BELOW, EVEN, [3, 1]], dtype=np.int64)
    labels = ("x", "y")
    cs = CriteriaSet.parse([("entropy-l-diversity", {"l": 2})]).bind(labels)
    got = cs.groups_passing(counts, counts.sum(axis=0)).tolist()
    assert got == entropy_groups_pass(counts, 2.0).tolist() == [False, True, False]
    for row, passed in zip(counts.tolist(), got, strict=True):
        alone = Bucketization.from_group_counts([row], labels)
        assert evaluate(alone, "entropy-l-diversity", {"l": 2}).safe is passed


def test_mondrian_never_publishes_a_group_the_recheck_refuses() -> None:
    """Each QI value holds its two sensitive values 15,000 : 15,001, the whole table holds
    them exactly evenly. Splitting on the QI would give two groups a hair below log 2: the
    anonymizer must not split (the whole table is entropy 2-diverse, exactly), and what it
    writes passes the registry's check."""
    rows = {"a": HAIR_BELOW, "b": HAIR_BELOW[::-1]}
    q = [v for v, (nx, ny) in rows.items() for _ in range(nx + ny)]
    s = [x for nx, ny in rows.values() for x in ["x"] * nx + ["y"] * ny]
    table = pa.table({"q": q, "s": s})
    result = anonymize(table, ["q"], "s", "mondrian", [("entropy-l-diversity", {"l": 2})])
    assert result.manifest.groups == 1
    assert [r.safe for r in result.manifest.criteria_results] == [True]
    b = Bucketization.from_group_counts([[30_001, 30_001]], ("x", "y"))
    assert evaluate(b, "entropy-l-diversity", {"l": 2}).safe


@st.composite
def near_ties(draw: st.DrawFn) -> np.ndarray:
    """Count matrices with groups close to a tie: shares a few records off even, scaled up,
    so entropies, recursive ratios and EMDs fall inside or near the tolerance band."""
    v = draw(st.integers(2, 3))
    scale = draw(st.sampled_from([1, 10, 1_000, 20_000, 40_000]))
    rows = []
    for _ in range(draw(st.integers(1, 5))):
        row = [max(scale + draw(st.integers(-2, 2)), 0) for _ in range(v)]
        rows.append(row if sum(row) else [1, *row[1:]])
    return np.asarray(rows, dtype=np.int64)


@settings(max_examples=120, deadline=None)
@given(
    counts=near_ties(),
    l=st.sampled_from([1.5, 2, 2.0, 3, 2.999999999]),
    c=st.sampled_from([1.0, 1.0001, 1.5, 2.0, 0.5]),
    t=st.sampled_from([0.0, 1e-10, 1e-5, 0.01]),
)
def test_group_tests_are_the_registrys_verdict_helpers_near_ties(
    counts: np.ndarray,
    l: float,  # noqa: E741
    c: float,
    t: float,
) -> None:
    """Where the helpers exist the anonymizer's group tests are exactly them (the whole table
    given, so the t-closeness totals are the release's), and the release passes the registry
    iff every group passes."""
    labels = tuple(f"v{j}" for j in range(counts.shape[1]))
    totals = counts.sum(axis=0)
    b = Bucketization.from_group_counts(counts.tolist(), labels)
    cases = [
        ("entropy-l-diversity", {"l": l}, entropy_groups_pass(counts, float(l))),
        ("recursive-cl-diversity", {"c": c, "l": 2}, recursive_groups_pass(counts, c, 2)),
        ("t-closeness", {"t": t, "ordered": False}, t_closeness_groups_pass(counts, t, False)),
    ]
    for name, params, helper in cases:
        cs = CriteriaSet.parse([(name, params)]).bind(labels)
        got = cs.groups_passing(counts, totals)
        assert got.tolist() == helper.tolist(), (name, params)
        assert evaluate(b, name, params).safe is bool(got.all()), (name, params)


@settings(max_examples=80, deadline=None)
@given(
    counts=near_ties(),
    k=st.integers(0, 2),
    c=st.sampled_from([0.5, 1 / 3, 0.3333333333, 0.34, 0.9, 1.0]),
)
def test_negation_group_test_is_exact_near_ties(counts: np.ndarray, k: int, c: float) -> None:
    """negation-safety per group: r_1 / (n - r_2 - ... - r_{k+1}) < c exactly (c as written),
    as the registry decides the release."""
    labels = tuple(f"v{j}" for j in range(counts.shape[1]))
    cs = CriteriaSet.parse([("negation-safety", {"c": c, "k": k})]).bind(labels)
    got = cs.groups_passing(counts, counts.sum(axis=0)).tolist()
    want = []
    for row in counts.tolist():
        r = sorted(row, reverse=True)
        want.append(thresholds.below(Fraction(r[0], sum(r) - sum(r[1 : k + 1])), c))
    assert got == want
    b = Bucketization.from_group_counts(counts.tolist(), labels)
    assert evaluate(b, "negation-safety", {"c": c, "k": k}).safe is all(want)


def test_recursive_and_t_closeness_ties_are_decided_as_written() -> None:
    """A ratio of exactly c = 0.1 (as written) fails the strict r_1 < c tail; an EMD of
    exactly t passes t-closeness, as in the registry."""
    labels = tuple(f"v{j}" for j in range(11))
    counts = np.asarray([[1] * 11, [1, 10, *([0] * 9)]], dtype=np.int64)
    cs = CriteriaSet.parse([("recursive-cl-diversity", {"c": 10, "l": 2})]).bind(labels)
    got = cs.groups_passing(counts, counts.sum(axis=0)).tolist()
    assert got == recursive_groups_pass(counts, 10.0, 2).tolist()
    two = np.asarray([[3, 7], [7, 3]], dtype=np.int64)  # EMD of each to the table: exactly 0.2
    cs = CriteriaSet.parse([("t-closeness", {"t": 0.2})]).bind(("a", "b"))
    assert cs.groups_passing(two, two.sum(axis=0)).tolist() == [True, True]
    cs = CriteriaSet.parse([("t-closeness", {"t": 0.19999999999})]).bind(("a", "b"))
    assert cs.groups_passing(two, two.sum(axis=0)).tolist() == [False, False]


def test_distributions_are_compared_in_floats_with_the_band_failing() -> None:
    """The algorithm-aware audit asks about distributions (floats summing to 1): they are
    decided with the float comparisons of core/thresholds.py (inside the tolerance band:
    failing), never truncated to whole counts."""
    q = np.asarray([[0.5, 0.5], [0.6, 0.4], [1.0, 0.0]])
    labels = ("a", "b")
    totals = np.asarray([5, 5], dtype=np.int64)
    cases: list[tuple[str, dict[str, Any], list[bool]]] = [
        # exp(H) of (0.6, 0.4) is 1.96; (0.5, 0.5) is exactly 2, inside the band of l = 2
        ("entropy-l-diversity", {"l": 2}, [False, False, False]),
        ("entropy-l-diversity", {"l": 1.9}, [True, True, False]),
        # r1 / r2 = 1 and 1.5: below c = 1.5 only the first (1.5 is in the band)
        ("recursive-cl-diversity", {"c": 1.5, "l": 2}, [True, False, False]),
        # the EMD to (1/2, 1/2) is 0, 0.1, 0.5: at most t = 0.1 only the first (band)
        ("t-closeness", {"t": 0.1}, [True, False, False]),
        ("negation-safety", {"c": 0.6, "k": 0}, [True, False, False]),
    ]
    for name, params, want in cases:
        cs = CriteriaSet.parse([(name, params)]).bind(labels)
        assert cs.groups_passing(q, totals).tolist() == want, (name, params)
