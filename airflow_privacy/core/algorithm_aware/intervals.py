"""Binomial confidence intervals for posteriors estimated by sampling.

* **Clopper-Pearson** (Clopper & Pearson, Biometrika 1934): the exact interval from the
  beta quantiles; its coverage is at least the nominal level for every ``p`` and every
  number of trials. The default.
* **Wilson** score interval (Wilson, JASA 1927): shorter, coverage close to nominal on
  average but below it for some ``p``.

Rejection sampling keeps the accepted worlds i.i.d. uniform on the disclosure set, so given
the number of accepted worlds ``n`` the count of worlds in which a person holds a value is
binomial ``(n, posterior)``, and the intervals apply conditionally on ``n`` (hence also
unconditionally).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from airflow_privacy.errors import InputError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

METHODS = ("clopper-pearson", "wilson")


def check_interval(method: str, confidence: float) -> None:
    if method not in METHODS:
        raise InputError(f"unknown interval {method!r} (known: {', '.join(METHODS)})")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not (0.0 < float(confidence) < 1.0)
    ):
        raise InputError(f"confidence must be in (0, 1), got {confidence!r}")


def binomial_interval(
    successes: IntArray, trials: int, confidence: float, method: str = "clopper-pearson"
) -> tuple[FloatArray, FloatArray]:
    """Two-sided intervals for every entry of ``successes`` out of ``trials`` (> 0)."""
    # imported here: scipy.stats costs about 0.7 s, and anonymize imports this module on
    # every run while only a sampled audit computes an interval
    from scipy import stats

    check_interval(method, confidence)
    x = np.asarray(successes, dtype=np.float64)
    n = float(trials)
    alpha = 1.0 - confidence
    if method == "clopper-pearson":
        with np.errstate(invalid="ignore"):
            lo = np.where(x > 0, stats.beta.ppf(alpha / 2, x, n - x + 1), 0.0)
            hi = np.where(x < n, stats.beta.ppf(1 - alpha / 2, x + 1, n - x), 1.0)
        return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    z = float(stats.norm.ppf(1 - alpha / 2))
    p = x / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)
