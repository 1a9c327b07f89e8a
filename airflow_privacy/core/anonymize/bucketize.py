"""Bucketization (Anatomy): exact QIs, a bucket id, and each bucket's sensitive values.

Xiao & Tao, "Anatomy: Simple and Effective Privacy Preservation" (VLDB 2006). The release
keeps every QI value exactly and breaks the link between QIs and the sensitive value inside
each bucket: published either as two tables, QIT (QIs + bucket id) and ST (bucket id,
sensitive value, count), or as one table with the sensitive values randomly permuted within
each bucket (``result.release``; re-checkable with ``check --group bucket``).

How buckets are built (Anatomy's group-creation step, made QI-aware):

1. Records are ordered along a Z-order (Morton) curve over the QIs' ranks (numeric order,
   or the hierarchy's leaf order for categorical QIs, each QI scaled to the full bit range),
   so records close in that order tend to be close on every QI.
2. The records are taken in that order, ``2 l`` at a time, and hashed by sensitive value
   into queues. A *round* takes the first record of each of the ``l`` currently largest
   queues, so every round holds ``l`` distinct sensitive values; rounds go on while ``l``
   queues are non-empty, and what a window leaves over waits in the queues for the next
   window (so the records of a round are close in Z-order). Taking from the largest queues
   is Anatomy's rule that keeps rounds going as long as possible.
3. A bucket is ``r`` consecutive rounds (the last bucket takes any rounds left over);
   records left at the end, when fewer than ``l`` queues remain (Anatomy's residue), join
   the buckets nearest in Z-order that do not hold their value yet, at most one per bucket
   while such buckets remain.

How diverse the buckets must be is decided by the criteria, whichever they are: for every
``l`` a smallest passing ``r`` is searched through the registry (exponential then binary
search over ``r``; passing is not strictly monotone in ``r``, so it is the smallest the
search finds), and the passing candidate with
the lowest discernibility (ties: more distinct values per round) is published. The
construction is deterministic; ``seed`` only drives the within-bucket permutations.

**Planned from counts.** The input is the histogram of distinct ``(QI..., sensitive)``
tuples (:class:`~airflow_privacy.core.anonymize.plan.Recoding`): its rows, in the canonical
order of :func:`~airflow_privacy.core.anonymize.apply.canonical` (sorted by the text of
their values), are expanded to that many identical records (:func:`.encoding.expand`) and
the steps above run on them; records with equal Z-order keys are taken in that order (the
row-level version took them in input order, so a release may differ from it in which of
several records with the same QIs a bucket gets, never in the rules). The plan is, per
histogram row, how many of its records go to each bucket (a tuple's records may be split
over several buckets); the backend numbers a tuple's records in any order (they are
identical in the published columns) and assigns them in order. The ST table and the
per-bucket counts follow from the plan alone; the one-table release and the QIT are built
where the data lives (Anatomy's one-table form: rows sorted by bucket, shuffled within, the
sensitive values shuffled within each bucket independently; ``seed`` as before).
"""

from __future__ import annotations

import heapq
import time
from bisect import bisect_left
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.anonymize.apply import recoding_bucketization
from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.anonymize.dimensions import Dimension, dimensions, group_costs
from airflow_privacy.core.anonymize.encoding import Encoded, expand
from airflow_privacy.core.anonymize.manifest import AnonymizationResult, Manifest
from airflow_privacy.core.anonymize.plan import Recoding
from airflow_privacy.core.anonymize.release import (
    NO_ROWS,
    Progress,
    counts_bucketization,
    empty_release,
    no_progress,
    recheck_counts,
)
from airflow_privacy.core.anonymize.utility import bucket_utility
from airflow_privacy.core.hierarchy import Hierarchy
from airflow_privacy.errors import InputError, opt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def z_order(dims: Sequence[Dimension], n: int) -> IntArray:
    """Position of every record along a Z-order curve over the QIs' ranks."""
    q = len(dims)
    bits = max(1, min(20, 62 // max(q, 1)))
    key = np.zeros(n, dtype=np.int64)
    scaled = []
    for d in dims:
        rank = d.rank()
        top = int(rank.max()) if rank.size else 0
        # every QI spans the full bit range, so each one counts from the top bit on
        scaled.append((rank * ((1 << bits) - 1)) // max(top, 1))
    for b in range(bits - 1, -1, -1):
        for r in scaled:
            key = (key << 1) | ((r >> b) & 1)
    order = np.lexsort((np.arange(n), key))
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    return position


@dataclass(frozen=True)
class Rounds:
    """The rounds for one ``l``: ``round_of[r]`` (-1 for residues) per record."""

    l: int  # noqa: E741
    count: int
    round_of: IntArray


def rounds(s: IntArray, zpos: IntArray, n_values: int, l: int, window: int = 2) -> Rounds:  # noqa: E741
    """Anatomy's group creation with ``l`` values per round (module doc, step 2), run over
    consecutive windows of ``window * l`` records in Z-order: the records a window leaves
    over are carried into the next one, so a round's records are close in Z-order."""
    order = np.argsort(zpos, kind="stable").tolist()
    values = s.tolist()
    size = max(window * l, l)
    round_of = np.full(s.shape[0], -1, dtype=np.int64)
    queues: list[deque[int]] = [deque() for _ in range(n_values)]
    count = 0
    for start in range(0, len(order), size):
        for rec in order[start : start + size]:
            queues[values[rec]].append(rec)
        heap = [(-len(q), v) for v, q in enumerate(queues) if q]
        heapq.heapify(heap)
        while len(heap) >= l:
            picked = [heapq.heappop(heap)[1] for _ in range(l)]
            for v in picked:
                round_of[queues[v].popleft()] = count
                if queues[v]:
                    heapq.heappush(heap, (-len(queues[v]), v))
            count += 1
    return Rounds(l, count, round_of)


def assign(rd: Rounds, r: int, s: IntArray, zpos: IntArray, n_values: int) -> IntArray:
    """Bucket of every record for ``r`` rounds per bucket (module doc, step 3)."""
    n_buckets = max(rd.count // r, 1)
    bucket = np.full(s.shape[0], -1, dtype=np.int64)
    picked = rd.round_of >= 0
    bucket[picked] = np.minimum(rd.round_of[picked] // r, n_buckets - 1)
    residues = np.flatnonzero(~picked)
    if residues.size == 0:
        return bucket
    has = np.zeros((n_buckets, n_values), dtype=bool)
    has[bucket[picked], s[picked]] = True
    size = np.bincount(bucket[picked], minlength=n_buckets)
    center = np.bincount(bucket[picked], weights=zpos[picked], minlength=n_buckets) / size
    for v in np.unique(s[residues]).tolist():
        mine = residues[s[residues] == v]
        mine = mine[np.argsort(zpos[mine], kind="stable")]
        allowed = np.flatnonzero(~has[:, v])
        if allowed.size == 0:
            allowed = np.arange(n_buckets)
        ordered = allowed[np.argsort(center[allowed], kind="stable")]
        free = ordered.tolist()
        centers = center[free].tolist()
        for rec in mine.tolist():
            if not free:  # every bucket took a record of this value: start again
                free = ordered.tolist()
                centers = center[free].tolist()
            z = float(zpos[rec])
            at = bisect_left(centers, z)
            if at == len(free) or (at > 0 and z - centers[at - 1] <= centers[at] - z):
                at -= 1
            bucket[rec] = free.pop(at)
            centers.pop(at)
    return bucket


def bucket_counts(bucket: IntArray, s: IntArray, n_values: int) -> IntArray:
    n_buckets = int(bucket.max()) + 1
    flat = np.bincount(bucket * n_values + s, minlength=n_buckets * n_values)
    return flat.reshape(n_buckets, n_values).astype(np.int64)


def _l_values(n_values: int) -> list[int]:
    """Values per round to try: every l up to 16, then a geometric ladder."""
    out = set(range(1, min(n_values, 16) + 1))
    x = 16.0
    while x < n_values:
        x *= 1.5
        out.add(min(round(x), n_values))
    return sorted(out, reverse=True)


def bucketize_anonymize(
    enc: Encoded,
    criteria: CriteriaSet,
    hierarchies: Mapping[str, Hierarchy] | None,
    seed: int,
    bucket_column: str = "bucket",
    progress: Progress | None = None,
) -> AnonymizationResult:
    """Anatomy-style bucketization of ``enc`` passing ``criteria`` (see the module doc)."""
    report = progress or no_progress
    started = time.perf_counter()
    if not isinstance(bucket_column, str) or not bucket_column:
        raise InputError("the bucket column name must be a non-empty string")
    if bucket_column in (*enc.qi_names, enc.sensitive.name):
        raise InputError(
            f"bucket column {bucket_column!r} is also an input column: choose another name "
            f"({opt('bucket_column')})"
        )
    bound = criteria.bind(enc.sensitive.values)
    hist = enc
    enc = expand(hist)  # the records, in the histogram's (canonical) row order
    dims = dimensions(enc, hierarchies)
    s = enc.sensitive.codes
    v = len(enc.sensitive.values)
    zpos = z_order(dims, enc.n)

    whole = np.bincount(s, minlength=v).astype(np.int64)[None, :]
    failure = bound.first_failure(
        counts_bucketization(whole, enc.sensitive.values, enc.sensitive.name)
    )
    if failure is not None:
        label = next(c.label for c in bound.items if c.name == failure.criterion)
        raise InputError(
            f"no bucketization passes criterion {label}: even all {enc.n} records in one "
            f"bucket fail: {failure.reason}"
        )

    tried: list[dict[str, Any]] = []

    def passes(rd: Rounds, r: int) -> tuple[bool, IntArray]:
        bucket = assign(rd, r, s, zpos, v)
        counts = bucket_counts(bucket, s, v)
        ok = bound.passes(counts_bucketization(counts, enc.sensitive.values, enc.sensitive.name))
        tried.append({"l": rd.l, "r": r, "buckets": int(counts.shape[0]), "passed": ok})
        return ok, bucket

    best: tuple[float, int, int, IntArray] | None = None  # (discernibility, -l, r, bucket)
    for l in _l_values(v):  # noqa: E741
        rd = rounds(s, zpos, v, l)
        if rd.count == 0:
            continue
        found = _smallest_r(rd, passes)
        if found is None:
            continue
        r, bucket = found
        sizes = np.bincount(bucket)
        dm = float(np.sum(sizes.astype(np.float64) ** 2))
        report(f"bucketize: l={l} passes with {r} round(s) per bucket ({sizes.shape[0]} buckets)")
        if best is None or (dm, -l) < (best[0], best[1]):
            best = (dm, -l, r, bucket)
    if best is None:  # pragma: no cover - one bucket always passes (checked above)
        raise InputError("no bucketization passes the criteria")
    _, neg_l, r_best, bucket = best
    l_best = -neg_l
    return _result(hist, bound, dims, zpos, bucket, seed, bucket_column, {
        "l": l_best,
        "rounds_per_bucket": r_best,
        "nominal_bucket_size": l_best * r_best,
        "residues": int((rounds(s, zpos, v, l_best).round_of < 0).sum()),
        "candidates": tried,
        "elapsed_seconds": round(time.perf_counter() - started, 4),
    })  # fmt: skip


def _smallest_r(rd: Rounds, passes: Any) -> tuple[int, IntArray] | None:
    """The smallest passing ``r`` (exponential then binary search; one bucket last)."""
    low = 0  # largest r known to fail
    r = 1
    hit: tuple[int, IntArray] | None = None
    while True:
        r = min(r, rd.count)
        ok, bucket = passes(rd, r)
        if ok:
            hit = (r, bucket)
            break
        low = r
        if r >= rd.count:
            return None
        r *= 2
    high = hit[0]
    while high - low > 1:
        mid = (low + high) // 2
        ok, bucket = passes(rd, mid)
        if ok:
            high, hit = mid, (mid, bucket)
        else:
            low = mid
    return hit


def _result(
    hist: Encoded,
    bound: CriteriaSet,
    dims: Sequence[Dimension],
    zpos: IntArray,
    bucket: IntArray,
    seed: int,
    bucket_column: str,
    details: dict[str, Any],
) -> AnonymizationResult:
    """The plan (module doc): buckets numbered 1..B along the Z-order, the records of each
    histogram row counted per bucket (a :class:`~.plan.Recoding`; the records ``bucket``
    lists are ``hist``'s rows repeated by their weights, in row order), the ST table and the
    per-bucket counts; the release is built where the data lives
    (:func:`~airflow_privacy.core.anonymize.apply.apply_recoding` with ``within_groups``)."""
    import pyarrow as pa

    n_buckets = int(bucket.max()) + 1
    # number buckets 1..B along the Z-order
    center = np.bincount(bucket, weights=zpos, minlength=n_buckets) / np.bincount(bucket)
    renumber = np.empty(n_buckets, dtype=np.int64)
    renumber[np.argsort(center, kind="stable")] = np.arange(n_buckets)
    bucket = renumber[bucket]
    row = np.repeat(np.arange(hist.rows, dtype=np.int64), hist.row_weights())
    pair = np.unique(row * n_buckets + bucket, return_counts=True)
    recoding = Recoding(
        (bucket_column,),
        tuple((str(b + 1),) for b in range(n_buckets)),
        (pair[0] // n_buckets).astype(np.int64),
        (pair[0] % n_buckets).astype(np.int64),
        pair[1].astype(np.int64),
    )
    s_codes = hist.sensitive.codes[row]
    counts = bucket_counts(bucket, s_codes, len(hist.sensitive.values))
    nz_b, nz_v = np.nonzero(counts)
    st = pa.table({
        bucket_column: pa.array(nz_b + 1, type=pa.int64()),
        hist.sensitive.name: pa.array(
            [hist.sensitive.values[int(x)] for x in nz_v], pa.string()
        ),
        "count": pa.array(counts[nz_b, nz_v], type=pa.int64()),
    })  # fmt: skip
    group_columns = (bucket_column,)
    b, results = recheck_counts(recoding_bucketization(hist, recoding), bound)
    spread, _ = group_costs(dims, bucket, n_buckets)
    utility = bucket_utility(counts, spread, hist.n)
    details = {
        **details,
        "buckets": n_buckets,
        "bucket_column": bucket_column,
        "forms": ["one table (sensitive values permuted within buckets)", "qit", "st"],
    }
    manifest = Manifest(
        method="bucketize",
        qis=hist.qi_names,
        sensitive=hist.sensitive.name,
        group_columns=group_columns,
        criteria=bound.to_list(),
        parameters={"bucket_column": bucket_column},
        seed=seed,
        records_in=hist.n,
        records_out=recoding.records,
        suppressed=0,
        groups=b.n_groups,
        dropped_columns=hist.dropped,
        criteria_results=results,
        utility=utility,
        details=details,
    )
    release = empty_release(hist, recoding, bucket_types(bucket_column))
    return AnonymizationResult(
        release, group_columns, manifest, b, NO_ROWS, {"st": st}, recoding=recoding
    )


def bucket_types(bucket_column: str) -> dict[str, Any]:
    """The bucket column is published as a whole number (1..B)."""
    import pyarrow as pa

    return {bucket_column: pa.int64()}
