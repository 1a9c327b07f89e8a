"""A small Anatomy-like bucketizer for the Privacy-MaxEnt experiments (Du et al. 2008,
section 7; Xiao and Tao 2006, section 5).

Records are hashed by sensitive value; each bucket takes one record from each of the ``l``
currently largest value lists, so every bucket holds ``l`` records with ``l`` distinct
sensitive values (distinct l-diversity). Within a list the records are taken in a seeded
random order. The paper's set-up is ``n_buckets = 2842`` buckets of 5 records (14,210
records) of Adult with Education sensitive and the 8 other attributes as QIs; the paper
relaxes diversity for the most frequent value (footnote 3), we keep all five values
distinct, which satisfies the relaxed condition too. Records left when fewer than ``l``
values remain (or after ``n_buckets`` buckets) are not published.

This is the experiment's fixture, not the product's anonymizer (that is
``airflow_privacy.core.anonymize``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from airflow_privacy.core.maxent.release import string_codes
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

ADULT_SENSITIVE = "education"
ADULT_QIS = (
    "sex",
    "age",
    "race",
    "marital-status",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
)
PAPER_BUCKETS = 2842


def bucketize_diverse(
    table: pa.Table,
    sensitive: str,
    l: int = 5,  # noqa: E741 (the paper's name)
    n_buckets: int | None = None,
    seed: int = 0,
    bucket_column: str = "bucket",
) -> tuple[pa.Table, pa.Table]:
    """``(original, release)``: the bucketed records with their bucket id, and the release,
    in which every bucket's sensitive values are shuffled among its records (only the
    bucket's multiset is published)."""
    import pyarrow as pa

    if l < 1:
        raise InputError(f"l must be >= 1, got {l}")
    if bucket_column in table.column_names:
        raise InputError(f"the table already has a column {bucket_column!r}")
    codes, _ = string_codes(table, sensitive)
    rng = np.random.default_rng(seed)
    lists = [rng.permutation(np.flatnonzero(codes == v)).tolist() for v in range(codes.max() + 1)]
    sizes = np.array([len(x) for x in lists], dtype=np.int64)
    limit = n_buckets if n_buckets is not None else len(codes)
    rows: list[int] = []
    while len(rows) // l < limit and int((sizes > 0).sum()) >= l:
        top = np.argsort(-sizes, kind="stable")[:l]
        for v in top.tolist():
            rows.append(lists[v].pop())
            sizes[v] -= 1
    if n_buckets is not None and len(rows) // l < n_buckets:
        raise InputError(
            f"only {len(rows) // l} buckets of {l} distinct {sensitive!r} values can be formed, "
            f"{n_buckets} were asked for"
        )
    if not rows:
        raise InputError(
            f"fewer than {l} distinct values of {sensitive!r}: no bucket can be formed"
        )
    take = np.asarray(rows, dtype=np.int64)
    bucket = np.repeat(np.arange(len(rows) // l, dtype=np.int64), l)
    original = table.take(pa.array(take)).append_column(bucket_column, pa.array(bucket))
    # the release: shuffle the sensitive values within every bucket
    order = rng.permuted(np.arange(len(rows)).reshape(-1, l), axis=1).ravel()
    s_col = original.column(sensitive).take(pa.array(order))
    release = original.set_column(original.column_names.index(sensitive), sensitive, s_col)
    return original, release


def adult_section7(
    n_buckets: int = PAPER_BUCKETS,
    l: int = 5,  # noqa: E741 (the paper's name)
    seed: int = 0,
) -> tuple[pa.Table, pa.Table]:
    """The paper's section 7 set-up on the bundled Adult data: Education sensitive, the 8
    other attributes as QIs, ``n_buckets`` buckets of ``l`` distinct Education values."""
    from airflow_privacy.core.datasets import load_adult

    table = load_adult().select([*ADULT_QIS, ADULT_SENSITIVE])
    return bucketize_diverse(table, ADULT_SENSITIVE, l=l, n_buckets=n_buckets, seed=seed)
