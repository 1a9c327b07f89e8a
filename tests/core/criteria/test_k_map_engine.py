"""k-map (population table and ARX's estimators) and delta-presence
(the engines on class sizes of :mod:`airflow_privacy.core.criteria.k_map` and
:mod:`airflow_privacy.core.criteria.delta_presence`) against oracles written from the definitions:
per-record loops over explicit sample and population tables with Fractions, and ARX's
derived threshold recomputed from the Poisson and zero-truncated Poisson distributions with
scipy.stats."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from airflow_privacy.core.criteria.delta_presence import presence_of_classes as delta_presence
from airflow_privacy.core.criteria.k_map import arx_derived_k, kmap_estimate, kmap_population
from airflow_privacy.errors import InputError
from tests.core.criteria.kmap_oracle import oracle_kmap as _oracle_kmap
from tests.core.criteria.kmap_oracle import oracle_presence as _oracle_presence

# ---------------------------------------------------------------- oracles


def _scipy_poisson_k(k: int, alpha: float, pi: float, n: int) -> int:
    lam = pi * k
    m = stats.poisson.ppf(1.0 - alpha, lam)  # smallest m with P[X <= m] >= 1 - alpha
    m = math.inf if math.isinf(m) or math.isnan(m) else int(m)
    return int(min(k, n, m + 2))


def _scipy_ztp_k(k: int, alpha: float, pi: float, n: int) -> int:
    lam = pi * k
    p0 = stats.poisson.pmf(0, lam)
    q = 1.0 - alpha
    m = 0
    while m < k:  # the zero-truncated cdf, (P[X <= m] - P[X = 0]) / (1 - P[X = 0])
        ztp_cdf = 0.0 if m == 0 else (stats.poisson.cdf(m, lam) - p0) / (1.0 - p0)
        if ztp_cdf >= q:
            break
        m += 1
    return min(k, n, m + 1)


# ---------------------------------------------------------------- hand examples


def test_kmap_population_hand_example() -> None:
    r = kmap_population([2, 1, 3], [10, 4, 3], k=5)
    assert not r.satisfied
    assert r.violating_classes == (1, 2)
    assert r.smallest_population_class == 3
    assert r.n_records_violating == 4
    assert r.records_violating == Fraction(4, 6)
    assert r.to_dict()["records_violating"] == {"value": 4 / 6, "exact": "2/3"}
    assert kmap_population([2, 1, 3], [10, 4, 3], k=3).satisfied


def test_delta_presence_hand_example() -> None:
    # P = 1/2, 1/4, 0/5, 1
    r = delta_presence([1, 1, 0, 2], [2, 4, 5, 2], delta_min=0.1, delta_max=0.5)
    assert r.min_presence == 0 and r.max_presence == 1
    assert r.violating_classes == (2, 3)
    assert not r.satisfied
    assert delta_presence([1, 1], [2, 4], 0.25, 0.5).satisfied  # both ends inclusive
    d = r.to_dict()
    assert d["min_presence"]["exact"] == "0/1" and d["violating_classes"] == [2, 3]


def test_delta_presence_limit_read_as_decimal() -> None:
    # 3/10 is exactly 0.3 as typed, though Fraction(0.3) < 3/10
    assert delta_presence([3], [10], 0.0, 0.3).satisfied
    assert delta_presence([3], [10], 0.3, 1.0).satisfied


def test_poisson_hand_example() -> None:
    # lambda = 0.1 * 10 = 1; Poisson(1) cdf: 0.368, 0.736, 0.920, 0.981 -> m = 3 for 0.95,
    # ARX returns counter + 1 = 5
    assert arx_derived_k(10, 0.05, 0.1, 1000, "poisson")[0] == 5
    # zero-truncated: (cdf(m) - e^-1) / (1 - e^-1): 0.582, 0.873, 0.971 -> m = 3, k' = 4
    assert arx_derived_k(10, 0.05, 0.1, 1000, "zero_truncated_poisson")[0] == 4
    # the early stop at k and the caps at k and n
    assert arx_derived_k(3, 0.05, 0.9, 1000, "poisson") == (3, 0.0)
    assert arx_derived_k(10, 0.05, 0.1, 3, "poisson")[0] == 3
    # significance level 1: the loop is not entered
    assert arx_derived_k(10, 1.0, 0.1, 1000, "poisson") == (1, 1.0)
    assert arx_derived_k(10, 1.0, 0.1, 1000, "zero_truncated_poisson") == (1, 1.0)


def test_kmap_estimate_hand_example() -> None:
    r = kmap_estimate([5, 4, 7, 6], 10, 0.05, population_size=220)  # n = 22, pi = 0.1
    assert r.sampling_fraction == 0.1 and r.lam == 1.0
    assert r.derived_k == 5
    assert r.violating_classes == (1,)
    assert r.records_violating == Fraction(4, 22)
    type1 = 1 - stats.poisson.cdf(3, 1.0)
    assert r.type1_error == pytest.approx(type1, abs=1e-12)
    s = kmap_estimate([5, 4], 10, 0.05, sampling_fraction=0.1, estimator="zero_truncated_poisson")
    assert s.derived_k == 4 and s.satisfied and s.population_size is None
    assert s.to_dict()["estimator"] == "zero_truncated_poisson"


# ---------------------------------------------------------------- oracles on random inputs

_classes = st.lists(st.tuples(st.integers(1, 5), st.integers(0, 6)), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(classes=_classes, k=st.integers(1, 12))
def test_kmap_population_matches_oracle(classes: list[tuple[int, int]], k: int) -> None:
    f = [a for a, _ in classes]
    extra = [b for _, b in classes]
    r = kmap_population(f, [a + b for a, b in classes], k)
    ok, bad, share = _oracle_kmap(f, extra, k)
    assert r.satisfied == ok
    assert set(r.violating_classes) == bad
    assert r.records_violating == share
    assert r.smallest_population_class == min(a + b for a, b in classes)


_fractions = st.fractions(min_value=0, max_value=1, max_denominator=12)


@settings(max_examples=150, deadline=None)
@given(
    classes=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 6)), min_size=1, max_size=6),
    bounds=st.tuples(_fractions, _fractions),
)
def test_delta_presence_matches_oracle(
    classes: list[tuple[int, int]], bounds: tuple[Fraction, Fraction]
) -> None:
    classes = [(a, b if a + b > 0 else 1) for a, b in classes]
    f = [a for a, _ in classes]
    extra = [b for _, b in classes]
    lo, hi = sorted(bounds)
    r = delta_presence(f, [a + b for a, b in classes], lo, hi)
    ok, bad, pmin, pmax = _oracle_presence(f, extra, lo, hi)
    assert r.satisfied == ok
    assert set(r.violating_classes) == bad
    assert (r.min_presence, r.max_presence) == (pmin, pmax)


@settings(max_examples=200, deadline=None)
@given(
    k=st.integers(1, 150),
    alpha=st.floats(0.001, 0.999),
    pi=st.floats(0.001, 1.0),
    n=st.integers(1, 500),
)
def test_derived_k_matches_scipy(k: int, alpha: float, pi: float, n: int) -> None:
    assert arx_derived_k(k, alpha, pi, n, "poisson")[0] == _scipy_poisson_k(k, alpha, pi, n)
    assert arx_derived_k(k, alpha, pi, n, "zero_truncated_poisson")[0] == _scipy_ztp_k(
        k, alpha, pi, n
    )


@settings(max_examples=200, deadline=None)
@given(k=st.integers(3, 400), alpha=st.floats(0.0001, 0.2), n=st.integers(3, 40))
def test_capped_threshold_reports_the_error_of_the_threshold_applied(
    k: int, alpha: float, n: int
) -> None:
    """Where k' is capped at the record count n, the type I error is that of the threshold
    applied, from scipy (docs/kmap-delta-presence.md): Poisson k' = m + 2 gives
    1 - P[X <= n - 2]; zero-truncated k' = m + 1 gives 1 - P[1 <= X <= n - 1] / (1 - P[X = 0])."""
    pi = 0.9
    lam = pi * k
    derived, type1 = arx_derived_k(k, alpha, pi, n, "poisson")
    if _scipy_poisson_k(k, alpha, pi, 10**9) > n and n < k:
        assert derived == n
        assert type1 == pytest.approx(float(stats.poisson.sf(n - 2, lam)), abs=1e-12)
    derived, type1 = arx_derived_k(k, alpha, pi, n, "zero_truncated_poisson")
    if _scipy_ztp_k(k, alpha, pi, 10**9) > n and n < k:
        assert derived == n
        p0 = float(stats.poisson.pmf(0, lam))
        reached = (float(stats.poisson.cdf(n - 1, lam)) - p0) / (1.0 - p0)
        assert type1 == pytest.approx(1.0 - reached, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(
    f=st.lists(st.integers(1, 30), min_size=1, max_size=8),
    k=st.integers(1, 60),
    alpha=st.floats(0.001, 0.5),
    extra=st.integers(0, 2000),
)
def test_kmap_estimate_decides_per_class(f: list[int], k: int, alpha: float, extra: int) -> None:
    n = sum(f)
    r = kmap_estimate(f, k, alpha, population_size=n + extra)
    assert r.derived_k == _scipy_poisson_k(k, alpha, n / (n + extra), n)
    assert set(r.violating_classes) == {j for j, c in enumerate(f) if c < r.derived_k}
    assert r.satisfied == (min(f) >= r.derived_k)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: kmap_population([1], [1], 0), "k"),
        (lambda: kmap_population([1], [1], 1.5), "k"),  # type: ignore[arg-type]
        (lambda: kmap_population([0], [1], 1), "sample_sizes"),
        (lambda: kmap_population([], [], 1), "sample_sizes"),
        (lambda: kmap_population("ab", [1], 1), "sample_sizes"),  # type: ignore[arg-type]
        (lambda: kmap_population([2], [1], 1), "population_sizes"),
        (lambda: kmap_population([1, 1], [1], 1), "population_sizes"),
        (lambda: kmap_population([1], [True], 1), "population_sizes"),
        (lambda: kmap_estimate([1], 2, 0.05), "population_size"),
        (
            lambda: kmap_estimate([1], 2, 0.05, population_size=5, sampling_fraction=0.1),
            "population_size",
        ),
        (lambda: kmap_estimate([3], 2, 0.05, population_size=2), "population_size"),
        (lambda: kmap_estimate([1], 2, 1.5, sampling_fraction=0.1), "significance_level"),
        (lambda: kmap_estimate([1], 2, 0.05, sampling_fraction=0.0), "sampling_fraction"),
        (lambda: kmap_estimate([1], 2, 0.05, sampling_fraction=float("nan")), "sampling_fraction"),
        (lambda: kmap_estimate([1], 2, 0.05, sampling_fraction=0.1, estimator="x"), "estimator"),  # type: ignore[arg-type]
        (lambda: delta_presence([1], [0], 0, 1), "population_sizes"),
        (lambda: delta_presence([-1], [2], 0, 1), "sample_sizes"),
        (lambda: delta_presence([1], [2], 0.6, 0.5), "delta_min"),
        (lambda: delta_presence([1], [2], 0, 1.5), "delta_max"),
        (lambda: delta_presence([1], [2], "0", 1), "delta_min"),  # type: ignore[arg-type]
    ],
)
def test_bad_input(call: object, name: str) -> None:
    with pytest.raises(InputError) as err:
        call()  # type: ignore[operator]
    message = str(err.value)
    assert name in message  # the Python API: its parameter's own name
    assert "\n" not in message


@pytest.mark.parametrize("estimator", ["poisson", "zero_truncated_poisson"])
def test_closed_form_for_long_loops_equals_the_loops(
    estimator: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past a million steps ARX's loops are replaced by scipy's quantile; on loops short
    enough to run, both give the same k' and (to 1e-9) the same type I error, capped by the
    record count or not."""
    import airflow_privacy.core.criteria.k_map as kmap

    cases = [(k, a, pi, n) for k in (1, 2, 7, 40, 300) for a in (0.0, 0.01, 0.2, 0.9)
             for pi in (0.01, 0.3, 1.0) for n in (1, 5, 100, 10**6)]  # fmt: skip
    looped = [arx_derived_k(k, a, pi, n, estimator) for k, a, pi, n in cases]
    monkeypatch.setattr(kmap, "_LOOP_LIMIT", 0)
    closed = [arx_derived_k(k, a, pi, n, estimator) for k, a, pi, n in cases]
    for case, (k1, e1), (k2, e2) in zip(cases, looped, closed, strict=True):
        assert k1 == k2, case
        assert e1 == pytest.approx(e2, abs=1e-9), case


def test_a_billion_k_is_answered_at_once() -> None:
    """k = 10^9 at a sampling fraction of 0.5 (5e8 loop steps in ARX) with 10^7 records."""
    import time

    t0 = time.process_time()  # CPU time: the machine's load does not count
    derived, _ = arx_derived_k(10**9, 0.01, 0.5, 10**7, "poisson")
    assert derived == 10**7 and time.process_time() - t0 < 2.0  # ARX's loop: minutes
