"""The noise of a DP release and its accounting, from OpenDP (an optional extra:
``pip install 'airflow-privacy[dp]'``).

Mechanisms (on integer count vectors, one measurement per marginal, each with the
marginal's sensitivity ``bound`` as ``d_in``, :mod:`~airflow_privacy.core.dp.marginals`):

* ``gaussian``: the discrete Gaussian (``make_gaussian`` on an integer vector domain with
  the L2 distance), whose loss is measured in zero-concentrated DP, rho (Bun and Steinke,
  TCC 2016; Canonne, Kamath and Steinke, NeurIPS 2020, for the discrete Gaussian);
* ``laplace``: the discrete Laplace (``make_laplace`` with the L1 distance), pure epsilon.

The marginals of one release are composed by OpenDP (``make_composition``: the loss of
the release is its map at ``d_in = bound``); the scale is the smallest for which that loss
is at most the budget asked for. Converting a loss to (epsilon, delta) is OpenDP's
(``make_zCDP_to_approxDP``), and so is the loss of a Laplace release in rho
(``make_pureDP_to_zCDP``).

The noise's spread (standard deviation, 95% interval) is computed exactly from the
mechanism's probability mass function, ``exp(-k^2 / (2 scale^2))`` or
``exp(-|k| / scale)`` normalized over the integers, for the report and the tests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from airflow_privacy.errors import InputError

MECHANISMS = ("gaussian", "laplace")
MAX_SCALE = 100_000.0
"""The largest noise scale a release may have: beyond it every cell is noise (and its
spread is not computed exactly in bounded memory); ask for a larger budget or fewer
marginals."""
CONFIDENCE = 0.95


def _opendp() -> Any:
    try:
        import opendp.prelude as dp
    except ImportError:  # pragma: no cover - the [dp] extra is in the dev install
        raise InputError("a DP release needs OpenDP: pip install 'airflow-privacy[dp]'") from None
    dp.enable_features("contrib")
    return dp


@dataclass(frozen=True)
class NoisePlan:
    """The mechanism of one release: its scale and its loss (module doc)."""

    mechanism: str
    scale: float
    bound: int
    n_marginals: int
    #: the loss in zero-concentrated DP (a Laplace release's too, converted by OpenDP)
    rho: float
    #: the loss in pure DP (None: a Gaussian release has no finite pure-DP loss)
    epsilon: float | None
    stddev: float
    half_width: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _measurement(dp: Any, mechanism: str, scale: float) -> Any:
    domain = dp.vector_domain(dp.atom_domain(T="i64"))
    if mechanism == "gaussian":
        return dp.m.make_gaussian(domain, dp.l2_distance(T="i64"), scale=scale)
    return dp.m.make_laplace(domain, dp.l1_distance(T="i64"), scale=scale)


def _release(dp: Any, mechanism: str, scale: float, n: int) -> Any:
    return dp.c.make_composition([_measurement(dp, mechanism, scale) for _ in range(n)])


def plan(mechanism: str, budget: float, bound: int, n_marginals: int) -> NoisePlan:
    """The plan spending at most ``budget`` (rho for ``gaussian``, epsilon for ``laplace``)
    on ``n_marginals`` marginals whose sensitivity is ``bound``."""
    if mechanism not in MECHANISMS:
        raise InputError(f"unknown mechanism {mechanism!r} (known: {', '.join(MECHANISMS)})")
    if not (budget > 0 and math.isfinite(budget)):
        raise InputError(f"the budget must be a positive number, got {budget!r}")
    dp = _opendp()
    share = budget / n_marginals
    scale = float(
        dp.binary_search_param(
            lambda s: _measurement(dp, mechanism, s), d_in=int(bound), d_out=share
        )
    )
    composed = _release(dp, mechanism, scale, n_marginals)
    while float(composed.map(int(bound))) > budget:  # rounding of the sum: never over
        scale = math.nextafter(scale, math.inf) * (1 + 1e-12)
        composed = _release(dp, mechanism, scale, n_marginals)
    if scale > MAX_SCALE:
        raise InputError(
            f"the noise's scale would be {scale:,.0f} per cell (above {MAX_SCALE:,.0f}): "
            "every count would be noise; spend a larger budget on fewer marginals"
        )
    loss = float(composed.map(int(bound)))
    if mechanism == "gaussian":
        rho, epsilon = loss, None
    else:
        rho, epsilon = float(dp.c.make_pureDP_to_zCDP(composed).map(int(bound))), loss
    sd, half = spread(mechanism, scale)
    return NoisePlan(mechanism, scale, int(bound), n_marginals, rho, epsilon, sd, half)


def _pmf(mechanism: str, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The noise's support (a window holding all but < 1e-30 of its mass) and its
    probabilities."""
    reach = math.ceil((12.0 if mechanism == "gaussian" else 70.0) * scale) + 10
    k = np.arange(-reach, reach + 1, dtype=np.float64)
    if mechanism == "gaussian":
        w = np.exp(-(k * k) / (2.0 * scale * scale))
    else:
        w = np.exp(-np.abs(k) / scale)
    return k, w / w.sum()


def spread(mechanism: str, scale: float, confidence: float = CONFIDENCE) -> tuple[float, int]:
    """The noise's standard deviation and the smallest ``q`` with P(|noise| <= q) >=
    ``confidence`` (the half-width of each cell's interval), exactly (module doc)."""
    k, p = _pmf(mechanism, scale)
    sd = float(math.sqrt(float(np.sum(k * k * p))))
    centre = len(k) // 2
    # P(|Z| <= q) = p(0) + 2 * sum_{1..q} p(k) (the noise is symmetric)
    inside = p[centre] + 2.0 * np.cumsum(p[centre + 1 :])
    q = int(np.searchsorted(inside, confidence - 1e-15)) + 1
    if p[centre] >= confidence:
        q = 0
    return sd, q


def draw(noise: NoisePlan, vector: np.ndarray) -> np.ndarray:
    """``vector`` plus fresh noise of ``noise`` (OpenDP's sampler: a cryptographically
    secure source, not seedable)."""
    dp = _opendp()
    meas = _measurement(dp, noise.mechanism, noise.scale)
    return np.asarray(meas([int(x) for x in vector]), dtype=np.int64)


def approx_dp(rho: float, delta: float) -> float:
    """The epsilon of (epsilon, ``delta``)-DP implied by a zCDP loss ``rho`` (OpenDP's
    conversion, applied to a Gaussian measurement whose loss is ``rho``)."""
    if rho <= 0:
        return 0.0
    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    meas = dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=1.0)
    conv = dp.c.make_zCDP_to_approxDP(meas)
    return float(conv.map(math.sqrt(2.0 * rho)).epsilon(delta))


def semantic(epsilon: float, delta: float = 0.0) -> float:
    """The semantic-privacy bound of (epsilon, delta)-DP (Ganta et al., KDD 2008): e^eps - 1
    for pure DP (Theorem 15), e^(3 eps) - 1 + 2 sqrt(delta) otherwise (Proposition 17)."""
    if delta == 0.0:
        return math.expm1(epsilon)
    return math.expm1(3.0 * epsilon) + 2.0 * math.sqrt(delta)


def clamp(noisy: Sequence[int] | np.ndarray) -> np.ndarray:
    """Post-processing: counts below zero shown as zero (free of privacy loss)."""
    return np.maximum(np.asarray(noisy, dtype=np.int64), 0)
