"""Sampling mode: on tables small enough to enumerate, the exact posterior lies inside the
reported confidence interval in at least 95% of seeded runs; too-rare acceptance is said."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from airflow_privacy.core.algorithm_aware import (
    Candidate,
    Population,
    audit_algorithm,
    make_rule,
)
from airflow_privacy.core.algorithm_aware.intervals import binomial_interval
from airflow_privacy.core.algorithm_aware.rules import disclosure_counts
from tests import algorithm_aware_oracle as oracle

NAMES = ["Alan", "Bob", "Clark", "Diana", "Ellen", "Fen"]
AGE = ["Old", "Old", "Middle", "Middle", "Young", "Young"]
SEX = ["M", "M", "M", "F", "F", "F"]
COND = ["Heart Disease", "Viral Infection", "Cancer", "Cancer", "Flu", "Ulcer"]
ENTROPY2 = [("entropy-l-diversity", {"l": 2})]


def paper() -> tuple[Population, list[Candidate]]:
    pop = Population.from_values(NAMES, COND, "condition")
    cands = [
        Candidate.from_keys("age,sex", list(zip(AGE, SEX, strict=True))),
        Candidate.from_keys("age", AGE),
        Candidate.from_keys("sex", SEX),
        Candidate.from_keys("*", ["*"] * 6),
    ]
    return pop, cands


def exact_posterior(mode: str, limit: int, r: int) -> tuple[np.ndarray, int]:
    pop, cands = paper()
    rule = make_rule(mode, pop, cands, ENTROPY2, exact_limit=limit)
    key = cands[r].counts(pop.truth[None, :], pop.n_values)[0]
    counts, size = disclosure_counts(rule, r, cands[r], key)
    return counts / size, size


@pytest.mark.parametrize(
    ("mode", "interval"),
    [("naive", "clopper-pearson"), ("safe", "clopper-pearson"), ("naive", "wilson")],
)
def test_exact_posterior_inside_the_interval_in_95_percent_of_runs(
    mode: str, interval: str
) -> None:
    pop, cands = paper()
    limit = 100  # the released block (*, *) has 360 worlds: sampled
    post, size = exact_posterior(mode, limit, 3)
    if mode == "naive":  # cross-check the reference with the oracle
        groups = [c.groups.tolist() for c in cands]
        ds = oracle.naive_disclosure_set(groups, ENTROPY2[0], tuple(COND), 3)
        assert len(ds) == size == 48
        for t, dist in enumerate(oracle.posterior(ds)):
            for v, p in dist.items():
                assert Fraction(post[t, pop.values.index(v)]).limit_denominator(1000) == p
    inner = (post > 0) & (post < 1)
    assert inner.sum() >= 10
    covered = np.zeros(post.shape)
    runs = 300
    for seed in range(runs):
        result = audit_algorithm(
            pop,
            cands,
            ENTROPY2,
            released="*",
            mode=mode,
            exact_limit=limit,
            samples=600,
            seed=seed,
            interval=interval,
            min_accepted=1,
        )
        assert result.method == "sampling"
        assert result.sampling is not None and result.sampling.accepted > 0
        for person in result.people:
            t = NAMES.index(person.person)
            assert person.interval is not None
            for v, (lo, hi) in person.interval.items():
                covered[t, pop.values.index(v)] += (
                    lo - 1e-12 <= post[t, pop.values.index(v)] <= hi + 1e-12
                )
    rate = covered[inner] / runs
    if interval == "clopper-pearson":  # the default: conservative for every p
        assert rate.mean() >= 0.95
        assert rate.min() >= 0.93
    else:  # Wilson is shorter, its coverage is only close to nominal (docs/algorithm-aware.md)
        assert rate.mean() >= 0.93
    assert (covered[~inner] == runs).all()  # 0 and 1 are always inside


def test_sampled_paper_example_flags_clark_and_diana() -> None:
    pop, cands = paper()
    result = audit_algorithm(pop, cands, ENTROPY2, exact_limit=10, samples=4000, seed=3)
    assert result.method == "sampling" and result.released == "sex"
    assert sorted(result.flagged) == ["Clark", "Diana"]
    assert result.sampling is not None and result.sampling.estimable
    assert result.sampling.estimated_set_size is not None
    lo, hi = result.sampling.estimated_set_size
    assert lo <= 4 <= hi  # the exact disclosure set has 4 of the 36 worlds
    log_lo, log_hi = result.sampling.log10_estimated_set_size
    assert log_lo is not None and log_hi is not None
    assert abs(10**log_lo - lo) < 1e-9 * max(lo, 1) and abs(10**log_hi - hi) < 1e-9 * hi
    assert result.consistent_worlds == 36 and abs(result.log10_consistent_worlds - 1.556303) < 1e-6


def test_too_rare_acceptance_is_reported() -> None:
    pop, cands = paper()
    result = audit_algorithm(pop, cands, ENTROPY2, exact_limit=10, samples=40, seed=0)
    assert result.sampling is not None
    assert result.sampling.accepted < 100 and not result.sampling.estimable
    assert "too rare" in result.reason


def test_intervals_against_known_values() -> None:
    lo, hi = binomial_interval(np.array([0, 5, 10]), 10, 0.95, "clopper-pearson")
    # Clopper-Pearson for 5/10: (0.187086, 0.812914); 0/10: (0, 0.308497)
    assert lo[0] == 0 and abs(hi[0] - 0.3084971) < 1e-6
    assert abs(lo[1] - 0.1870860) < 1e-6 and abs(hi[1] - 0.8129140) < 1e-6
    assert hi[2] == 1
    lo, hi = binomial_interval(np.array([5]), 10, 0.95, "wilson")
    assert abs(lo[0] - 0.2365931) < 1e-6 and abs(hi[0] - 0.7634069) < 1e-6


def test_sampled_predicate_separates_failures_from_sampling_error() -> None:
    """Alan, Bob, Ellen and Fen sit exactly on the entropy 2-diversity boundary (posterior
    1/2, 1/2): a sample estimate fails them about half the time; they must be reported
    within sampling error, not failing. Clark and Diana (posterior 1) fail for certain."""
    pop, cands = paper()
    for seed in range(5):
        result = audit_algorithm(pop, cands, ENTROPY2, exact_limit=10, samples=4000, seed=seed)
        on_set = result.predicate_on_set
        assert on_set["estimated"] and on_set["passes"] is False
        assert sorted(on_set["failing_people"]) == ["Clark", "Diana"]
        assert set(on_set["within_error"]) <= {"Alan", "Bob", "Ellen", "Fen"}
    exact = audit_algorithm(pop, cands, ENTROPY2)
    assert exact.predicate_on_set["within_error"] == []


def test_waterfill_is_the_maximum_entropy_point_of_the_box() -> None:
    from airflow_privacy.core.algorithm_aware.predicate import _waterfill

    rng = np.random.default_rng(7)
    for _ in range(200):
        v = int(rng.integers(2, 6))
        centre = rng.dirichlet(np.ones(v))
        lo = np.clip(centre - rng.uniform(0, 0.3, v), 0, 1)
        hi = np.clip(centre + rng.uniform(0, 0.3, v), 0, 1)
        q = _waterfill(np.zeros(v), lo, hi)
        assert abs(q.sum() - 1) < 1e-9
        assert (q >= lo - 1e-9).all() and (q <= hi + 1e-9).all()
        h = -(q * np.log(np.where(q > 0, q, 1))).sum()
        for _ in range(20):  # no random point of the box on the simplex beats it
            z = rng.uniform(lo, hi)
            if abs(z.sum() - 1) > 0.05:
                continue
            z = z / z.sum()
            if (z >= lo).all() and (z <= hi).all():
                assert -(z * np.log(np.where(z > 0, z, 1))).sum() <= h + 1e-9
    assert np.allclose(_waterfill(np.zeros(4), np.zeros(4), np.ones(4)), 0.25)
