"""The anonymizers' definition-level oracle (:mod:`tests.core.anonymize.oracle`) checked on
hand-computed examples."""

from __future__ import annotations

from fractions import Fraction

import pytest

from airflow_privacy.core.hierarchy import Hierarchy
from tests.core.anonymize.oracle import (
    Problem,
    emd_to_table,
    exhaustive_minimal,
    generalize,
    utility,
)


# ------------------------------------------------------------------- the oracle itself
def _example() -> Problem:
    age = Hierarchy.from_rows(
        "q0", [["20", "20-29", "*"], ["25", "20-29", "*"], ["31", "30-39", "*"]]
    )
    rows = [
        {"q0": "20", "q1": "M", "s": "flu"},
        {"q0": "25", "q1": "F", "s": "flu"},
        {"q0": "31", "q1": "M", "s": "hiv"},
        {"q0": "31", "q1": "F", "s": "flu"},
    ]
    return Problem(rows, ["q0", "q1"], {"q0": age})


def test_oracle_generalizes_row_by_row() -> None:
    p = _example()
    assert p.heights() == (3, 2)
    assert generalize(p, (1, 1)) == [("20-29", "*"), ("20-29", "*"), ("30-39", "*"), ("30-39", "*")]


def test_oracle_minimal_nodes_by_hand() -> None:
    p = _example()
    # 2-anonymity: (1,1) = {20-29: 2, 30-39: 2}; (2,0) = {*,M: 2; *,F: 2}; (0,*) has size-1 groups
    assert exhaustive_minimal(p, [("k-anonymity", {"k": 2})]) == [(1, 1), (2, 0)]
    # with one record of budget, (0, 1) = {20: 1, 25: 1, 31: 2} needs 2 removals: still out;
    # (1, 0) = {20-29,M: 1; 20-29,F: 1; 30-39,M: 1; 30-39,F: 1} needs 4
    assert exhaustive_minimal(p, [("k-anonymity", {"k": 2})], budget=1) == [(1, 1), (2, 0)]
    assert exhaustive_minimal(p, [("k-anonymity", {"k": 2})], budget=2) == [(0, 1), (2, 0)]


def test_oracle_emd_by_hand() -> None:
    # group {a, a} vs table {a, a, b, b}: total variation distance 1/2
    assert emd_to_table(["a", "a"], ["a", "a", "b", "b"], None) == Fraction(1, 2)
    # ordered: p - q = (3/4, -1/4, -1/2), prefix sums 3/4, 1/2, 0, over m - 1 = 2
    assert emd_to_table(["1", "1"], ["1", "2", "3", "3"], None) == Fraction(5, 8)


def test_oracle_utility_by_hand() -> None:
    p = _example()
    u = utility(p, (1, 1), [("k-anonymity", {"k": 2})])
    assert u["discernibility"] == 8.0
    assert u["average-class-size"] == 2.0
    # q0 at level 1 of 2, q1 at level 1 of 1: (1/2 + 1) / 2
    assert u["precision"] == pytest.approx(1 - 0.75)
    # loss: q0 "20-29" spans 5 of 11 (rows 1-2), "30-39" spans 0; q1 "*" covers 2 of 2 -> 1
    assert u["loss"] == pytest.approx((5 / 11 * 2 + 0 * 2 + 4 * 1) / 8)
    # NUE: q0 rows 20,25: -log2(1/2) each, 31s: -log2(2/2); q1: -log2(2/4) for all four
    assert u["non-uniform-entropy"] == pytest.approx(2 * 1 + 0 + 4 * 1)
