"""The engine at sizes the exhaustive oracle cannot reach.

Checked against the paper's dynamic program run straightforwardly (benchmarks/paper_dp.py:
no profile deduplication, no candidate pruning), and against the engine with its
optimizations switched off.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import airflow_privacy.core.criteria.worst_case as wc
from airflow_privacy.core.criteria.worst_case import (
    Atom,
    check_ck_safety,
    describe_witness,
    disclosure_curve,
    max_disclosure,
    posterior,
    witness_dict,
)
from airflow_privacy.core.model import Bucketization
from benchmarks.paper_dp import max_disclosure_dp


@st.composite
def bucketizations(draw: st.DrawFn, max_groups: int = 40, max_values: int = 6) -> list[list[int]]:
    n_values = draw(st.integers(1, max_values))
    n_groups = draw(st.integers(1, max_groups))
    rows = []
    for _ in range(n_groups):
        row = draw(st.lists(st.integers(0, 5), min_size=n_values, max_size=n_values))
        if sum(row) == 0:
            row[draw(st.integers(0, n_values - 1))] = 1
        rows.append(row)
    return rows


@settings(max_examples=120, deadline=None)
@given(bucketizations(), st.integers(0, 8))
def test_engine_equals_paper_dp(counts: list[list[int]], k: int) -> None:
    b = Bucketization.from_group_counts(counts)
    assert max_disclosure(b, k).max_disclosure == pytest.approx(
        max_disclosure_dp(counts, k), abs=1e-9
    )


@settings(max_examples=60, deadline=None)
@given(bucketizations(max_groups=30), st.integers(0, 6))
def test_candidate_pruning_and_chunking_change_nothing(counts: list[list[int]], k: int) -> None:
    b = Bucketization.from_group_counts(counts)
    fast = max_disclosure(b, k).max_disclosure
    all_groups = wc._candidates
    chunk = wc._CHUNK
    try:
        wc._candidates = lambda tab, k_max: np.arange(tab.g.shape[0], dtype=np.int64)
        wc._CHUNK = 3
        slow = max_disclosure(b, k).max_disclosure
    finally:
        wc._candidates = all_groups
        wc._CHUNK = chunk
    assert fast == pytest.approx(slow, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(bucketizations(max_groups=12, max_values=5), st.integers(0, 5))
def test_witness_value_is_exact(counts: list[list[int]], k: int) -> None:
    b = Bucketization.from_group_counts(counts)
    res = max_disclosure(b, k)
    exact = posterior(b, res.witness.target, res.witness.atoms)
    assert float(exact) == res.max_disclosure
    neg = max_disclosure(b, k, "negations")
    assert (
        float(posterior(b, neg.witness.target, neg.witness.atoms, "negations"))
        == neg.max_disclosure
    )


def test_large_k_reaches_one_and_stays_bounded() -> None:
    rng = np.random.default_rng(3)
    counts = rng.integers(1, 5, size=(50, 6))
    b = Bucketization.from_group_counts(counts)
    for k in (5, 6, 20):
        res = max_disclosure(b, k)
        assert res.max_disclosure == 1.0
        assert len(res.witness.atoms) <= 5  # ruling out the 5 other values suffices


def test_curve_is_monotone_and_matches_single_calls() -> None:
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 9, size=(200, 8))
    counts[:, 0] += 1
    b = Bucketization.from_group_counts(counts)
    curve = disclosure_curve(b, 8)
    values = [p.implications.max_disclosure for p in curve]
    assert values == sorted(values)
    for p in curve:
        assert p.negations.max_disclosure <= p.implications.max_disclosure + 1e-12
        assert p.implications.max_disclosure == max_disclosure(b, p.k).max_disclosure


def test_paper_figure3_numbers() -> None:
    b = Bucketization.from_group_counts(
        [[2, 2, 1, 0, 0, 0], [2, 0, 0, 1, 1, 1]],
        values=["flu", "lung cancer", "mumps", "breast cancer", "heart disease", "ovarian cancer"],
    )
    ed_lc = Atom(0, 0, "lung cancer")
    assert posterior(b, ed_lc, [], "negations") == Fraction(2, 5)
    assert posterior(b, ed_lc, [Atom(0, 0, "mumps")], "negations") == Fraction(1, 2)
    assert posterior(b, ed_lc, [Atom(0, 0, "mumps"), Atom(0, 0, "flu")], "negations") == 1
    charlie, hannah = Atom(0, 1, "flu"), Atom(1, 0, "flu")
    assert posterior(b, charlie, [hannah]) == Fraction(10, 19)
    # the paper claims 10/19 is the maximum for one implication; it is 2/3
    assert max_disclosure(b, 1).max_disclosure == pytest.approx(2 / 3, abs=1e-15)


def test_witness_in_words() -> None:
    b = Bucketization.from_group_counts([[3, 1, 1], [1, 1, 1]], values=["a", "b", "c"])
    res = max_disclosure(b, 2)
    text = describe_witness(b, res)
    assert text.startswith("an adversary who knows that (1) ")
    assert "concludes that a person in group 'group=0' has value A with probability 1" in text
    # values are letters by first mention, the target's first: never the values themselves
    assert "'a'" not in text and "'b'" not in text and "'c'" not in text
    assert text.startswith(
        "an adversary who knows that (1) the target does not have value B; (2) the target "
        "does not have value C concludes"
    )
    w = witness_dict(b, res)
    assert w["target"]["value_ref"] == "value A" and "value" not in w["target"]
    # one letter per distinct value: equal values get equal letters, different ones not
    pairs = {(a.value, d["value_ref"]) for a, d in zip(res.witness.atoms, w["atoms"], strict=True)}
    pairs.add((res.witness.target.value, "value A"))
    assert len({v for v, _ in pairs}) == len({r for _, r in pairs}) == len(pairs)
    assert w["explanation"] == text
    result = check_ck_safety(b, 0.9, 0)
    assert result.safe is True
    assert "an adversary with no background knowledge" in result.reason
    assert result.witness is not None and result.witness["target"]["value_ref"] == "value A"


def test_posterior_rejects_impossible_knowledge() -> None:
    b = Bucketization.from_group_counts([[1, 1]], values=["a", "b"])
    with pytest.raises(Exception, match="inconsistent"):
        posterior(b, Atom(0, 0, "a"), [Atom(0, 0, "a"), Atom(0, 0, "b")], "negations")
    with pytest.raises(Exception, match="has 2 people"):
        posterior(b, Atom(0, 2, "a"), [])
    with pytest.raises(Exception, match="is not a value"):
        posterior(b, Atom(0, 0, "zz"), [])
