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
(``make_zCDP_to_approxDP``), and so is the loss of a Laplace release in rho: each vector's
epsilon converted (``make_pureDP_to_zCDP``, eps^2 / 2), then added.

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

from airflow_privacy.errors import InputError, opt

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
class SumNoise:
    """The noise of one summed column's vectors (one per marginal): its sensitivity is
    ``bound * reach`` (:class:`~airflow_privacy.core.dp.marginals.Summed`)."""

    column: str
    reach: int
    scale: float
    stddev: float
    half_width: int


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
    #: the summed columns' noise (empty: counts only)
    sums: tuple[SumNoise, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _measurement(dp: Any, mechanism: str, scale: float) -> Any:
    domain = dp.vector_domain(dp.atom_domain(T="i64"))
    if mechanism == "gaussian":
        return dp.m.make_gaussian(domain, dp.l2_distance(T="i64"), scale=scale)
    return dp.m.make_laplace(domain, dp.l1_distance(T="i64"), scale=scale)


def _release(dp: Any, mechanism: str, scale: float, n: int) -> Any:
    return dp.c.make_composition([_measurement(dp, mechanism, scale) for _ in range(n)])


def _scale_for(dp: Any, mechanism: str, d_in: int, share: float) -> float:
    return float(
        dp.binary_search_param(lambda s: _measurement(dp, mechanism, s), d_in=d_in, d_out=share)
    )


def plan(
    mechanism: str,
    budget: float,
    bound: int,
    n_marginals: int,
    sums: Sequence[tuple[str, int]] = (),
) -> NoisePlan:
    """The plan spending at most ``budget`` (rho for ``gaussian``, epsilon for ``laplace``)
    on ``n_marginals`` marginals whose sensitivity is ``bound`` and, for each of ``sums``
    (a column and its reach), the sums of that column in the same marginals (sensitivity
    ``bound * reach``). Every count vector and every sum vector is one query and gets the
    same share of the budget; the queries with the same sensitivity are composed by OpenDP
    and their losses added (sequential composition: rhos add under zCDP, epsilons under
    pure DP)."""
    if mechanism not in MECHANISMS:
        raise InputError(f"unknown mechanism {mechanism!r} (known: {', '.join(MECHANISMS)})")
    if not (budget > 0 and math.isfinite(budget)):
        raise InputError(f"the budget must be a positive number, got {budget!r}")
    dp = _opendp()
    share = budget / (n_marginals * (1 + len(sums)))
    d_ins = [int(bound), *(int(bound) * int(reach) for _, reach in sums)]
    try:
        scales = [_scale_for(dp, mechanism, d, share) for d in d_ins]
    except dp.OpenDPException:  # a share so small that no scale is representable
        name = "rho" if mechanism == "gaussian" else "epsilon"
        raise InputError(
            f"{opt(name)} {budget!r} is too small: no noise scale reaches it (every count "
            "would be noise); spend a larger budget on fewer marginals"
        ) from None

    def losses(scales: Sequence[float]) -> list[Any]:
        return [(_release(dp, mechanism, sc, n_marginals), d)
                for sc, d in zip(scales, d_ins, strict=True)]  # fmt: skip

    def total(parts: Sequence[Any]) -> float:
        return math.fsum(float(m.map(d)) for m, d in parts)

    def in_rho(scales: Sequence[float]) -> float:
        # each query's pure loss in zCDP (OpenDP's make_pureDP_to_zCDP: eps -> eps^2 / 2),
        # then added, as the privacy filter composes them: tighter than converting the sum
        return math.fsum(
            n_marginals * float(dp.c.make_pureDP_to_zCDP(_measurement(dp, mechanism, sc)).map(d))
            for sc, d in zip(scales, d_ins, strict=True)
        )

    parts = losses(scales)
    while total(parts) > budget:  # rounding of the sum: never over
        scales = [math.nextafter(sc, math.inf) * (1 + 1e-12) for sc in scales]
        parts = losses(scales)
    if scales[0] > MAX_SCALE:
        raise InputError(
            f"the noise's scale would be {scales[0]:,.0f} per cell (above {MAX_SCALE:,.0f}): "
            "every count would be noise; spend a larger budget on fewer marginals"
        )
    loss = total(parts)
    if mechanism == "gaussian":
        rho, epsilon = loss, None
    else:
        rho, epsilon = in_rho(scales), loss
    sd, half = spread(mechanism, scales[0])
    summed = tuple(
        SumNoise(column, int(reach), sc, *spread(mechanism, sc))
        for (column, reach), sc in zip(sums, scales[1:], strict=True)
    )
    return NoisePlan(mechanism, scales[0], int(bound), n_marginals, rho, epsilon, sd, half, summed)


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
    ``confidence`` (the half-width of each cell's interval): exactly from the probability
    mass function up to :data:`MAX_SCALE` (module doc). Above it (the noise of a sum): the
    discrete Laplace's closed forms, exact (with ``p = exp(-1/scale)``, variance
    ``2p / (1-p)^2`` and P(|Z| > q) = ``2 p^(q+1) / (1+p)``); the discrete Gaussian's from
    the normal distribution with a continuity correction (its variance differs from
    ``scale^2`` by a relative ``~ exp(-2 pi^2 scale^2)``, and q may be one unit off)."""
    if scale > MAX_SCALE:
        return _spread_wide(mechanism, scale, confidence)
    k, p = _pmf(mechanism, scale)
    sd = float(math.sqrt(float(np.sum(k * k * p))))
    centre = len(k) // 2
    # P(|Z| <= q) = p(0) + 2 * sum_{1..q} p(k) (the noise is symmetric)
    inside = p[centre] + 2.0 * np.cumsum(p[centre + 1 :])
    q = int(np.searchsorted(inside, confidence - 1e-15)) + 1
    if p[centre] >= confidence:
        q = 0
    return sd, q


def _spread_wide(mechanism: str, scale: float, confidence: float) -> tuple[float, int]:
    from scipy.stats import norm

    if mechanism == "laplace":
        p = math.exp(-1.0 / scale)
        sd = math.sqrt(2.0 * p) / -math.expm1(-1.0 / scale)
        # the smallest q with 2 p^(q+1) / (1+p) <= 1 - confidence
        q = math.ceil(math.log((1.0 - confidence) * (1.0 + p) / 2.0) / math.log(p)) - 1
        return sd, max(q, 0)
    z = float(norm.ppf(0.5 + confidence / 2.0))
    return scale, max(math.ceil(z * scale - 0.5), 0)


def draw(noise: NoisePlan, vector: np.ndarray, scale: float | None = None) -> np.ndarray:
    """``vector`` plus fresh noise of ``noise`` (at ``scale``: a sum's; default the counts'),
    from OpenDP's sampler (a cryptographically secure source, not seedable)."""
    dp = _opendp()
    meas = _measurement(dp, noise.mechanism, noise.scale if scale is None else scale)
    return np.asarray(meas([int(x) for x in vector]), dtype=np.int64)


def draw_release(
    noise: NoisePlan,
    counts: Sequence[np.ndarray],
    sums: Sequence[Sequence[np.ndarray]],
    room: float,
    unit: str,
) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    """Every vector of a release plus fresh noise, drawn through OpenDP's privacy filter
    (``make_privacy_filter`` over ``make_fully_adaptive_composition``; Rogers, Roth, Ullman
    and Vadhan, NeurIPS 2016) built for this release with ``room``, the budget the ledger
    leaves (in ``unit``: ``rho``, zCDP, or ``epsilon``, pure DP), as its ``d_out``: the
    filter's input is the release's vectors (``counts``, one per marginal, then ``sums``,
    one list per summed column), its ``d_in`` one person, and each vector is one query whose
    loss is its mechanism's at the vector's sensitivity (``bound``, or ``bound * reach`` for
    a sum). A query the room does not hold is refused by the filter: :class:`~airflow_privacy.
    errors.BudgetOverdrawn` (the ledger's own check runs first, so this is a second guard
    that the spend recorded is what OpenDP composed). Returns the noisy counts and sums."""
    from airflow_privacy.errors import BudgetOverdrawn

    if unit not in ("rho", "epsilon"):
        raise InputError(f"unknown budget unit {unit!r} (rho or epsilon)")
    dp = _opendp()
    # the vector a query reads is picked by a transformation of our own (OpenDP's
    # "honest-but-curious" feature: its stability map, d -> d * sensitivity, is the claim
    # that one person moves the vector by at most its sensitivity: marginals.py's bound)
    dp.enable_features("honest-but-curious")
    # (vector, its noise's scale, its reach: 1 for a count, the summed column's for a sum)
    queries = [(v, noise.scale, 1) for v in counts] + [
        (v, sn.scale, sn.reach) for sn, per in zip(noise.sums, sums, strict=True) for v in per
    ]
    domain = dp.user_domain("ReleaseVectors", lambda x: isinstance(x, tuple))
    persons = dp.symmetric_distance()
    measure = dp.zero_concentrated_divergence() if unit == "rho" else dp.max_divergence()
    odometer = dp.c.make_fully_adaptive_composition(domain, persons, measure)
    queryable = dp.c.make_privacy_filter(odometer, d_in=1, d_out=float(room))(
        tuple([int(x) for x in v] for v, _, _ in queries)
    )
    out: list[np.ndarray] = []
    for i, (_, scale, reach) in enumerate(queries):
        mech = _measurement(dp, noise.mechanism, scale)
        pick = dp.t.make_user_transformation(
            domain, persons, mech.input_domain, mech.input_metric,
            function=lambda x, i=i: x[i],
            stability_map=lambda d, s=noise.bound * reach: d * s,
        )  # fmt: skip
        query = pick >> mech
        if unit == "rho" and noise.mechanism == "laplace":
            query = dp.c.make_pureDP_to_zCDP(query)
        try:
            out.append(np.asarray(queryable(query), dtype=np.int64))
        except dp.OpenDPException as e:
            raise BudgetOverdrawn(
                f"OpenDP's privacy filter refused vector {i + 1} of {len(queries)}: "
                f"{e.message.strip()}"
            ) from None
    noisy_sums: list[list[np.ndarray]] = []
    at = len(counts)
    for per in sums:
        noisy_sums.append(out[at : at + len(per)])
        at += len(per)
    return out[: len(counts)], noisy_sums


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
