"""The special functions and root finder of the population models
(airflow_privacy/core/risk/special.py) against scipy's, an independent implementation: digamma,
trigamma and log-gamma over 24 decades of arguments, Brent's method against ``brentq`` and
against roots known in closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.optimize
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.risk import special

#: double-precision agreement: |ours - scipy's| <= TOL * max(|scipy's|, 1)
TOL = 4e-15


def _arguments() -> np.ndarray:
    rng = np.random.default_rng(20261130)
    return np.concatenate(
        [
            np.logspace(-12, 12, 4001),
            rng.uniform(0.0, 30.0, 4000),
            np.arange(1.0, 300.0),
            1.0 - np.logspace(-12, -0.01, 500),  # 1 - alpha as alpha nears 1
            np.array([1.4616321449683622]),  # near digamma's only positive root
        ]
    )


@pytest.mark.parametrize(
    ("ours", "reference"),
    [
        (special.digamma, scipy.special.digamma),
        (special.trigamma, lambda x: scipy.special.polygamma(1, x)),
        (special.lgamma, scipy.special.gammaln),
        (lambda x: special.digamma_trigamma(x)[0], scipy.special.digamma),
        (lambda x: special.digamma_trigamma(x)[1], lambda x: scipy.special.polygamma(1, x)),
    ],
)
def test_functions_equal_scipys(ours, reference) -> None:  # type: ignore[no-untyped-def]
    x = _arguments()
    got, want = ours(x), reference(x)
    err = np.abs(got - want) / np.maximum(np.abs(want), 1.0)
    assert float(err.max()) <= TOL, x[int(np.argmax(err))]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(1e-9, 1e9), min_size=1, max_size=12))
def test_one_pass_of_both_equals_each_alone(xs: list[float]) -> None:
    """Every element is shifted by the steps the smallest needs: an element's value does
    not depend on its neighbours beyond rounding."""
    psi, tri = special.digamma_trigamma(xs)
    for j, x in enumerate(xs):
        assert psi[j] == pytest.approx(float(special.digamma([x])[0]), rel=TOL, abs=TOL)
        assert tri[j] == pytest.approx(float(special.trigamma([x])[0]), rel=TOL, abs=TOL)
        assert psi[j] == pytest.approx(float(scipy.special.digamma(x)), rel=TOL, abs=TOL)


def test_not_positive_is_nan_and_the_rest_unharmed() -> None:
    got = special.digamma([0.0, -1.5, math.nan, 2.0])
    assert np.isnan(got[:3]).all()
    assert got[3] == pytest.approx(1.0 - np.euler_gamma, rel=TOL)
    assert np.isnan(special.trigamma([-0.0])).all()
    assert special.lgamma([0.0])[0] == math.inf


def test_known_values() -> None:
    """psi(1) = -gamma, psi'(1) = pi^2/6, psi(1/2) = -gamma - 2 ln 2, psi'(1/2) = pi^2/2."""
    psi, tri = special.digamma_trigamma([1.0, 0.5])
    assert psi[0] == pytest.approx(-np.euler_gamma, rel=TOL)
    assert tri[0] == pytest.approx(math.pi**2 / 6, rel=TOL)
    assert psi[1] == pytest.approx(-np.euler_gamma - 2 * math.log(2), rel=TOL)
    assert tri[1] == pytest.approx(math.pi**2 / 2, rel=TOL)


@pytest.mark.parametrize(
    ("g", "lo", "hi", "root"),
    [
        (lambda x: x**3 - 2.0, 0.0, 2.0, 2.0 ** (1 / 3)),
        (lambda x: math.cos(x) - x, 0.0, 1.0, None),
        (lambda x: math.exp(x) - 1e6, 0.0, 100.0, math.log(1e6)),
        (lambda x: 1.0 / x - 3.0, 1e-300, 10.0, 1.0 / 3.0),
        (lambda x: math.atan(x - 1e-9), -1.0, 1e3, 1e-9),
    ],
)
def test_brent_root_equals_brentq_and_the_closed_form(g, lo, hi, root) -> None:  # type: ignore[no-untyped-def]
    got = special.brent_root(g, lo, hi, xtol=1e-300, rtol=1e-15)
    want = scipy.optimize.brentq(g, lo, hi, xtol=1e-300, rtol=1e-15)
    assert got == pytest.approx(want, rel=1e-14, abs=1e-300)
    if root is not None:
        assert got == pytest.approx(root, rel=1e-14)


def test_brent_root_needs_a_bracket() -> None:
    with pytest.raises(ValueError, match="same sign"):
        special.brent_root(lambda x: x * x + 1.0, -1.0, 1.0)
    assert special.brent_root(lambda x: x, 0.0, 1.0) == 0.0
