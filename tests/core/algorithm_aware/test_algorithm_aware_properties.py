"""Property tests on small random tables: the engine's exact disclosure sets, posteriors,
releases and safe decisions equal the brute-force oracle's (tests/algorithm_aware_oracle.py,
exact fractions), and safe releases always pass their own audit."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.algorithm_aware import (
    AlgorithmAuditResult,
    Candidate,
    Population,
    audit_algorithm,
    choose_release,
    make_rule,
)
from airflow_privacy.core.algorithm_aware.worlds import BlockEnumerator, block_size
from tests import algorithm_aware_oracle as oracle

CRITERIA: list[tuple[str, dict[str, Any]]] = [
    ("entropy-l-diversity", {"l": 2}),
    ("entropy-l-diversity", {"l": 1.5}),
    ("distinct-l-diversity", {"l": 2}),
    ("recursive-cl-diversity", {"c": 2, "l": 2}),
    ("recursive-cl-diversity", {"c": 1, "l": 2}),
    ("k-anonymity", {"k": 2}),
    ("t-closeness", {"t": 0.25}),
    ("t-closeness", {"t": 0.5}),
]


@st.composite
def problems(draw: st.DrawFn) -> tuple[list[str], list[list[int]], tuple[str, dict[str, Any]]]:
    if draw(st.booleans()):
        return paper_like(random.Random(draw(st.integers(0, 2**32))))
    n = draw(st.integers(2, 6))
    values = draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    m = draw(st.integers(1, 4))
    cands = [draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n)) for _ in range(m)]
    if draw(st.booleans()):
        cands.append([0] * n)
    return values, cands, draw(st.sampled_from(CRITERIA))


def build(values: list[str], cands: list[list[int]]) -> tuple[Population, list[Candidate]]:
    pop = Population.from_values([f"p{i}" for i in range(len(values))], values)
    return pop, [Candidate.from_keys(f"c{i}", g) for i, g in enumerate(cands)]


def assert_matches(result: AlgorithmAuditResult, ds: list[tuple[str, ...]], threshold: float
                   ) -> None:  # fmt: skip
    assert result.method == "exact"
    assert result.disclosure_set_size == len(ds)
    if not ds:
        assert result.people == [] and result.flagged == []
        return
    post = oracle.posterior(ds)
    size = result.disclosure_set_size
    by_person = {p.person: p for p in result.people}
    flagged = []
    for t, dist in enumerate(post):
        entry = by_person[f"p{t}"]
        got = {v: Fraction(c, size) for v, c in entry.worlds.items()}
        assert got == dist
        for v, p in entry.posterior.items():
            assert abs(p - float(dist[v])) <= 1e-9
        if max(dist.values()) >= Fraction(threshold):
            flagged.append(f"p{t}")
    assert sorted(result.flagged) == sorted(flagged)


@settings(max_examples=60, deadline=None)
@given(problems(), st.sampled_from([0.5, 0.75, 1.0]))
def test_naive_audit_equals_brute_force(problem: Any, threshold: float) -> None:
    values, groups, crit = problem
    pop, cands = build(values, groups)
    x = tuple(values)
    rule = make_rule("naive", pop, cands, [crit])
    assert rule.release(pop.truth) == oracle.naive_release(groups, crit, x)
    for r in range(len(cands)):
        result = audit_algorithm(pop, cands, [crit], released=r, threshold=threshold)
        ds = oracle.naive_disclosure_set(groups, crit, x, r)
        assert_matches(result, ds, threshold)
        assert result.released_passes == oracle.table_passes(crit, groups[r], x)
        assert result.true_world_in_set == (x in ds)
        if ds:
            assert result.predicate_on_set["passes"] == oracle.set_passes(crit, groups[r], ds)
        if r == 0:  # nothing earlier: the set form is the table form
            assert result.predicate_on_set["passes"] == result.released_passes


@settings(max_examples=40, deadline=None)
@given(problems(), st.sampled_from([1, 3, 20, 10**6]))
def test_safe_audit_and_release_equal_brute_force(problem: Any, limit: int) -> None:
    values, groups, crit = problem
    pop, cands = build(values, groups)
    x = tuple(values)
    released = oracle.safe_ddf(groups, crit, x, limit)
    choice = choose_release(make_rule("safe", pop, cands, [crit], exact_limit=limit))
    assert choice.released_index == released.get(x)
    for r in range(len(cands)):
        # the audit uses the algorithm's own bound (another bound is another DDF); a block
        # above it is sampled, not enumerated
        result = audit_algorithm(pop, cands, [crit], released=r, mode="safe", exact_limit=limit)
        if result.method == "sampling":
            assert result.consistent_worlds is not None and result.consistent_worlds > limit
            continue
        assert_matches(result, oracle.safe_disclosure_set(groups, crit, x, r, limit), 1.0)


@settings(max_examples=60, deadline=None)
@given(problems(), st.sampled_from([1, 4, 30, 10**6]))
def test_safe_releases_pass_their_own_audit(problem: Any, limit: int) -> None:
    values, groups, crit = problem
    pop, cands = build(values, groups)
    choice = choose_release(make_rule("safe", pop, cands, [crit], exact_limit=limit))
    if choice.released_index is None:
        return
    r = choice.released_index
    result = audit_algorithm(pop, cands, [crit], mode="safe", exact_limit=limit)
    assert result.released_index == r
    assert result.method == "exact"  # a safe release never has a block above the bound
    assert result.true_world_in_set
    assert result.predicate_on_set["passes"] is True
    ds = oracle.safe_disclosure_set(groups, crit, tuple(values), r, limit)
    assert oracle.set_passes(crit, groups[r], ds)  # checked independently of the engine
    # and the released table itself passes (the set forms are convex in the posterior)
    assert oracle.table_passes(crit, groups[r], tuple(values))


@settings(max_examples=60, deadline=None)
@given(problems(), st.integers(0, 3))
def test_block_enumeration_is_the_block(problem: Any, which: int) -> None:
    values, groups, _ = problem
    pop, cands = build(values, groups)
    cand = cands[which % len(cands)]
    key = cand.counts(pop.truth[None, :], pop.n_values)[0]
    enum = BlockEnumerator(cand, key, pop.n)
    got = [tuple(pop.values[v] for v in row) for chunk in enum.chunks(7) for row in chunk]
    assert len(got) == len(set(got)) == enum.size == block_size(key)
    want = oracle.shown(groups[which % len(groups)], tuple(values))
    expected = [
        y for y in oracle.all_worlds(values) if oracle.shown(groups[which % len(groups)], y) == want
    ]
    assert sorted(got) == expected


def test_sample_block_is_uniform() -> None:
    """Chi-square-free check: every world of a 30-world block is drawn about equally."""
    from airflow_privacy.core.algorithm_aware.worlds import sample_block

    pop = Population.from_values([str(i) for i in range(6)], list("aabbcd"))
    cand = Candidate.from_keys("g", [0, 0, 0, 1, 1, 1])
    rows = sample_block(cand, pop.truth, 60_000, np.random.default_rng(1))
    freq = Counter(map(tuple, rows.tolist()))
    size = block_size(cand.counts(pop.truth[None, :], pop.n_values)[0])
    assert len(freq) == size
    expected = 60_000 / size
    assert all(abs(c - expected) < 6 * expected**0.5 for c in freq.values())


def paper_like(rng: random.Random) -> tuple[list[str], list[list[int]], tuple[str, dict[str, Any]]]:
    """Two QIs (3 x 2 values), the paper's four candidates in one of two orders, distinct
    sensitive values but one repeated: the shape in which the naive algorithm leaks."""
    n = rng.randint(4, 7)
    base = rng.sample("abcdefg", n - 1)
    values = [*base, rng.choice(base)]
    rng.shuffle(values)
    q1 = [rng.randrange(3) for _ in range(n)]
    q2 = [rng.randrange(2) for _ in range(n)]
    cands = [[a * 2 + b for a, b in zip(q1, q2, strict=True)], q1, q2, [0] * n]
    if rng.random() < 0.5:
        cands = [cands[0], cands[2], cands[1], cands[3]]
    return values, cands, rng.choice(CRITERIA[:5])


def test_seeded_paper_like_tables_equal_brute_force() -> None:
    """150 seeded tables of the paper's shape: releases, disclosure sets and posteriors of
    both modes equal the oracle's, and the tables do exercise leaks (not a vacuous test)."""
    rng = random.Random(20070101)
    leaks = differ = 0
    for _ in range(150):
        values, groups, crit = paper_like(rng)
        pop, cands = build(values, groups)
        x = tuple(values)
        naive = oracle.naive_release(groups, crit, x)
        safe = oracle.safe_ddf(groups, crit, x).get(x)
        assert make_rule("naive", pop, cands, [crit]).release(pop.truth) == naive
        assert choose_release(make_rule("safe", pop, cands, [crit])).released_index == safe
        if naive is not None:
            ds = oracle.naive_disclosure_set(groups, crit, x, naive)
            result = audit_algorithm(pop, cands, [crit], threshold=0.75)
            assert_matches(result, ds, 0.75)
            leaks += not oracle.set_passes(crit, groups[naive], ds)
        if safe is not None:
            ds = oracle.safe_disclosure_set(groups, crit, x, safe)
            result = audit_algorithm(pop, cands, [crit], mode="safe")
            assert_matches(result, ds, 1.0)
            assert result.predicate_on_set["passes"] is True
        differ += naive != safe
    assert leaks >= 3 and differ >= 3
