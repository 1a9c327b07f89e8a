"""Benign values in the distribution criteria and in the anonymizers' per-group tests.

(alpha,k)-anonymity, basic and enhanced beta-likeness and delta-disclosure privacy with
declared benign values against the definitions restricted to the non-benign values
(tests/distribution_oracle.py, exact fractions and Taylor bounds of ``exp``), on random small
bucketizations; the per-group tests the anonymizers use (``CriteriaSet`` bound with the
benign values) against the registry on a one-group release ``.with_benign(...)`` and, for
negation-safety, against the possible-worlds oracle of tests/oracle.py restricted to
non-benign targets. Benign labels absent from the release give today's numbers; more benign
values never make a passing release fail (nor raise the value).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.criteria.registry import evaluate
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError, render
from tests import distribution_oracle as ref
from tests.oracle import max_disclosure_negations

Rows = list[list[int]]
LABELS = ("ZZ-SECRET-A", "ZZ-SECRET-B", "ZZ-SECRET-C", "ZZ-SECRET-D")

DISTRIBUTION: dict[str, list[dict[str, Any]]] = {
    "alpha-k-anonymity": [{"alpha": 0.5, "k": 1}, {"alpha": 0.6, "k": 3}, {"alpha": 1.0, "k": 2}],
    "basic-beta-likeness": [{"beta": 0.25}, {"beta": 0.5}, {"beta": 1.0}, {"beta": 2.0}],
    "enhanced-beta-likeness": [{"beta": 0.25}, {"beta": 1.0}, {"beta": 3.0}],
    "delta-disclosure": [{"delta": 0.2}, {"delta": 0.5}, {"delta": math.log(2)}, {"delta": 1.5}],
}
WORST_CASE: dict[str, list[dict[str, Any]]] = {
    "negation-safety": [{"c": 0.5, "k": 0}, {"c": 0.6, "k": 1}, {"c": 0.9, "k": 2}],
    "ck-safety": [{"c": 0.5, "k": 0}, {"c": 0.7, "k": 1}, {"c": 0.9, "k": 2}],
    "skyline": [{"points": ["1,1,0,0.7"]}, {"points": ["0,0,1,0.6", "2,0,0,0.9"]}],
}


@st.composite
def count_rows(draw: st.DrawFn, max_groups: int = 5) -> Rows:
    v = draw(st.integers(1, 4))
    g = draw(st.integers(1, max_groups))
    lo = draw(st.integers(0, 1))
    rows = [[draw(st.integers(lo, 5)) for _ in range(v)] for _ in range(g)]
    for row in rows:
        if sum(row) == 0:
            row[draw(st.integers(0, v - 1))] = 1
    return rows


def _benign(draw: st.DataObject, v: int) -> frozenset[int]:
    return frozenset(draw.draw(st.sets(st.integers(0, v - 1), max_size=v)))


def _labels(idx: frozenset[int]) -> frozenset[str]:
    return frozenset(LABELS[i] for i in idx)


def bucket(rows: Rows, benign: frozenset[int] = frozenset()) -> Bucketization:
    return Bucketization.from_group_counts(rows, LABELS[: len(rows[0])]).with_benign(
        _labels(benign)
    )


def _oracle_ok(name: str, params: dict[str, Any], row: list[int], tot: list[int],
               benign: frozenset[int]) -> bool:  # fmt: skip
    if name == "alpha-k-anonymity":
        return ref.alpha_k_group_ok(row, params["alpha"], params["k"], None, benign)
    if name == "basic-beta-likeness":
        return ref.basic_group_ok(row, tot, params["beta"], benign)
    if name == "enhanced-beta-likeness":
        return ref.enhanced_group_ok(row, tot, params["beta"], benign)
    return ref.delta_group_ok(row, tot, params["delta"], benign)


def _oracle_value(name: str, rows: Rows, benign: frozenset[int]) -> float:
    if name == "alpha-k-anonymity":
        return float(ref.alpha_achieved(rows, None, benign))
    if name == "basic-beta-likeness":
        return float(ref.basic_beta(rows, benign))
    if name == "enhanced-beta-likeness":
        feasible = ref.enhanced_feasible(rows, benign)
        return float(ref.basic_beta(rows, benign)) if feasible else math.inf
    return ref.delta_value(rows, benign)


def _close(a: float, b: float) -> bool:
    return a == b if math.isinf(a) or math.isinf(b) else abs(a - b) <= 1e-9


# ------------------------------------------------------ the criteria, whole release
@pytest.mark.parametrize("name", sorted(DISTRIBUTION))
@settings(max_examples=150, deadline=None)
@given(rows=count_rows(), pick=st.data())
def test_distribution_criteria_match_the_definitions_with_benign(
    name: str, rows: Rows, pick: st.DataObject
) -> None:
    params = pick.draw(st.sampled_from(DISTRIBUTION[name]))
    benign = _benign(pick, len(rows[0]))
    tot = ref.table(rows)
    result = evaluate(bucket(rows, benign), name, params)
    assert result.safe == all(_oracle_ok(name, params, r, tot, benign) for r in rows)
    assert _close(result.value, _oracle_value(name, rows, benign))
    assert result.parameters.get("benign", []) == sorted(_labels(benign))


@pytest.mark.parametrize("name", sorted(DISTRIBUTION))
@settings(max_examples=100, deadline=None)
@given(rows=count_rows(), pick=st.data())
def test_group_tests_match_the_definitions_with_benign(
    name: str, rows: Rows, pick: st.DataObject
) -> None:
    """The anonymizers' vectorized tests (bound with the benign values) decide every group
    as the definition does, against the whole table's distribution."""
    params = pick.draw(st.sampled_from(DISTRIBUTION[name]))
    benign = _benign(pick, len(rows[0]))
    labels = LABELS[: len(rows[0])]
    cs = CriteriaSet.parse([(name, params)], _labels(benign)).bind(labels)
    counts = np.asarray(rows, dtype=np.int64)
    tot = ref.table(rows)
    want = [_oracle_ok(name, params, r, tot, benign) for r in rows]
    assert cs.groups_passing(counts, counts.sum(axis=0)).tolist() == want
    assert cs.local()
    assert cs.passes(Bucketization.from_group_counts(rows, labels)) == all(want)


@pytest.mark.parametrize("name", sorted(DISTRIBUTION))
@settings(max_examples=100, deadline=None)
@given(rows=count_rows(), pick=st.data())
def test_benign_labels_absent_from_the_release_change_nothing(
    name: str, rows: Rows, pick: st.DataObject
) -> None:
    params = pick.draw(st.sampled_from(DISTRIBUTION[name]))
    plain = evaluate(bucket(rows), name, params)
    absent = evaluate(bucket(rows).with_benign({"not-in-the-release"}), name, params)
    assert (absent.safe, absent.value, absent.reason, absent.witness) == (
        plain.safe, plain.value, plain.reason, plain.witness,
    )  # fmt: skip
    assert absent.details["benign_absent"] == ["not-in-the-release"]
    labels = LABELS[: len(rows[0])]
    counts = np.asarray(rows, dtype=np.int64)
    with_absent = CriteriaSet.parse([(name, params)], ["not-in-the-release"]).bind(labels)
    without = CriteriaSet.parse([(name, params)]).bind(labels)
    totals = counts.sum(axis=0)
    assert (
        with_absent.groups_passing(counts, totals).tolist()
        == without.groups_passing(counts, totals).tolist()
    )


@pytest.mark.parametrize("name", sorted(DISTRIBUTION))
@settings(max_examples=100, deadline=None)
@given(rows=count_rows(), pick=st.data())
def test_more_benign_values_never_make_a_release_fail(
    name: str, rows: Rows, pick: st.DataObject
) -> None:
    params = pick.draw(st.sampled_from(DISTRIBUTION[name]))
    small = _benign(pick, len(rows[0]))
    large = small | _benign(pick, len(rows[0]))
    a = evaluate(bucket(rows, small), name, params)
    b = evaluate(bucket(rows, large), name, params)
    assert b.value <= a.value
    if a.safe:
        assert b.safe
    labels = LABELS[: len(rows[0])]
    counts = np.asarray(rows, dtype=np.int64)
    totals = counts.sum(axis=0)
    ok_small = CriteriaSet.parse([(name, params)], _labels(small)).bind(labels)
    ok_large = CriteriaSet.parse([(name, params)], _labels(large)).bind(labels)
    assert not (
        ok_small.groups_passing(counts, totals) & ~ok_large.groups_passing(counts, totals)
    ).any()


def test_every_value_benign_passes_the_caps_but_not_k() -> None:
    rows = [[3, 0], [0, 1]]
    b = bucket(rows, frozenset({0, 1}))
    for name, params in (("alpha-k-anonymity", {"alpha": 0.5, "k": 1}),
                         ("basic-beta-likeness", {"beta": 0.1}),
                         ("enhanced-beta-likeness", {"beta": 0.1}),
                         ("delta-disclosure", {"delta": 0.1})):  # fmt: skip
        result = evaluate(b, name, params)
        assert result.safe and result.value == 0.0, name
    assert not evaluate(b, "alpha-k-anonymity", {"alpha": 0.5, "k": 2}).safe


def test_a_group_may_lack_a_benign_value_under_delta_disclosure() -> None:
    # group 1 lacks value A entirely: ln 0 breaks delta for every delta unless A is benign
    rows = [[4, 2, 2], [0, 3, 3]]
    assert evaluate(bucket(rows), "delta-disclosure", {"delta": 2.0}).value == math.inf
    result = evaluate(bucket(rows, frozenset({0})), "delta-disclosure", {"delta": 2.0})
    # p(B) = 5/14, group 1 has 1/2: |ln(7/5)| = 0.336; group 0 has 1/4: |ln(7/10)| = 0.357
    assert result.safe
    assert abs(result.value - abs(math.log(7 / 10))) <= 1e-12
    assert result.details["missing_cells"] == 0


def test_designated_value_that_is_also_benign_is_bad_input_naming_both() -> None:
    params = {"alpha": 0.5, "k": 2, "sensitive_value": LABELS[0]}
    for attempt in (
        lambda: evaluate(bucket([[1, 1]], frozenset({0})), "alpha-k-anonymity", params),
        lambda: CriteriaSet.parse([("alpha-k-anonymity", params)], [LABELS[0]]),
    ):
        with pytest.raises(InputError) as exc:
            attempt()
        text = render(exc.value.args[0], "cli")
        assert "sensitive_value" in text and "--benign" in text
        assert LABELS[0] not in text
        assert "benign_values" in render(exc.value.args[0], "airflow")
    # a designated value that is not benign keeps its cap; other benign values change nothing
    b = bucket([[1, 3], [2, 2]], frozenset({1}))
    result = evaluate(b, "alpha-k-anonymity", {"alpha": 0.5, "k": 2, "sensitive_value": LABELS[0]})
    assert result.safe and result.value == 0.5


# ------------------------------------------- worst-case criteria: the per-group tests
@st.composite
def matrices(draw: st.DrawFn) -> tuple[np.ndarray, tuple[str, ...], frozenset[str]]:
    v = draw(st.integers(1, 4))
    g = draw(st.integers(1, 6))
    rows = [[draw(st.integers(0, 4)) for _ in range(v)] for _ in range(g)]
    for row in rows:
        if sum(row) == 0:
            row[0] = draw(st.integers(1, 3))
    labels = tuple(f"v{j}" for j in range(v))
    benign = frozenset(draw(st.sets(st.sampled_from(labels))))
    return np.asarray(rows, dtype=np.int64), labels, benign


@pytest.mark.parametrize("name", sorted(WORST_CASE))
@settings(max_examples=120, deadline=None)
@given(data=matrices(), pick=st.data())
def test_worst_case_group_tests_are_the_one_group_check_with_benign(
    name: str, data: tuple[np.ndarray, tuple[str, ...], frozenset[str]], pick: st.DataObject
) -> None:
    """Each group's verdict = the registry on a one-group release ``.with_benign(B)`` (the
    check's own verdict): exact for negation-safety, the necessary alone-test of
    (c,k)-safety (cached per sorted (count, benign) profile) and of the skyline."""
    counts, labels, benign = data
    params = pick.draw(st.sampled_from(WORST_CASE[name]))
    cs = CriteriaSet.parse([(name, params)], benign).bind(labels)
    want = [
        evaluate(Bucketization.from_group_counts([row.tolist()], labels).with_benign(benign),
                 name, params).safe
        for row in counts
    ]  # fmt: skip
    assert cs.groups_passing(counts, counts.sum(axis=0)).tolist() == want
    whole = evaluate(Bucketization.from_group_counts(counts, labels).with_benign(benign),
                     name, params)  # fmt: skip
    if name == "negation-safety":
        assert cs.local() and whole.safe == all(want)
    elif not all(want):
        assert not whole.safe  # necessary: a group failing alone fails every release


@settings(max_examples=80, deadline=None)
@given(
    row=st.lists(st.integers(0, 3), min_size=1, max_size=3).filter(lambda r: 0 < sum(r) <= 6),
    k=st.integers(0, 2),
    c=st.sampled_from([0.4, 0.5, 0.6, 2 / 3, 0.75, 1.0]),
    pick=st.data(),
)
def test_negation_group_test_matches_the_possible_worlds_oracle_with_benign(
    row: list[int], k: int, c: float, pick: st.DataObject
) -> None:
    benign = _benign(pick, len(row))
    labels = tuple(f"v{j}" for j in range(len(row)))
    cs = CriteriaSet.parse([("negation-safety", {"c": c, "k": k})], {labels[i] for i in benign})
    counts = np.asarray([row], dtype=np.int64)
    exact = max_disclosure_negations([row], k, benign).value
    assert cs.bind(labels).groups_passing(counts, counts[0]).tolist() == [float(exact) < c]


def test_negation_group_test_takes_the_most_frequent_non_benign_value() -> None:
    # [none=5, x=2, y=1], k=1: target x, rule out none: 2 / (8 - 5) = 2/3
    labels = ("none", "x", "y")
    counts = np.asarray([[5, 2, 1]], dtype=np.int64)
    for c, ok in ((0.67, True), (2 / 3, False), (0.6, False)):
        cs = CriteriaSet.parse([("negation-safety", {"c": c, "k": 1})], ["none"]).bind(labels)
        assert cs.groups_passing(counts, counts[0]).tolist() == [ok], c
    # without the benign value the target is none: 5 / (8 - 2) = 5/6
    cs = CriteriaSet.parse([("negation-safety", {"c": 0.8, "k": 1})]).bind(labels)
    assert cs.groups_passing(counts, counts[0]).tolist() == [False]
    # a group holding only benign values never holds the target
    only = np.asarray([[4, 0, 0]], dtype=np.int64)
    cs = CriteriaSet.parse([("negation-safety", {"c": 0.1, "k": 0})], ["none"]).bind(labels)
    assert cs.groups_passing(only, only[0]).tolist() == [True]


def test_a_group_test_without_the_benign_keyword_is_called_without_it() -> None:
    from airflow_privacy.core.criteria.models import KAnonymity

    calls: list[tuple[str, ...]] = []

    class Sized(KAnonymity):
        def group_test(self, values: Any) -> Any:
            calls.append(tuple(values))
            return super().group_test(values)

    cs = CriteriaSet((Sized({"k": 2}),), benign=frozenset({"v0"})).bind(("v0", "v1"))
    counts = np.asarray([[1, 1], [1, 0]], dtype=np.int64)
    assert cs.groups_passing(counts, counts.sum(axis=0)).tolist() == [True, False]
    assert calls == [("v0", "v1")]
