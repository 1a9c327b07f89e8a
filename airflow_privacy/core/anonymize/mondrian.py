"""Mondrian multidimensional partitioning with a pluggable criterion (SkylineAnonymize).

LeFevre, DeWitt, Ramakrishnan, "Mondrian Multidimensional k-Anonymity" (ICDE 2006),
Algorithm 1 (strict partitioning): start with one partition holding every record; take the
QI with the widest normalized range, split the partition at the median, and recurse; a split
is *allowable* only if the parts satisfy the constraint. Chen, LeFevre, Ramakrishnan
("Privacy Skyline", VLDB 2007, SkylineAnonymize) replace the k-anonymity constraint with a
background-knowledge check; here the constraint is any list of registry criteria:

* criteria that hold iff every group passes on its own (``local`` in
  :mod:`airflow_privacy.core.anonymize.monotone`: k-anonymity, the l-diversities,
  t-closeness against the whole table, negation-safety) are tested on the parts alone;
* the others ((c,k)-safety, skyline, anything registered later) are checked on the whole
  partitioning with the split applied, so a split is accepted only when the release it
  leads to passes. A part that fails a necessary single-group test is rejected first.

Splits (one candidate per QI, tried in decreasing order of normalized width):

* **numeric** QIs (every value a number): at the lower median value ``m``, records
  ``<= m`` left and ``> m`` right; when that leaves the right part empty the cut moves down
  to the next value. Published as inclusive intervals ``lo-hi`` of the values present (a
  single value stays ``v``); a bound is written as in the data when it is a plain decimal
  (``4.5``), else as the shortest plain decimal of the same number (``1e+20`` ->
  ``100000000000000000000``), so that the composition audit reads every label back as
  the interval it stands for (:mod:`airflow_privacy.core.composition.descriptors`).
* **categorical** QIs: into the children of the lowest common ancestor of the partition's
  values in the hierarchy (a multi-way split along the hierarchy; every part must pass),
  published as that ancestor's label; without a hierarchy the implicit one (value, ``*``)
  splits into single values and publishes ``*`` for several values.

Partitions are processed first-in first-out, which makes the result deterministic.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.anonymize.dimensions import (
    Dimension,
    dimensions,
    group_costs,
    leaf_counts,
)
from airflow_privacy.core.anonymize.encoding import Encoded
from airflow_privacy.core.anonymize.manifest import AnonymizationResult, Manifest
from airflow_privacy.core.anonymize.release import (
    Progress,
    counts_bucketization,
    no_progress,
    recheck,
)
from airflow_privacy.core.anonymize.utility import nue_constant, summarize
from airflow_privacy.core.hierarchy import Hierarchy
from airflow_privacy.errors import InputError

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class _Partitioner:
    def __init__(self, enc: Encoded, criteria: CriteriaSet, dims: Sequence[Dimension]) -> None:
        self.enc = enc
        self.criteria = criteria
        self.dims = list(dims)
        self.s = enc.sensitive.codes
        self.v = len(enc.sensitive.values)
        self.totals = np.bincount(self.s, minlength=self.v).astype(np.int64)
        self.global_idx = criteria.global_indices()
        self.attempts = 0
        self.splits = 0
        self.rejected_local = 0
        self.rejected_global = 0

    def counts(self, parts: Sequence[IntArray]) -> IntArray:
        return np.stack([np.bincount(self.s[p], minlength=self.v) for p in parts]).astype(np.int64)

    def run(self, progress: Progress) -> list[IntArray]:
        root = np.arange(self.enc.n, dtype=np.int64)
        root_counts = self.counts([root])
        b = counts_bucketization(root_counts, self.enc.sensitive.values, self.enc.sensitive.name)
        failure = self.criteria.first_failure(b)
        if failure is not None:
            label = next(c.label for c in self.criteria.items if c.name == failure.criterion)
            raise InputError(
                f"no partitioning passes criterion {label}: even all {self.enc.n} records "
                f"in one group fail: {failure.reason}"
            )
        # live partitions: id -> (rows, counts row); queue of ids still to split
        live: dict[int, tuple[IntArray, IntArray]] = {0: (root, root_counts[0])}
        queue: deque[int] = deque([0])
        final: list[int] = []
        next_id = 1
        while queue:
            pid = queue.popleft()
            rows, _ = live[pid]
            parts = self._best_split(pid, rows, live)
            if parts is None:
                final.append(pid)
                continue
            del live[pid]
            for part, row in parts:
                live[next_id] = (part, row)
                queue.append(next_id)
                next_id += 1
            self.splits += 1
            if self.splits % 250 == 0:
                progress(f"mondrian: {len(live):,} partitions, {len(queue):,} to split")
        return [live[pid][0] for pid in sorted(final)]

    def _best_split(
        self, pid: int, rows: IntArray, live: dict[int, tuple[IntArray, IntArray]]
    ) -> list[tuple[IntArray, IntArray]] | None:
        widths = [d.width(rows) for d in self.dims]
        for i in sorted(range(len(self.dims)), key=lambda j: (-widths[j], j)):
            if widths[i] <= 0:
                break
            parts = self.dims[i].split(rows)
            if len(parts) < 2:
                continue
            self.attempts += 1
            counts = self.counts(parts)
            ok = self.criteria.groups_passing(counts, self.totals)
            if not ok.all():
                self.rejected_local += 1
                continue
            if self.global_idx:
                others = [row for key, (_, row) in live.items() if key != pid]
                whole = np.vstack([*others, counts]) if others else counts
                b = counts_bucketization(whole, self.enc.sensitive.values, self.enc.sensitive.name)
                if not self.criteria.passes(b, self.global_idx):
                    self.rejected_global += 1
                    continue
            return [(p, counts[j]) for j, p in enumerate(parts)]
        return None


_PLAIN_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)", re.ASCII)


def _label(d: Dimension, rows: IntArray) -> str:
    """The published label of partition ``rows`` on ``d`` (module doc): a numeric range's
    bounds in plain decimal notation, which the audit's label reader parses exactly."""
    if d.numbers is None:
        return d.label(rows)
    vals = d.numbers[rows]
    lo, hi = int(np.argmin(vals)), int(np.argmax(vals))
    if vals[lo] == vals[hi]:
        return d.text[int(d.codes[rows[lo]])]

    def plain(r: int) -> str:
        text = d.text[int(d.codes[rows[r]])]
        if _PLAIN_NUMBER.fullmatch(text):
            return text
        return str(np.format_float_positional(float(vals[r]), unique=True, trim="-"))

    return f"{plain(lo)}-{plain(hi)}"


def mondrian_anonymize(
    enc: Encoded,
    criteria: CriteriaSet,
    hierarchies: Mapping[str, Hierarchy] | None,
    seed: int,
    progress: Progress | None = None,
) -> AnonymizationResult:
    """Mondrian partitioning of ``enc`` passing ``criteria`` (see the module doc)."""
    import pyarrow as pa

    report = progress or no_progress
    started = time.perf_counter()
    bound = criteria.bind(enc.sensitive.values)
    dims = dimensions(enc, hierarchies)
    parts = _Partitioner(enc, bound, dims)
    partitions = parts.run(report)
    report(f"mondrian: {len(partitions)} partitions")

    labels = [[_label(d, p) for d in dims] for p in partitions]
    order = np.random.default_rng(seed)
    rows = order.permutation(np.concatenate(partitions)).astype(np.int64)
    part_of = np.empty(enc.n, dtype=np.int64)
    for j, p in enumerate(partitions):
        part_of[p] = j
    columns: dict[str, Any] = {}
    for i, d in enumerate(dims):
        lab = pa.array([labels[j][i] for j in range(len(partitions))], type=pa.string())
        columns[d.name] = lab.take(pa.array(part_of[rows]))
    columns[enc.sensitive.name] = enc.table.column(enc.sensitive.name).take(pa.array(rows))
    release = pa.table(columns)
    group_columns = enc.qi_names
    b, results = recheck(release, group_columns, enc.sensitive.name, bound)

    sizes = np.asarray([p.shape[0] for p in partitions], dtype=np.int64)
    loss, log2_cov = group_costs(dims, part_of, len(partitions))
    utility = summarize(sizes, loss, log2_cov, nue_constant(leaf_counts(dims)), enc.n, 0)
    details = {
        "partitions": [
            {"labels": dict(zip(group_columns, lab, strict=True)), "size": int(p.shape[0])}
            for lab, p in zip(labels, partitions, strict=True)
        ],
        "dimensions": {
            d.name: (
                "numeric"
                if d.numbers is not None
                else (
                    "categorical (implicit hierarchy)"
                    if d.tree is not None and d.tree.implicit
                    else "categorical"
                )
            )
            for d in dims
        },
        "split_attempts": parts.attempts,
        "rejected_by_group_tests": parts.rejected_local,
        "rejected_by_release_check": parts.rejected_global,
        "criteria_checked_on_whole_release": [bound.items[i].label for i in parts.global_idx],
        "elapsed_seconds": round(time.perf_counter() - started, 4),
    }
    manifest = Manifest(
        method="mondrian",
        qis=group_columns,
        sensitive=enc.sensitive.name,
        group_columns=group_columns,
        criteria=bound.to_list(),
        parameters={},
        seed=seed,
        records_in=enc.n,
        records_out=release.num_rows,
        suppressed=0,
        groups=b.n_groups,
        dropped_columns=enc.dropped,
        criteria_results=results,
        utility=utility,
        details=details,
    )
    return AnonymizationResult(release, group_columns, manifest, b, rows)
