"""Synthetic releases for the benchmarks: many groups with skewed sensitive distributions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

VALUES = tuple(f"diagnosis-{j:02d}" for j in range(14))


def synthetic_counts(
    n_groups: int,
    min_size: int = 40,
    max_size: int = 80,
    n_values: int = 14,
    seed: int = 0,
    alpha: float = 3.0,
) -> npt.NDArray[np.int64]:
    """Per-group counts: sizes uniform in [min_size, max_size], values drawn from a
    per-group Dirichlet(alpha) distribution (skewed, like real QI-groups)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(min_size, max_size + 1, size=n_groups)
    probs = rng.dirichlet(np.full(n_values, alpha), size=n_groups)
    counts = np.stack([rng.multinomial(int(n), p) for n, p in zip(sizes, probs, strict=True)])
    return counts.astype(np.int64)


def write_release_parquet(counts: npt.NDArray[np.int64], path: Path) -> int:
    """Write the records of a bucketization as a Parquet release (bucket, diagnosis)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n_groups, n_values = counts.shape
    flat = counts.reshape(-1)
    bucket = np.repeat(np.repeat(np.arange(n_groups, dtype=np.int32), n_values), flat)
    value = np.repeat(np.tile(np.arange(n_values, dtype=np.int32), n_groups), flat)
    rng = np.random.default_rng(1)
    order = rng.permutation(bucket.size)  # records in no particular order
    table = pa.table(
        {
            "bucket": pa.array(bucket[order]),
            "diagnosis": pa.DictionaryArray.from_arrays(
                pa.array(value[order]), pa.array(VALUES[:n_values])
            ),
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return int(bucket.size)
