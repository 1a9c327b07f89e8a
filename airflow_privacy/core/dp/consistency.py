"""Consistent marginals from noisy ones: the least-squares projection, in closed form.

The noisy marginals of one release disagree with each other (the ``age`` cells summed over
``sex`` in the ``age x sex`` marginal are not the ``age`` marginal; the marginals' totals
differ). The true ones agree: every record is counted in every marginal (records with a
value outside a key set are counted in none, :func:`~airflow_privacy.core.dp.marginals.
count_vectors`), so the true marginals are the margins of one table ``x`` over the union of
their columns. The estimate made here is the closest consistent collection in the least-
squares sense,

    minimize over x:  sum over marginals B of || M_B x - y_B ||^2,

where ``y_B`` is B's noisy count vector and ``M_B`` sums ``x`` onto B's cells. Every
marginal's noise has the same scale, independent across cells, so this is the best linear
unbiased estimate for the discrete Gaussian (Gauss-Markov), and unbiased for both
mechanisms; it is post-processing of the noisy counts and the public key sets, free of
privacy loss (Hay, Rastogi, Miklau and Suciu, VLDB 2010, make the same step for
hierarchies of counts; Barak et al., PODS 2007, for marginals in the Fourier basis).

It is computed without building ``x`` (whose domain is the product of all the columns' key
sets): the functions on a product domain split into orthogonal parts ``W_S``, one per set of
columns ``S``, the part of a function that depends on exactly the columns of ``S`` (centred
along each of them; the ANOVA decomposition). A marginal over B holds the parts of every
``S`` within B, and the objective splits into one independent problem per ``S``. With
``g_B,S`` the ``W_S`` part of B's noisy vector summed onto S's cells, the consistent ``S``
part is their weighted mean with weights ``1 / |cells of B not in S|``
(``|dom(B \\ S)|``), and each marginal is rebuilt from the parts of its subsets. The cost is
about ``2^|B|`` passes over each marginal; a release whose marginals would take more than
:data:`MAX_WORK` is left as drawn (the report says so).

Each consistent cell of B has variance ``p_B * sigma^2`` with ``p_B <= 1`` the diagonal of
the projection (the same for all of B's cells):
``p_B = sum over S within B of w_B,S / (sum of w_B',S over B' holding S) * prod over columns a
of S of (1 - 1/d_a) / |dom(B \\ S)|``, with ``d_a`` the size of a's key set. The tests
compare the estimate and ``p_B`` with numpy's least squares over the full table.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np

MAX_WORK = 50_000_000
"""The most cell visits the projection may take (``sum over marginals of 2^|B| x cells``)."""


def work(marginals: Sequence[Sequence[str]], sizes: Mapping[str, int]) -> int:
    """The cell visits the projection of ``marginals`` takes."""
    return sum((2 ** len(m)) * math.prod(sizes[c] for c in m) for m in marginals)


def _subsets(columns: Sequence[str]) -> list[tuple[str, ...]]:
    return [s for r in range(len(columns) + 1) for s in itertools.combinations(columns, r)]


def _part(tensor: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """The ``W_S`` part of ``tensor``: centred along each of ``axes``."""
    out = tensor
    for a in axes:
        out = out - out.mean(axis=a, keepdims=True)
    return out


def _order(marginals: Sequence[Sequence[str]]) -> dict[str, int]:
    return {c: i for i, c in enumerate(dict.fromkeys(c for m in marginals for c in m))}


def _weights(
    marginals: Sequence[Sequence[str]], sizes: Mapping[str, int]
) -> dict[tuple[str, ...], float]:
    """For each set of columns S (in the release's column order) within a marginal: the sum
    over the marginals B holding it of ``1 / |dom(B \\ S)|``."""
    order = _order(marginals)
    weight: dict[tuple[str, ...], float] = {}
    for m in marginals:
        for s in _subsets(m):
            key = tuple(sorted(s, key=order.__getitem__))
            weight[key] = weight.get(key, 0.0) + 1.0 / math.prod(sizes[c] for c in m if c not in s)
    return weight


def variance_factors(marginals: Sequence[Sequence[str]], sizes: Mapping[str, int]) -> list[float]:
    """``p_B`` of each marginal: a consistent cell's noise variance over a drawn cell's
    (module doc); it depends on the key sets' sizes only, not on the data or the noise."""
    order = _order(marginals)
    weight = _weights(marginals, sizes)
    out = []
    for m in marginals:
        factor = 0.0
        for s in _subsets(m):
            share = 1.0 / math.prod(sizes[c] for c in m if c not in s)
            key = tuple(sorted(s, key=order.__getitem__))
            factor += share * share / weight[key] * math.prod(1.0 - 1.0 / sizes[c] for c in s)
        out.append(factor)
    return out


def project(
    marginals: Sequence[Sequence[str]],
    sizes: Mapping[str, int],
    noisy: Sequence[np.ndarray],
) -> list[np.ndarray]:
    """The least-squares consistent marginals of ``noisy`` (module doc), float vectors in
    the cells' order. ``marginals`` are column tuples, ``sizes`` each column's key-set size,
    ``noisy`` each marginal's vector in row-major order over its columns (the first column
    varies slowest)."""
    order = _order(marginals)
    weight = _weights(marginals, sizes)
    # for each S: the weighted sum of the marginals' S parts (their weighted mean, below)
    total: dict[tuple[str, ...], np.ndarray] = {}
    for m, y in zip(marginals, noisy, strict=True):
        t = np.asarray(y, dtype=np.float64).reshape([sizes[c] for c in m])
        for s in _subsets(m):
            rest = [i for i, c in enumerate(m) if c not in s]
            w = 1.0 / math.prod(sizes[m[i]] for i in rest)
            summed = t.sum(axis=tuple(rest)) if rest else t
            kept = [c for c in m if c in s]  # the axes left, in the marginal's order
            key = tuple(sorted(kept, key=order.__getitem__))
            summed = np.transpose(summed, [kept.index(c) for c in key])
            part = _part(summed, range(len(key))) * w
            total[key] = total[key] + part if key in total else part
    estimates: list[np.ndarray] = []
    for m in marginals:
        out = np.zeros([sizes[c] for c in m], dtype=np.float64)
        for s in _subsets(m):
            key = tuple(sorted(s, key=order.__getitem__))
            share = 1.0 / math.prod(sizes[c] for c in m if c not in s)
            g = total[key] / weight[key]
            # lay g over the marginal's axes: its axes in the marginal's order, others of size 1
            kept = [c for c in m if c in s]
            g = np.transpose(g, [key.index(c) for c in kept]) if kept else g
            out = out + share * g.reshape([sizes[c] if c in s else 1 for c in m])
        estimates.append(out.reshape(-1))
    return estimates
