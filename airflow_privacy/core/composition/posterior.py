"""The frequency-aware posterior: beyond Ganta et al.'s set intersection.

Ganta et al., "Composition Attacks and Auxiliary Information in Data Privacy" (KDD 2008,
Definition 9), give the adversary confidence ``C_i = 1 / |S_i|``: every value of the
intersection ``S_i`` is taken as equally likely, whatever the groups' value *counts*. An
adversary who reads the counts does better.

Model (random worlds across releases). For individual ``i`` present in releases ``T_i``:

1. in release ``j``, ``i`` is one of the candidate records of the groups it is located in,
   each equally likely (a generalized group contributes all its ``n_g`` records, a bucket
   the records with ``i``'s exact QI tuple);
2. within a group, every assignment of the group's published sensitive multiset to its
   records is equally likely (the random-worlds assumption of Martin et al. 2007, 2.2);
3. the *other* records of ``i``'s groups belong to different people in different releases
   (no one else is a group-mate of ``i`` in two releases).

Under 1-3 the possible worlds factorize over releases given ``s_i``, and counting them gives

    Pr(s_i = v | R_1..R_n) = prod_j p_ij(v) / sum_u prod_j p_ij(u),
    p_ij(v) = sum_g w_g n_g(v) / n_g  /  sum_g w_g     (groups g located for i in R_j)

(``w_g`` = candidate records of ``i`` in ``g``). For one group per release this is
``prod_j n_ij(v) / sum_u prod_j n_ij(u)``. Its support is exactly Ganta's ``S_i`` and its
maximum is at least ``1 / |S_i|``: Ganta's ``C_i`` never overstates this adversary. The
tests check the formula against an exhaustive enumeration of possible worlds. When
assumption 3 fails (the same neighbours share ``i``'s groups in several releases) the
formula is an approximation; the set ``S_i`` remains a superset of the possible values
(docs/composition.md has an enumerated example).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def combine(distributions: Sequence[FloatArray], use: BoolArray) -> FloatArray:
    """Posterior for every individual.

    ``distributions[j]`` is the ``individuals x values`` matrix of ``p_ij`` (rows may be
    unnormalized; all-zero rows mean "not located"); ``use[i, j]`` says whether release ``j``
    is combined for individual ``i``. Rows whose combined support is empty, or that combine
    no release, come out as zeros. Computed in log space, so many releases do not underflow.
    """
    n = use.shape[0]
    if not distributions:
        return np.zeros((n, 0))
    width = distributions[0].shape[1]
    logp = np.zeros((n, width))
    with np.errstate(divide="ignore", invalid="ignore"):
        for j, dist in enumerate(distributions):
            total = dist.sum(axis=1, keepdims=True)
            p = np.divide(dist, total, out=np.zeros_like(dist), where=total > 0)
            logp[use[:, j]] += np.log(p[use[:, j]])
    top = logp.max(axis=1, keepdims=True)
    finite = np.isfinite(top).reshape(-1) & use.any(axis=1)
    out = np.zeros((n, width))
    shifted = np.exp(logp[finite] - top[finite])
    out[finite] = shifted / shifted.sum(axis=1, keepdims=True)
    return out


def most_likely(posterior: FloatArray) -> tuple[FloatArray, IntArray]:
    """The maximum posterior of each row and the (first) value index attaining it."""
    if posterior.shape[1] == 0:
        n = posterior.shape[0]
        return np.zeros(n), np.zeros(n, dtype=np.int64)
    arg = posterior.argmax(axis=1).astype(np.int64)
    return posterior[np.arange(len(arg)), arg], arg
