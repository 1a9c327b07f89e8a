"""Estimation accuracy (Du et al. 2008, section 7.1): how far the estimate ``P*(s | q)`` is
from the original table's ``P(s | q)``, as the ``P(q)``-weighted Kullback-Leibler distance

    sum_q P(q) sum_s P(s | q) log(P(s | q) / P*(s | q))

in nats (natural logarithm). Zero means the estimate recovers the original exactly; it is
infinite when the estimate rules out a value some record with ``q`` has (knowledge that is
false of the original). Lower is worse for privacy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.maxent.release import BucketRelease, string_codes
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

FloatArray = npt.NDArray[np.float64]


def original_conditional(
    release: BucketRelease, original: pa.Table
) -> tuple[FloatArray, FloatArray]:
    """``(P(q), P(s | q))`` of the original table, on the release's QI values (rows) and
    sensitive values (columns). Raises :class:`InputError` when the original has a QI value
    or sensitive value the release does not."""
    cols = (*release.qi_columns, release.sensitive)
    for c in cols:
        if c not in original.column_names:
            raise InputError(
                f"column {c!r} does not exist in the original table (columns: "
                f"{', '.join(original.column_names)})"
            )
    if original.num_rows == 0:
        raise InputError("the original table is empty")
    coded = [string_codes(original, c) for c in release.qi_columns]
    codes = np.stack([c[0] for c in coded], axis=1)
    uniq, inverse = np.unique(codes, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    qpos = release.qi_index
    to_release = np.empty(uniq.shape[0], dtype=np.int64)
    for i, row in enumerate(uniq.tolist()):
        key = tuple(coded[j][1][v] for j, v in enumerate(row))
        q = qpos.get(key)
        if q is None:  # named by row number: the original's QI values are confidential
            first = int(np.flatnonzero(inverse == i)[0])
            names = ", ".join(release.qi_columns)
            raise InputError(
                f"row {first} of the original table has QI values ({names}) that no record of "
                "the release has: the release must publish the original's QI values exactly"
            )
        to_release[i] = q
    s_codes, s_labels = string_codes(original, release.sensitive)
    vpos = {v: i for i, v in enumerate(release.values)}
    missing = [i for i, v in enumerate(s_labels) if v not in vpos]
    if missing:
        first = int(np.flatnonzero(np.isin(s_codes, missing))[0])
        raise InputError(
            f"row {first} of the original table has a value of {release.sensitive!r} that the "
            "release does not have"
        )
    s_map = np.array([vpos[v] for v in s_labels], dtype=np.int64)
    nq, nv = len(release.qi_values), len(release.values)
    flat = to_release[inverse] * nv + s_map[s_codes]
    counts = np.bincount(flat, minlength=nq * nv).reshape(nq, nv).astype(np.float64)
    n_q = counts.sum(axis=1)
    p_q = n_q / counts.sum()
    cond = np.divide(counts, n_q[:, None], out=np.zeros_like(counts), where=n_q[:, None] > 0)
    return p_q, cond


def weighted_kl(p_q: FloatArray, truth: FloatArray, estimate: FloatArray) -> float:
    """``sum_q p_q[q] sum_s truth[q, s] log(truth[q, s] / estimate[q, s])`` (nats)."""
    mask = truth > 0
    if np.any(estimate[mask] <= 0):
        return float("inf")
    with np.errstate(divide="ignore"):
        terms = np.where(
            mask, truth * np.log(np.where(mask, truth, 1.0) / np.where(mask, estimate, 1.0)), 0.0
        )
    return float(p_q @ terms.sum(axis=1))
