"""Utility (information loss) metrics of a release, and how the lattice search ranks nodes.

All metrics are computed per QI-group from the group's size and, for every QI, the
generalized label the group carries; ``N`` is the number of input records, ``q`` the number
of QIs, and suppressed records count as fully generalized (every QI ``*``).

* **discernibility** (Bayardo & Agrawal, ICDE 2005): ``sum_E |E|^2 + |suppressed| * N``.
  Lower is better.
* **average-class-size** (LeFevre et al., ICDE 2006, ``C_avg`` without the ``/ k``):
  released records / number of groups. Lower is better.
* **precision** (Sweeney, IJUFKS 2002, ``Prec``): ``1 - sum_records sum_QI h / |DGH|``
  divided by ``N q``, with ``h`` the level and ``|DGH|`` the hierarchy's top level. Defined
  for full-domain generalization only. Higher is better.
* **loss** (Iyengar, KDD 2002, loss metric ``LM``): per cell ``(M_g - 1) / (M - 1)`` for a
  categorical label covering ``M_g`` of the ``M`` leaves, ``(U_g - L_g) / (U - L)`` for a
  numeric label covering ``[L_g, U_g]`` of ``[L, U]``; averaged over the ``N q`` cells, so
  0 = nothing generalized, 1 = everything suppressed. Lower is better.
* **non-uniform-entropy** (Gionis & Tassa, TKDE 2009; ARX): ``sum_records sum_QI
  -log2 Pr(original value | generalized label)`` with the probabilities taken from the input
  table's frequencies, in bits. Lower is better.

Bucketized releases publish the QIs exactly; for them :func:`bucket_utility` reports the
QI spread of the buckets (the loss metric of the buckets' QI ranges: how far apart the
records sharing a bucket are) and Xiao & Tao's reconstruction error (Anatomy, VLDB 2006:
``RCE = sum_b (n_b - sum_v n_b(v)^2 / n_b)``, per record).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from airflow_privacy.errors import InputError

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

METRICS = ("loss", "discernibility", "average-class-size", "precision", "non-uniform-entropy")
HIGHER_IS_BETTER = frozenset({"precision"})


def check_metric(name: str) -> str:
    if name not in METRICS:
        raise InputError(f"unknown utility metric {name!r} (known: {', '.join(METRICS)})")
    return name


def rank_key(metric: str, values: dict[str, float | None]) -> float:
    """Sort key: smaller is better."""
    v = values[metric]
    if v is None:
        return float("inf")
    return -v if metric in HIGHER_IS_BETTER else v


@dataclass(frozen=True)
class LabelCosts:
    """Per label of one QI (at one level, or per partition): its loss and the number of
    input records its label covers."""

    loss: FloatArray
    covered: FloatArray


def categorical_loss(leaves_under: IntArray, total_leaves: int) -> FloatArray:
    if total_leaves <= 1:
        return np.zeros(leaves_under.shape[0], dtype=np.float64)
    out: FloatArray = (leaves_under - 1) / float(total_leaves - 1)
    return out


def numeric_loss(low: FloatArray, high: FloatArray, lo: float, hi: float) -> FloatArray:
    if hi <= lo:
        return np.zeros(low.shape[0], dtype=np.float64)
    out: FloatArray = (high - low) / (hi - lo)
    return out


def summarize(
    sizes: IntArray,
    loss: FloatArray | None,
    log2_covered: FloatArray | None,
    nue_constant: float,
    n_total: int,
    suppressed: int,
    precision_cost: FloatArray | None = None,
) -> dict[str, float | None]:
    """The metrics of a release from its released groups.

    ``sizes[g]``: records of group ``g``; ``loss[g, i]``: loss of the label of QI ``i`` in
    group ``g``; ``log2_covered[g, i]``: log2 of the number of input records that label
    covers; ``nue_constant``: ``sum over input records and QIs of -log2 f(original value)``;
    ``precision_cost[g]``: ``sum_i h_i / |DGH_i|`` of group ``g`` (full-domain only).
    """
    q = (
        loss.shape[1]
        if loss is not None
        else (log2_covered.shape[1] if log2_covered is not None else 0)
    )
    released = int(sizes.sum())
    groups = int(sizes.shape[0])
    out: dict[str, float | None] = {
        "discernibility": float(np.sum(sizes.astype(np.float64) ** 2) + suppressed * n_total),
        "average-class-size": released / groups if groups else None,
        "precision": None,
        "loss": None,
        "non-uniform-entropy": None,
    }
    if q == 0:
        return out
    cells = float(n_total * q)
    if loss is not None:
        out["loss"] = float((sizes @ loss.sum(axis=1) + suppressed * q) / cells)
    if log2_covered is not None:
        full = suppressed * q * float(np.log2(n_total))
        out["non-uniform-entropy"] = float(nue_constant + sizes @ log2_covered.sum(axis=1) + full)
    if precision_cost is not None:
        out["precision"] = float(1.0 - (sizes @ precision_cost + suppressed * q) / cells)
    return out


def nue_constant(leaf_counts: Sequence[IntArray]) -> float:
    """``sum over records and QIs of -log2 f(value)``: the part of the non-uniform entropy
    that does not depend on the generalization (``leaf_counts[i][v]``: records with value
    ``v`` of QI ``i``)."""
    total = 0.0
    for counts in leaf_counts:
        c = counts[counts > 0].astype(np.float64)
        total -= float(c @ np.log2(c))
    return total


def bucket_utility(counts: IntArray, spread: FloatArray, n_total: int) -> dict[str, float | None]:
    """Bucketization metrics: ``counts[b, v]`` per bucket; ``spread[b, i]``: loss metric of
    bucket ``b``'s range on QI ``i``."""
    sizes = counts.sum(axis=1)
    base = summarize(sizes, None, None, 0.0, n_total, 0)
    sq = (counts.astype(np.float64) ** 2).sum(axis=1)
    rce = float(np.sum(sizes - sq / sizes))
    q = spread.shape[1]
    return {
        "discernibility": base["discernibility"],
        "average-class-size": base["average-class-size"],
        "qi-spread": float(sizes @ spread.sum(axis=1) / (n_total * q)) if q else 0.0,
        "reconstruction-error": rce / n_total,
    }
