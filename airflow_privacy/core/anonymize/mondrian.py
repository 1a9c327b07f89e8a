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
* **categorical** QIs, ``categorical_split="hierarchy"``: into the children of
  the lowest common ancestor of the partition's values in the hierarchy (a multi-way split
  along the hierarchy; every part must pass), published as that ancestor's label; without
  a hierarchy the implicit one (value, ``*``) splits into single values and publishes
  ``*`` for several values.
* **categorical** QIs, ``categorical_split="halving"``: the values present, in a fixed
  order, cut into two halves (anonypy 0.2.1's ``Mondrian.split``; the order and the label
  ``{a|b}`` in :mod:`airflow_privacy.core.anonymize.dimensions`).
* ``categorical_split="auto"`` (the default): both partitionings are made and the one with
  more classes is published (the smaller average class size, LeFevre et al.'s C_AVG at a
  fixed k), the hierarchy's on a tie; neither beats the other on every table (on Adult
  halving gives about 9% more classes, on a table whose hierarchy matches the data the
  hierarchy can give more). Without a categorical QI the two are one and run once.

Partitions are processed first-in first-out, which makes the result deterministic; the
final ones are listed in the order of their labels.

**Over a histogram** (``enc.weights``: one row per distinct ``(QI..., sensitive)`` tuple
and its records): every quantity Algorithm 1 reads is a statistic of records (the median
record's value, the counts, the population's sizes) or of the values present (widths,
labels), and a split is by value, so a partition is a union of whole tuples and the
partitions are exactly those of the expanded table. The decision is returned as a
:class:`~airflow_privacy.core.anonymize.plan.Recoding` (each histogram row to its
partition's labels; nothing suppressed), which the backend applies where the data lives.

**With a population table** (k-map against it, delta-presence): a partition is a region of
the QI space, and its population class is the population's records inside it. The
partitioning runs over the input's records and the population's together (the widths,
medians and published extents are those of both), counting the input's records as the
release and the population's as the region's class size ``F`` (a histogram row counts its
records, a population row one); a split is allowed only when every part holds at least one
input record (a region without released records is never created, so every population
record falls in a published group), and the parts pass the criteria with their ``F``. The
regions are disjoint, so the published labels cover every population record exactly once;
the release is re-checked with those counts. The utility metrics are computed over the
regions' extents (non-uniform entropy, defined by the input's value frequencies, is not
reported then).
"""

from __future__ import annotations

import re
import time
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.anonymize.dimensions import (
    CATEGORICAL_SPLITS,
    Dimension,
    dimensions,
    group_costs,
    leaf_counts,
)
from airflow_privacy.core.anonymize.encoding import Column, Encoded
from airflow_privacy.core.anonymize.manifest import AnonymizationResult, Manifest
from airflow_privacy.core.anonymize.plan import Recoding
from airflow_privacy.core.anonymize.release import (
    Progress,
    counts_bucketization,
    no_progress,
)
from airflow_privacy.core.anonymize.utility import nue_constant, summarize
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.hierarchy import Hierarchy
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.errors import InputError, opt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class _Partitioner:
    """Algorithm 1 of LeFevre et al. (2006) over rows that may weigh several records (a
    histogram's distinct tuples): every count is a sum of weights, so the partitions are
    those of the expanded table."""

    def __init__(
        self,
        enc: Encoded,
        criteria: CriteriaSet,
        dims: Sequence[Dimension],
        n_population: int | None = None,
    ) -> None:
        self.enc = enc
        self.criteria = criteria
        self.dims = list(dims)
        self.s = enc.sensitive.codes
        self.v = len(enc.sensitive.values)
        self.w = enc.row_weights().astype(np.float64)
        self.totals = self._bincount(np.arange(enc.rows, dtype=np.int64))
        # with a population, rows enc.rows .. enc.rows + n_population - 1 of the dimensions
        # are the population's records, one record each (module doc)
        self.population = n_population is not None
        self.n_rows = enc.rows + (n_population or 0)
        self.global_idx = criteria.global_indices()
        self.attempts = 0
        self.splits = 0
        self.rejected_local = 0
        self.rejected_global = 0

    def _bincount(self, rows: IntArray) -> IntArray:
        """Records per sensitive value among input ``rows`` (weights summed exactly: they
        are integers far below 2**53)."""
        out: IntArray = np.rint(
            np.bincount(self.s[rows], weights=self.w[rows], minlength=self.v)
        ).astype(np.int64)
        return out

    def counts(self, parts: Sequence[IntArray]) -> IntArray:
        n = self.enc.rows
        return np.stack([self._bincount(p[p < n]) for p in parts])

    def sizes_in_population(self, parts: Sequence[IntArray]) -> IntArray | None:
        """The population records of each part (``None`` without a population)."""
        if not self.population:
            return None
        return np.asarray([int((p >= self.enc.rows).sum()) for p in parts], dtype=np.int64)

    def release(self, counts: IntArray, population: IntArray | None) -> Bucketization:
        b = counts_bucketization(counts, self.enc.sensitive.values, self.enc.sensitive.name)
        return b if population is None else b.with_population(population)

    def run(self, progress: Progress) -> list[IntArray]:
        root = np.arange(self.n_rows, dtype=np.int64)
        root_counts = self.counts([root])
        root_population = self.sizes_in_population([root])
        b = self.release(root_counts, root_population)
        failure = self.criteria.first_failure(b)
        if failure is not None:
            label = next(c.label for c in self.criteria.items if c.name == failure.criterion)
            raise InputError(
                f"no partitioning passes criterion {label}: even all {self.enc.n} records "
                f"in one group fail: {failure.reason}"
            )
        # live partitions: id -> (rows, counts row, population); queue of ids still to split
        live: dict[int, tuple[IntArray, IntArray, int]] = {
            0: (root, root_counts[0], 0 if root_population is None else int(root_population[0]))
        }
        queue: deque[int] = deque([0])
        final: list[int] = []
        next_id = 1
        while queue:
            pid = queue.popleft()
            rows = live[pid][0]
            parts = self._best_split(pid, rows, live)
            if parts is None:
                final.append(pid)
                continue
            del live[pid]
            for part, row, big_f in parts:
                live[next_id] = (part, row, big_f)
                queue.append(next_id)
                next_id += 1
            self.splits += 1
            if self.splits % 250 == 0:
                progress(f"mondrian: {len(live):,} partitions, {len(queue):,} to split")
        return [live[pid][0] for pid in sorted(final)]

    def _best_split(
        self, pid: int, rows: IntArray, live: dict[int, tuple[IntArray, IntArray, int]]
    ) -> list[tuple[IntArray, IntArray, int]] | None:
        widths = [d.width(rows) for d in self.dims]
        for i in sorted(range(len(self.dims)), key=lambda j: (-widths[j], j)):
            if widths[i] <= 0:
                break
            parts = self.dims[i].split(rows)
            if len(parts) < 2:
                continue
            self.attempts += 1
            counts = self.counts(parts)
            population = self.sizes_in_population(parts)
            if population is not None and (counts.sum(axis=1) == 0).any():
                self.rejected_local += 1  # a region without released records (module doc)
                continue
            ok = self.criteria.groups_passing(counts, self.totals, population=population)
            if not ok.all():
                self.rejected_local += 1
                continue
            if self.global_idx:
                others = [(row, f) for key, (_, row, f) in live.items() if key != pid]
                whole = np.vstack([*(r for r, _ in others), counts]) if others else counts
                whole_population = (
                    None
                    if population is None
                    else np.concatenate([np.asarray([f for _, f in others], np.int64), population])
                )
                if not self.criteria.passes(self.release(whole, whole_population), self.global_idx):
                    self.rejected_global += 1
                    continue
            big = population if population is not None else np.zeros(len(parts), np.int64)
            return [(p, counts[j], int(big[j])) for j, p in enumerate(parts)]
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


def _with_population(
    enc: Encoded,
    population: Sequence[Column],
    hierarchies: Mapping[str, Hierarchy] | None,
    categorical_split: str,
) -> list[Dimension]:
    """The dimensions of the input's rows followed by the population's records (module
    doc), after checking that the population holds every input record's QI values at least
    as often as the input does (a histogram row counts its records)."""
    import pyarrow as pa

    from airflow_privacy.core.anonymize.encoding import encode

    qis = enc.qi_names
    sample_keys: Counter[tuple[int, ...]] = Counter()
    for key, w in zip(
        zip(*(c.codes.tolist() for c in enc.qis), strict=True),
        enc.row_weights().tolist(),
        strict=True,
    ):
        sample_keys[key] += int(w)
    pop_text = Counter(zip(*([c.values[int(x)] for x in c.codes] for c in population), strict=True))
    for key, f in sample_keys.items():
        text = tuple(c.values[int(x)] for c, x in zip(enc.qis, key, strict=True))
        if pop_text.get(text, 0) < f:
            label = ", ".join(f"{q}={v}" for q, v in zip(qis, text, strict=True))
            raise InputError(
                f"{opt('population')} does not contain the input: group '{label}' has {f} "
                f"records in the input but {pop_text.get(text, 0)} in the population"
            )
    columns: dict[str, Any] = {}
    for c, p in zip(enc.qis, population, strict=True):
        values = [c.values[int(x)] for x in c.codes] + [p.values[int(x)] for x in p.codes]
        columns[c.name] = pa.array(values, type=pa.string())
    n_pop = int(population[0].codes.shape[0])
    columns["\x00s"] = pa.array(["0"] * (enc.rows + n_pop), type=pa.string())
    both = encode(pa.table(columns), qis, "\x00s")
    weights = np.concatenate([enc.row_weights(), np.ones(n_pop, dtype=np.int64)])
    try:
        return dimensions(both, hierarchies, categorical_split, weights=weights)
    except InputError as exc:
        raise InputError(f"{opt('population')}: {exc}") from None


def _partition(
    enc: Encoded,
    bound: CriteriaSet,
    hierarchies: Mapping[str, Hierarchy] | None,
    population: Sequence[Column] | None,
    split: str,
    report: Progress,
) -> tuple[list[Dimension], _Partitioner, list[IntArray]]:
    """Algorithm 1 with one categorical split (``auto`` runs ``hierarchy`` first)."""
    split = "hierarchy" if split == "auto" else split
    if population is None:
        dims = dimensions(enc, hierarchies, split)
        parts = _Partitioner(enc, bound, dims)
    else:
        dims = _with_population(enc, population, hierarchies, split)
        parts = _Partitioner(enc, bound, dims, int(population[0].codes.shape[0]))
    return dims, parts, parts.run(report)


def check_categorical_split(value: object) -> str:
    """``categorical_split`` must be one of :data:`CATEGORICAL_SPLITS`. The front ends check
    it first in their own words (``--categorical-split``, ``method_options['categorical_split']``);
    this message is the Python API's, which names its options as ``options()`` does."""
    if not isinstance(value, str) or value not in CATEGORICAL_SPLITS:
        raise InputError(
            f"option 'categorical_split' must be one of {', '.join(CATEGORICAL_SPLITS)}, "
            f"got {value!r}"[:300]
        )
    return value


def mondrian_anonymize(
    enc: Encoded,
    criteria: CriteriaSet,
    hierarchies: Mapping[str, Hierarchy] | None,
    seed: int,
    progress: Progress | None = None,
    population: Sequence[Column] | None = None,
    categorical_split: str = "auto",
) -> AnonymizationResult:
    """Mondrian partitioning of ``enc`` passing ``criteria`` (see the module doc);
    ``population``: the QI columns of a population table containing the input;
    ``categorical_split``: ``"hierarchy"``, ``"halving"`` or ``"auto"`` (module doc).

    ``enc`` may be row-level or a histogram (``enc.weights``): the partitions, labels,
    counts, utility and :attr:`AnonymizationResult.recoding` are the same for a table and
    its histogram. The release table is built for row-level input only; for a histogram
    ``release`` is an empty table with the release's schema (every column text, the
    sensitive column as in ``enc.table``), ``source_rows`` is empty, and the records are
    published by applying ``recoding`` where the data lives."""
    import pyarrow as pa

    split = check_categorical_split(categorical_split)
    report = progress or no_progress
    started = time.perf_counter()
    bound = criteria.bind(enc.sensitive.values)
    tried: dict[str, int] = {}
    dims, parts, regions = _partition(enc, bound, hierarchies, population, split, report)
    if split == "auto":
        tried["hierarchy"] = len(regions)
        split = "hierarchy"
        if any(d.numbers is None for d in dims):  # a categorical QI: halving may differ
            other = _partition(enc, bound, hierarchies, population, "halving", report)
            tried["halving"] = len(other[2])
            if len(other[2]) > len(regions):
                dims, parts, regions = other
                split = "halving"
        report(f"mondrian: the {split} split kept ({len(regions)} partitions; "
               + ", ".join(f"{k}: {v}" for k, v in tried.items()) + ")")  # fmt: skip
    report(f"mondrian: {len(regions)} partitions")

    n_in = enc.rows
    labels = [[_label(d, p) for d in dims] for p in regions]
    # partitions in the order of their labels (unique: the regions are disjoint), so the
    # manifest and the recoding do not depend on the order of the input's rows
    by_label = sorted(range(len(regions)), key=lambda j: labels[j])
    regions = [regions[j] for j in by_label]
    labels = [labels[j] for j in by_label]
    partitions = [p[p < n_in] for p in regions]
    part_of = np.empty(parts.n_rows, dtype=np.int64)
    for j, p in enumerate(regions):
        part_of[p] = j
    group_columns = enc.qi_names
    classes: dict[tuple[str, ...], int] | None = None
    if population is not None:
        classes = {}
        for lab, p in zip(labels, regions, strict=True):
            key = tuple(lab)
            if key in classes:  # pragma: no cover - regions are disjoint
                raise RuntimeError("two Mondrian regions share their labels")
            classes[key] = int((p >= n_in).sum())
    counts = parts.counts(partitions)
    row_group = part_of[:n_in]
    recoding = Recoding(
        columns=group_columns,
        labels=tuple(tuple(lab) for lab in labels),
        row=np.arange(n_in, dtype=np.int64),
        group=row_group.copy(),
        count=enc.row_weights().astype(np.int64),
    )
    if enc.weights is None:
        order = np.random.default_rng(seed)
        rows = order.permutation(np.concatenate(partitions)).astype(np.int64)
        columns: dict[str, Any] = {}
        for i, d in enumerate(dims):
            lab = pa.array([labels[j][i] for j in range(len(partitions))], type=pa.string())
            columns[d.name] = lab.take(pa.array(part_of[rows]))
        columns[enc.sensitive.name] = enc.table.column(enc.sensitive.name).take(pa.array(rows))
        release = pa.table(columns)
        # the release table counted as `check --group` counts it, then put in the order
        # a histogram's release has (recheck_counts), so both give the same manifest
        counted = Bucketization.from_arrow(
            release, ReleaseSpec(sensitive=enc.sensitive.name, group_columns=group_columns)
        )
        b, results = recheck_counts(
            counted.groups, counted.counts, counted.values, group_columns, enc.sensitive.name,
            bound, classes,
        )  # fmt: skip
    else:
        rows = np.zeros(0, dtype=np.int64)
        sensitive_type = enc.table.schema.field(enc.sensitive.name).type
        release = pa.table(
            {
                **{q: pa.array([], type=pa.string()) for q in group_columns},
                enc.sensitive.name: pa.array([], type=sensitive_type),
            }
        )
        b, results = recheck_counts(
            labels, counts, enc.sensitive.values, group_columns, enc.sensitive.name, bound,
            classes,
        )  # fmt: skip

    sizes = counts.sum(axis=1).astype(np.int64)
    loss, log2_cov = group_costs(dims, part_of, len(partitions))
    if population is None:
        utility = summarize(sizes, loss, log2_cov, nue_constant(leaf_counts(dims)), enc.n, 0)
    else:
        utility = summarize(sizes, loss, None, 0.0, enc.n, 0)
    details = {
        "partitions": [
            {"labels": dict(zip(group_columns, lab, strict=True)), "size": int(size)}
            for lab, size in zip(labels, sizes.tolist(), strict=True)
        ],
        "dimensions": {d.name: _kind(d) for d in dims},
        "categorical_split": split,
        **({"partitions_by_split": tried} if tried else {}),
        "split_attempts": parts.attempts,
        "rejected_by_group_tests": parts.rejected_local,
        "rejected_by_release_check": parts.rejected_global,
        "criteria_checked_on_whole_release": [bound.items[i].label for i in parts.global_idx],
        "elapsed_seconds": round(time.perf_counter() - started, 4),
    }
    parameters: dict[str, Any] = {"categorical_split": split}
    if tried:
        parameters["categorical_split_asked"] = "auto"
    if population is not None:
        parameters["population_records"] = parts.n_rows - n_in
    manifest = Manifest(
        method="mondrian",
        qis=group_columns,
        sensitive=enc.sensitive.name,
        group_columns=group_columns,
        criteria=bound.to_list(),
        parameters=parameters,
        seed=seed,
        records_in=enc.n,
        records_out=int(sizes.sum()),
        suppressed=0,
        groups=b.n_groups,
        dropped_columns=enc.dropped,
        criteria_results=results,
        utility=utility,
        details=details,
    )
    return AnonymizationResult(release, group_columns, manifest, b, rows, recoding=recoding)


def _kind(d: Dimension) -> str:
    if d.numbers is not None:
        return "numeric"
    if d.halving:
        return "categorical (halving)"
    if d.tree is not None and d.tree.implicit:
        return "categorical (implicit hierarchy)"
    return "categorical"


def recheck_counts(
    labels: Sequence[Sequence[str]],
    counts: IntArray,
    values: Sequence[str],
    group_columns: tuple[str, ...],
    sensitive: str,
    criteria: CriteriaSet,
    population: Mapping[tuple[str, ...], int] | None = None,
) -> tuple[Bucketization, list[CriterionResult]]:
    """The release's bucketization from per-group counts (for a histogram, the partitions'
    counts: its records are never expanded) and every criterion evaluated on it, as
    :func:`~airflow_privacy.core.anonymize.release.recheck` does for a release table.
    Groups are sorted by their labels, sensitive values by their text (values no record has
    are dropped), so the result depends neither on the order of the histogram's rows nor on
    the release's row order."""
    keys = [tuple(lab) for lab in labels]
    if len(set(keys)) != len(keys):  # pragma: no cover - partitions are disjoint regions
        raise RuntimeError("two Mondrian partitions share their labels")
    g_order = sorted(range(len(keys)), key=lambda g: keys[g])
    used = [v for v in range(len(values)) if counts[:, v].any()]
    v_order = sorted(used, key=lambda v: values[v])
    matrix = counts[np.asarray(g_order, dtype=np.int64)][:, np.asarray(v_order, dtype=np.int64)]
    b = Bucketization(
        group_columns,
        sensitive,
        tuple(keys[g] for g in g_order),
        tuple(values[v] for v in v_order),
        np.ascontiguousarray(matrix, dtype=np.int64),
    )
    if population is not None:
        b = b.with_population_classes(population)
    results = criteria.evaluate_all(b)
    failed = [r for r in results if not r.safe]
    if failed:  # an anonymizer bug, not bad input
        raise RuntimeError(
            f"internal error: the release fails {failed[0].criterion}: {failed[0].reason}"
        )
    return b, results
