"""The risk criteria (prosecutor risk limits, k-map with ARX's estimators) against oracles
written from the definitions: a per-record loop with Fractions over the release's records,
and the derived threshold recomputed from scipy.stats' Poisson quantiles."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from airflow_privacy.core.criteria.k_map import derived_k, k_map_estimated
from airflow_privacy.core.criteria.prosecutor_risk import (
    prosecutor_groups_pass,
    prosecutor_risk_criterion,
    smallest_safe_size,
)
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError

LIMITS = [0.05, 0.1, 0.2, 1 / 3, 0.25, 0.5, 1.0, 0.3333, 0.142857]


def _release(sizes: list[int]) -> Bucketization:
    # two sensitive values, split arbitrarily: the criteria ignore them
    return Bucketization.from_group_counts([[s - s // 2, s // 2] for s in sizes], ("x", "y"))


def _oracle(
    sizes: list[int], highest: float | None, records: float | None, average: float | None
) -> bool:
    """Per record: its group's size, its risk 1/size; the limits read as written."""
    people = [s for s in sizes for _ in range(s)]
    n = len(people)
    risks = [Fraction(1, s) for s in people]
    ok = True
    if highest is not None:
        h = Fraction(repr(highest))
        if records is None:
            ok &= all(r <= h for r in risks)
        else:
            ok &= Fraction(sum(1 for r in risks if r > h), n) <= Fraction(repr(records))
    if average is not None:
        ok &= sum(risks, Fraction(0)) / n <= Fraction(repr(average))
    return ok


sizes_st = st.lists(st.integers(1, 12), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(
    sizes_st,
    st.none() | st.sampled_from(LIMITS),
    st.none() | st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]),
    st.none() | st.sampled_from(LIMITS),
)
def test_prosecutor_risk_matches_per_record_oracle(
    sizes: list[int], highest: float | None, records: float | None, average: float | None
) -> None:
    if highest is None and average is None:
        highest = 0.25
    if records is not None and highest is None:
        records = None
    r = prosecutor_risk_criterion(_release(sizes), highest, records, average)
    assert r.safe == _oracle(sizes, highest, records, average)
    assert r.details["average_risk"] == pytest.approx(len(sizes) / sum(sizes), abs=1e-12)
    assert r.details["highest_risk"] == pytest.approx(1 / min(sizes), abs=1e-12)
    if highest is not None:
        h = Fraction(repr(highest))
        at_risk = sum(s for s in sizes if Fraction(1, s) > h)
        assert r.details["n_records_at_risk"] == at_risk


@pytest.mark.parametrize("highest", LIMITS)
def test_group_test_decides_as_the_criterion(highest: float) -> None:
    sizes = list(range(1, 40))
    ok = prosecutor_groups_pass(np.array([[s, 0] for s in sizes], dtype=np.int64), highest)
    for s, passed in zip(sizes, ok, strict=True):
        assert bool(passed) == (Fraction(1, s) <= Fraction(repr(highest)))
        assert bool(passed) == prosecutor_risk_criterion(_release([s]), highest).safe
    need = smallest_safe_size(highest)
    assert Fraction(1, need) <= Fraction(repr(highest)) < Fraction(1, max(need - 1, 1)) or need == 1


def test_ties_at_the_limit_are_as_written() -> None:
    # 1/20 equals 0.05 exactly: passes; 1/3 is above the decimal 0.3333
    assert prosecutor_risk_criterion(_release([20, 25]), highest=0.05).safe
    assert not prosecutor_risk_criterion(_release([19, 25]), highest=0.05).safe
    assert not prosecutor_risk_criterion(_release([3, 5]), highest=0.3333).safe
    # average 2 groups / 10 records = 0.2 exactly
    assert prosecutor_risk_criterion(_release([5, 5]), average=0.2).safe
    assert not prosecutor_risk_criterion(_release([4, 5]), average=0.2).safe


def test_reason_names_group_and_size_not_values() -> None:
    b = Bucketization.from_group_counts([[1, 0], [3, 4]], ("HIV", "flu"))
    r = prosecutor_risk_criterion(b, highest=0.2)
    assert not r.safe
    assert (
        "group 'group=0'" in r.reason
        and "1 record" in r.reason
        and "at least 5 records" in r.reason
    )
    assert "HIV" not in r.reason and "flu" not in r.reason


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "needs highest or average"),
        ({"records": 0.1, "average": 0.5}, "records needs highest"),
        ({"highest": 0}, "highest must be in (0, 1]"),
        ({"highest": 1.5}, "highest must be in (0, 1]"),
        ({"highest": 0.1, "records": -0.1}, "records must be in [0, 1]"),
        ({"average": "x"}, "average must be a number"),
        ({"highest": float("nan")}, "highest must be"),
    ],
)
def test_prosecutor_parameter_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        prosecutor_risk_criterion(_release([2, 3]), **kwargs)  # type: ignore[arg-type]


def test_prosecutor_risk_is_monotone_under_merging() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        sizes = [int(x) for x in rng.integers(1, 10, size=int(rng.integers(2, 7)))]
        highest = float(rng.choice(LIMITS))
        records = float(rng.choice([0.0, 0.2, 0.5]))
        average = float(rng.choice(LIMITS))
        i, j = sorted(rng.choice(len(sizes), size=2, replace=False).tolist())
        merged = [s for t, s in enumerate(sizes) if t not in (i, j)] + [sizes[i] + sizes[j]]
        for args in ((highest, None, None), (highest, records, None), (None, None, average)):
            if prosecutor_risk_criterion(_release(sizes), *args).safe:
                assert prosecutor_risk_criterion(_release(merged), *args).safe


# ---------------------------------------------------------------- k-map


def _scipy_k(k: int, alpha: float, pi: float, n: int, estimator: str) -> int:
    lam = pi * k
    if estimator == "poisson":
        m = stats.poisson.ppf(1.0 - alpha, lam)
        m = math.inf if math.isinf(m) or math.isnan(m) else int(m)
        return int(min(k, n, m + 2))
    p0 = stats.poisson.pmf(0, lam)
    m = 0
    while m < k:
        if m and (stats.poisson.cdf(m, lam) - p0) / (1.0 - p0) >= 1.0 - alpha:
            break
        m += 1
    return min(k, n, m + 1)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(1, 30), min_size=1, max_size=8),
    st.integers(1, 40),
    st.sampled_from([0.01, 0.05, 0.1, 0.3, 0.7, 1.0]),
    st.sampled_from(["poisson", "zero-truncated-poisson"]),
    st.sampled_from([0.01, 0.05, 0.2]),
)
def test_k_map_estimated_matches_scipy(
    sizes: list[int], k: int, pi: float, estimator: str, alpha: float
) -> None:
    n = sum(sizes)
    need = _scipy_k(k, alpha, pi, n, estimator)
    if Fraction(k) > Fraction(n) / Fraction(repr(pi)):  # k beyond the whole population
        need = n + 1
    r = k_map_estimated(
        _release(sizes), k, sampling_fraction=pi, estimator=estimator, significance=alpha
    )
    assert r.details["derived_k"] == need
    assert r.safe == all(s >= need for s in sizes)
    assert r.value == min(sizes)


def test_k_map_population_size_gives_the_fraction() -> None:
    r = k_map_estimated(_release([5, 5]), 10, population_size=100)
    assert r.details["sampling_fraction"] == pytest.approx(0.1, abs=1e-15)
    assert r.parameters == {
        "k": 10,
        "population_size": 100,
        "estimator": "poisson",
        "significance": 0.01,
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 5}, "exactly one of sampling_fraction and population_size"),
        ({"k": 5, "sampling_fraction": 0.1, "population_size": 10}, "exactly one of"),
        ({"k": 0, "sampling_fraction": 0.1}, "k must be a whole number"),
        ({"k": 5, "sampling_fraction": 0}, "sampling_fraction must be in"),
        ({"k": 5, "population_size": 3}, "below the release's 5 records"),
        ({"k": 5, "sampling_fraction": 0.1, "estimator": "gauss"}, "estimator must be one of"),
        ({"k": 5, "sampling_fraction": 0.1, "significance": 2}, "significance must be in"),
    ],
)
def test_k_map_parameter_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        k_map_estimated(_release([2, 3]), **kwargs)  # type: ignore[arg-type]


def test_derived_k_is_fixed_by_n_so_merging_keeps_passing() -> None:
    need, _, _ = derived_k(100, 20, sampling_fraction=0.2)
    assert 1 <= need <= 20


def test_k_map_beyond_the_population_never_passes() -> None:
    """ARX caps k' at the record count, so one group of every record would pass any k; here
    k above the population (n / pi people) fails whatever the release."""
    one_group = _release([10])
    assert not k_map_estimated(one_group, 21, sampling_fraction=0.5).safe  # 20 people
    assert k_map_estimated(one_group, 20, sampling_fraction=0.5).safe
    assert not k_map_estimated(one_group, 101, population_size=100).safe
    r = k_map_estimated(one_group, 10**9, sampling_fraction=0.5)
    assert "exceeds the population of about 20 people" in r.reason
