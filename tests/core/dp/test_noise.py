"""The DP noise and its accounting (airflow_privacy.core.dp.noise) against computations
written from the definitions: the zCDP loss of the discrete Gaussian, rho = d_in^2 /
(2 sigma^2) per marginal, adding over marginals; the pure-DP loss of the discrete Laplace,
epsilon = d_in / b; the spread of each noise from its probability mass function (closed
forms for the discrete Laplace, a direct sum in plain Python for the discrete Gaussian);
and thousands of draws: the empirical standard deviation equals the stated one within five
standard errors, and the stated 95% intervals cover at 95% within five standard errors.

OpenDP's sampler is a cryptographically secure source and cannot be seeded: the bounds at
five standard errors make a false failure rarer than one in a million runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from airflow_privacy.core.dp.noise import (
    MAX_SCALE,
    approx_dp,
    draw,
    draw_release,
    plan,
    semantic,
    spread,
)
from airflow_privacy.errors import BudgetOverdrawn, InputError


def gaussian_spread(sigma: float, confidence: float = 0.95) -> tuple[float, int]:
    """Standard deviation and 95% half-width of the discrete Gaussian, summed term by term."""
    reach = int(20 * sigma) + 20
    weights = {k: math.exp(-(k * k) / (2 * sigma * sigma)) for k in range(-reach, reach + 1)}
    total = math.fsum(weights.values())
    var = math.fsum(k * k * w for k, w in weights.items()) / total
    q = 0
    while math.fsum(weights[k] for k in range(-q, q + 1)) / total < confidence:
        q += 1
    return math.sqrt(var), q


def laplace_spread(b: float, confidence: float = 0.95) -> tuple[float, int]:
    """The discrete Laplace, P(k) proportional to t^|k| with t = e^(-1/b): variance
    2t / (1 - t)^2, P(|Z| <= q) = 1 - 2 t^(q+1) / (1 + t)."""
    t = math.exp(-1.0 / b)
    var = 2 * t / (1 - t) ** 2
    q = 0
    while 1 - 2 * t ** (q + 1) / (1 + t) < confidence:
        q += 1
    return math.sqrt(var), q


@pytest.mark.parametrize("sigma", [0.3, 0.8, 1.0, 1.7, 4.2, 25.0, 310.0])
def test_the_gaussian_spread_is_the_definitions(sigma: float) -> None:
    sd, q = spread("gaussian", sigma)
    want_sd, want_q = gaussian_spread(sigma)
    assert abs(sd - want_sd) <= 1e-9 * max(1.0, want_sd)
    assert q == want_q


@pytest.mark.parametrize("b", [0.2, 0.9, 1.0, 3.3, 40.0, 500.0])
def test_the_laplace_spread_is_the_closed_form(b: float) -> None:
    sd, q = spread("laplace", b)
    want_sd, want_q = laplace_spread(b)
    assert abs(sd - want_sd) <= 1e-9 * max(1.0, want_sd)
    assert q == want_q


@pytest.mark.parametrize(
    ("budget", "bound", "n"), [(0.5, 1, 1), (0.5, 1, 3), (0.01, 2, 45), (2.0, 5, 7), (1e-4, 1, 2)]
)
def test_the_gaussian_plan_spends_the_budget_by_the_definition(
    budget: float, bound: int, n: int
) -> None:
    p = plan("gaussian", budget, bound, n)
    spent = n * bound**2 / (2 * p.scale**2)  # zCDP of each marginal, composed by adding
    assert spent <= budget * (1 + 1e-9)
    assert spent >= budget * (1 - 1e-9)  # the smallest scale: not more noise than needed
    assert abs(p.rho - spent) <= 1e-9 * budget
    assert p.epsilon is None and p.mechanism == "gaussian"


@pytest.mark.parametrize(("budget", "bound", "n"), [(1.0, 1, 1), (0.3, 2, 4), (5.0, 3, 10)])
def test_the_laplace_plan_spends_the_budget_by_the_definition(
    budget: float, bound: int, n: int
) -> None:
    p = plan("laplace", budget, bound, n)
    spent = n * bound / p.scale
    assert budget * (1 - 1e-9) <= spent <= budget * (1 + 1e-9)
    assert p.epsilon is not None and abs(p.epsilon - spent) <= 1e-9 * budget
    # each marginal is (bound / b)-DP, so (bound / b)^2 / 2-zCDP; zCDP adds over marginals
    want_rho = n * (bound / p.scale) ** 2 / 2
    assert abs(p.rho - want_rho) <= 1e-9 * max(1.0, want_rho)


@pytest.mark.parametrize(("mechanism", "budget", "unit"), [
    ("gaussian", 0.5, "rho"), ("gaussian", 0.02, "rho"),
    ("laplace", 1.0, "epsilon"), ("laplace", 0.2, "rho"),
])  # fmt: skip
def test_draws_have_the_stated_spread_and_coverage(
    mechanism: str, budget: float, unit: str
) -> None:
    """Drawn as a release draws them: through OpenDP's privacy filter."""
    p = plan(mechanism, budget, 1, 2)
    n = 20_000
    truth = np.arange(n, dtype=np.int64) % 7
    room = p.rho if unit == "rho" else p.epsilon
    assert room is not None
    (noisy,), _ = draw_release(p, [truth], [], room, unit)
    noise = noisy - truth
    sd = float(np.std(noise, ddof=0))
    # the sample standard deviation's standard error is sd * sqrt((kurtosis - 1) / 4n)
    kurt = 6.0 if mechanism == "laplace" else 3.0
    se = p.stddev * math.sqrt((kurt - 1) / (4 * n))
    assert abs(sd - p.stddev) <= 5 * se + 1e-12, (sd, p.stddev)
    assert abs(float(np.mean(noise))) <= 5 * p.stddev / math.sqrt(n)
    covered = float(np.mean(np.abs(noise) <= p.half_width))
    exact = _inside(mechanism, p.scale, p.half_width)
    assert exact >= 0.95
    assert abs(covered - exact) <= 5 * math.sqrt(exact * (1 - exact) / n), (covered, exact)


def _inside(mechanism: str, scale: float, q: int) -> float:
    if mechanism == "laplace":
        t = math.exp(-1 / scale)
        return 1 - 2 * t ** (q + 1) / (1 + t)
    reach = int(20 * scale) + 20
    w = [math.exp(-(k * k) / (2 * scale * scale)) for k in range(-reach, reach + 1)]
    return math.fsum(w[reach - q : reach + q + 1]) / math.fsum(w)


def test_the_conversions_are_opendps_and_the_papers() -> None:
    # zCDP rho gives (rho + 2 sqrt(rho log(1/delta)), delta)-DP at most (Bun and Steinke,
    # Proposition 1.3); OpenDP's conversion is at least as tight
    for rho in (0.01, 0.1, 0.5, 2.0):
        eps = approx_dp(rho, 1e-6)
        assert 0 < eps <= rho + 2 * math.sqrt(rho * math.log(1e6)) + 1e-9
    assert approx_dp(0.0, 1e-6) == 0.0
    assert semantic(0.1) == pytest.approx(math.exp(0.1) - 1, abs=1e-12)
    assert semantic(0.1, 1e-6) == pytest.approx(math.exp(0.3) - 1 + 2e-3, abs=1e-12)


def test_too_much_noise_and_bad_budgets_are_refused() -> None:
    with pytest.raises(InputError, match="scale"):
        plan("gaussian", 1e-12, 1, 1)  # sigma = 7e5 > MAX_SCALE
    assert MAX_SCALE == 100_000.0
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(InputError):
            plan("gaussian", bad, 1, 1)
    with pytest.raises(InputError, match="mechanism"):
        plan("uniform", 1.0, 1, 1)


@pytest.mark.parametrize(("mechanism", "budget", "bound", "n", "reaches"), [
    ("gaussian", 1.0, 1, 3, [99]), ("gaussian", 0.2, 2, 5, [10, 100_000]),
    ("laplace", 1.0, 1, 2, [50]), ("laplace", 3.0, 3, 4, [7, 1_000_000]),
])  # fmt: skip
def test_a_plan_with_sums_spends_the_budget_by_the_definition(
    mechanism: str, budget: float, bound: int, n: int, reaches: list[int]
) -> None:
    """Every count vector and every sum vector one query with an equal share; a sum's
    sensitivity is bound * reach; the losses add (zCDP: Delta^2 / (2 sigma^2) each; pure DP:
    Delta / b each)."""
    p = plan(mechanism, budget, bound, n, [(f"c{i}", r) for i, r in enumerate(reaches)])
    queries = [(bound, p.scale)] + [(bound * r, s.scale) for r, s in zip(reaches, p.sums,
                                                                         strict=True)]  # fmt: skip
    if mechanism == "gaussian":
        each = [n * d**2 / (2 * sc**2) for d, sc in queries]
    else:
        each = [n * d / sc for d, sc in queries]
    spent = math.fsum(each)
    assert budget * (1 - 1e-9) <= spent <= budget * (1 + 1e-9)
    for e in each:  # equal shares
        assert abs(e - budget / len(queries)) <= 1e-9 * budget
    assert abs((p.rho if mechanism == "gaussian" else p.epsilon or 0) - spent) <= 1e-9 * budget
    for r, s in zip(reaches, p.sums, strict=True):
        want = spread(mechanism, s.scale)
        assert (s.stddev, s.half_width) == want and s.reach == r


@pytest.mark.parametrize("b", [60.0, 2_000.0, 2.5e5, 3e7])
def test_the_wide_laplace_spread_is_the_closed_form(b: float) -> None:
    from airflow_privacy.core.dp.noise import _spread_wide

    sd, q = _spread_wide("laplace", b, 0.95)
    t = math.exp(-1.0 / b)
    want_sd = math.sqrt(2 * t) / (1 - t)
    assert abs(sd - want_sd) <= 1e-9 * want_sd
    # q is the smallest with P(|Z| <= q) >= 0.95, by the closed form of the tail
    assert 1 - 2 * t ** (q + 1) / (1 + t) >= 0.95 - 1e-12
    assert q == 0 or 1 - 2 * t**q / (1 + t) < 0.95
    if b <= 2_000:  # and the exact pmf's agree
        exact_sd, exact_q = spread("laplace", b)
        assert q == exact_q and abs(sd - exact_sd) <= 1e-9 * exact_sd


@pytest.mark.parametrize("sigma", [60.0, 310.0, 2_500.0])
def test_the_wide_gaussian_spread_is_within_one_of_the_definitions(sigma: float) -> None:
    from airflow_privacy.core.dp.noise import _spread_wide

    sd, q = _spread_wide("gaussian", sigma, 0.95)
    want_sd, want_q = gaussian_spread(sigma)
    assert abs(sd - want_sd) <= 1e-9 * want_sd
    assert abs(q - want_q) <= 1


def test_a_sums_draws_have_its_stated_spread() -> None:
    p = plan("gaussian", 1.0, 1, 1, [("hours", 99)])
    (s,) = p.sums
    trials = 4000
    noise = np.concatenate([draw(p, np.zeros(5, np.int64), s.scale) for _ in range(trials // 5)])
    sd = float(noise.std(ddof=1))
    assert abs(sd - s.stddev) <= 5 * s.stddev / math.sqrt(2 * len(noise))
    assert abs(float(np.mean(np.abs(noise) <= s.half_width)) - 0.95) <= 5 * math.sqrt(
        0.95 * 0.05 / len(noise)
    )


@pytest.mark.parametrize(("mechanism", "flag"), [("gaussian", "--rho"), ("laplace", "--epsilon")])
def test_a_budget_too_small_for_any_scale_is_bad_input(mechanism: str, flag: str) -> None:
    """A positive budget so small (a subnormal, 1e-320) that OpenDP finds no scale: bad input
    naming the option, not OpenDP's exception (found by the extended fuzz)."""
    from airflow_privacy.core.dp.noise import plan
    from airflow_privacy.errors import InputError

    with pytest.raises(InputError, match=rf"^{flag} 1e-320 is too small: no noise scale"):
        plan(mechanism, 1e-320, 1, 2)


@pytest.mark.parametrize(("mechanism", "unit"), [("gaussian", "rho"), ("laplace", "rho"),
                                                 ("laplace", "epsilon")])  # fmt: skip
def test_the_privacy_filter_holds_the_release_to_the_room_it_is_given(
    mechanism: str, unit: str
) -> None:
    """A release of three marginals and one sum (bound 2, reach 5) through OpenDP's filter:
    with the plan's own loss as the room every vector is drawn, in its shape; with a room a
    millionth smaller the filter refuses (its composed loss is the plan's, to 1e-6)."""
    p = plan(mechanism, 0.9, 2, 3, sums=[("income", 5)])
    loss = p.rho if unit == "rho" else p.epsilon
    assert loss is not None
    counts = [np.zeros(k, np.int64) for k in (4, 6, 2)]
    sums = [[np.full(k, 10, np.int64) for k in (4, 6, 2)]]
    noisy, noisy_sums = draw_release(p, counts, sums, loss * (1 + 1e-12), unit)
    assert [len(v) for v in noisy] == [4, 6, 2] and [len(v) for v in noisy_sums[0]] == [4, 6, 2]
    assert all(v.dtype == np.int64 for v in [*noisy, *noisy_sums[0]])
    with pytest.raises(BudgetOverdrawn, match="privacy filter refused vector 6 of 6"):
        draw_release(p, counts, sums, loss * (1 - 1e-6), unit)
    # a room for the counts alone: the first sum's vector is refused
    with pytest.raises(BudgetOverdrawn, match="refused vector 4 of 6"):
        draw_release(p, counts, sums, loss / 2 * (1 + 1e-9), unit)
