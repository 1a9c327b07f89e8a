"""Anonymizers: produce the least-distorted release that passes the steward's criteria.

``anonymize(table, qis, sensitive, method, criteria, hierarchies=None, seed=0, **options)``
runs one of

* ``"bucketize"`` (:mod:`.bucketize`, Anatomy, Xiao & Tao 2006): exact QIs + bucket id;
* ``"lattice"`` (:mod:`.lattice`, full-domain generalization; Incognito / Flash search with
  monotone pruning, Theorem 14 of Martin et al. 2007);
* ``"mondrian"`` (:mod:`.mondrian`, LeFevre et al. 2006 with the SkylineAnonymize check of
  Chen et al. 2007);

with any list of registry criteria ``[(name, params), ...]`` (all must pass; ``hierarchies``
may only name QI columns), and returns an
:class:`AnonymizationResult`: the release, its group columns and a JSON-ready manifest.
The release always passes every criterion when re-checked by ``airflow-privacy check``
with ``--group`` set to ``result.group_columns``; anything impossible is an
:class:`~airflow_privacy.errors.InputError` naming the criterion, value or level at fault.

Method options: ``lattice``: ``utility`` (``loss``, ``discernibility``,
``average-class-size``, ``precision``, ``non-uniform-entropy``), ``suppression_limit``
(fraction of records that may be removed), ``max_lattice_size``, ``disclosure``
(``"naive"`` or ``"safe"``: algorithm-aware p-safe release, Zhang et al. 2007;
docs/algorithm-aware.md; run it through :func:`airflow_privacy.core.algorithm_aware.anonymize`,
which supplies the safe search) and ``disclosure_limit`` (worlds enumerated per block);
``bucketize``: ``bucket_column``; all: ``progress`` (a callable receiving progress lines).

``benign`` (keyword, every method): sensitive values whose disclosure is not a breach
(docs/anonymizers.md, "Benign values"). The search decides with them as ``check --benign``
does, the manifest records them (``benign``) and its criteria results are computed with them.
``population`` (a table with the QI columns of a population that contains the input): the
criteria decided against a population table (k-map without an estimator, delta-presence;
docs/kmap-delta-presence.md) need it. The lattice generalizes it with the same hierarchies
and rolls its counts up beside the input's; Mondrian partitions the input's and the
population's records together and counts the population records of each region; bucketize
refuses it (it publishes the exact QIs, so its groups are the population's finest
classes).

**Push-down** (docs/anonymizers.md, "Deciding from a histogram"): every method decides from
the histogram of distinct ``(QI..., sensitive)`` tuples with their record counts and
returns the decision as ``result.recoding``
(:class:`~airflow_privacy.core.anonymize.plan.Recoding`). ``anonymize_histogram(hist, ...)``
is that decision for a backend's histogram (no rows read, the release not built: the
backend applies the recoding where the data lives); ``anonymize(table, ...)`` is the
in-process backend: the table's histogram, the same decision, the recoding applied with
Arrow (:mod:`.apply`), so both give the same release decision by construction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.anonymize.manifest import AnonymizationResult, Manifest
from airflow_privacy.core.anonymize.monotone import Monotonicity, monotonicity
from airflow_privacy.core.anonymize.plan import HistogramLike, PopulationCounts
from airflow_privacy.core.anonymize.release import check_seed, options
from airflow_privacy.core.anonymize.utility import METRICS
from airflow_privacy.core.hierarchy import check_hierarchy_columns
from airflow_privacy.errors import InputError, opt

if TYPE_CHECKING:
    import numpy.typing as npt
    import pyarrow as pa

    from airflow_privacy.core.anonymize.encoding import Column
    from airflow_privacy.core.anonymize.problem import NodeChooser
    from airflow_privacy.core.hierarchy import Hierarchy

__all__ = [
    "METHODS",
    "METRICS",
    "AnonymizationResult",
    "HistogramLike",
    "Manifest",
    "Monotonicity",
    "anonymize",
    "anonymize_histogram",
    "monotonicity",
]

Method = Literal["bucketize", "lattice", "mondrian"]
METHODS: tuple[str, ...] = ("bucketize", "lattice", "mondrian")

_OPTIONS: dict[str, dict[str, Any]] = {
    "bucketize": {"bucket_column": "bucket", "progress": None},
    "lattice": {
        "utility": "loss",
        "suppression_limit": 0.0,
        "max_lattice_size": 1_000_000,
        "progress": None,
        "disclosure": "naive",
        "disclosure_limit": 200_000,
    },
    "mondrian": {"progress": None, "categorical_split": "auto"},
}


def anonymize(
    table: pa.Table,
    qis: Sequence[str],
    sensitive: str,
    method: Method,
    criteria: Sequence[tuple[str, Mapping[str, Any]]],
    hierarchies: Mapping[str, Hierarchy] | None = None,
    seed: int = 0,
    *,
    chooser: NodeChooser | None = None,
    benign: Iterable[str] = (),
    population: pa.Table | None = None,
    **method_options: Any,
) -> AnonymizationResult:
    """Anonymize ``table`` with ``method`` so that every criterion passes (module doc).

    The in-process backend of the push-down contract: the table's histogram
    (:func:`~.apply.table_histogram`), the decision :func:`anonymize_histogram` takes from
    it, and the recoding applied to the rows with Arrow (:func:`~.apply.apply_recoding`);
    the written release is counted again and must give the decision's per-group counts.
    ``result.recoding`` numbers the table's own rows (one entry per published record).

    ``chooser`` is how the lattice's ``disclosure="safe"`` mode picks its node; the
    algorithm-aware package supplies it (:func:`airflow_privacy.core.algorithm_aware.anonymize`
    is this function with the safe mode)."""
    from airflow_privacy.core.anonymize.apply import (
        record_groups,
        release_of_groups,
        row_level,
        table_histogram,
    )

    prepared = _prepare(method, method_options, seed, benign, criteria, hierarchies, qis,
                        population)  # fmt: skip
    hist, row_of = table_histogram(table, qis, sensitive)
    decided = _decide(hist, method, prepared, hierarchies, chooser, population)
    recoding = decided.recoding
    if recoding is None:  # pragma: no cover - _decide refuses it
        raise RuntimeError(f"method {method} returned no recoding")
    types = dict(zip(decided.release.schema.names, decided.release.schema.types, strict=True))
    group = record_groups(row_of, recoding)
    release, rows = release_of_groups(
        table, hist.qis, hist.sensitive, group, recoding, prepared.seed,
        column_types={c: types[c] for c in recoding.columns if c in types},
        within_groups=method == "bucketize",
    )  # fmt: skip
    _check_written(release, decided)
    tables = dict(decided.tables)
    if method == "bucketize":
        tables = {"qit": release.drop_columns([sensitive]), **tables}
    return replace(
        decided, release=release, source_rows=rows, tables=tables,
        recoding=row_level(recoding, group),
    )  # fmt: skip


def anonymize_histogram(
    hist: HistogramLike,
    method: Method,
    criteria: Sequence[tuple[str, Mapping[str, Any]]],
    hierarchies: Mapping[str, Hierarchy] | None = None,
    seed: int = 0,
    *,
    chooser: NodeChooser | None = None,
    benign: Iterable[str] = (),
    population: pa.Table | PopulationCounts | None = None,
    **method_options: Any,
) -> AnonymizationResult:
    """The decision of :func:`anonymize` from a backend's histogram of the input (the
    counts of its distinct ``(QI..., sensitive)`` tuples), without touching rows.

    Returns the recoding (``result.recoding``, rows numbered as ``hist``'s rows) for the
    backend to apply where the data lives, the release's per-group counts computed from the
    histogram and the recoding (``result.bucketization``) with every criterion decided on
    them (``manifest.criteria_results``), and the manifest. ``result.release`` has the
    release's columns and no rows, ``result.source_rows`` is empty, ``result.tables`` holds
    a bucketization's ST table (its QIT is the applied release without the sensitive
    column). Same arguments, options and errors as :func:`anonymize`; the same data gives
    the same decision through every backend (:func:`~.apply.canonical`). ``population``
    may also be given by its counts (:class:`~.plan.PopulationCounts`: ``keys``, one row
    per distinct QI tuple, and ``counts``)."""
    if not all(hasattr(hist, a) for a in ("qis", "sensitive", "keys", "counts", "dropped")):
        raise InputError(f"expected a Histogram, got {type(hist).__name__}")
    prepared = _prepare(method, method_options, seed, benign, criteria, hierarchies, hist.qis,
                        population)  # fmt: skip
    return _decide(hist, method, prepared, hierarchies, chooser, population)


@dataclass(frozen=True)
class _Prepared:
    opts: dict[str, Any]
    seed: int
    marked: tuple[str, ...]
    criteria: CriteriaSet


def _prepare(
    method: str,
    method_options: Mapping[str, Any],
    seed: object,
    benign: Iterable[str],
    criteria: Sequence[tuple[str, Mapping[str, Any]]],
    hierarchies: Mapping[str, Hierarchy] | None,
    qis: Sequence[str],
    population: object,
) -> _Prepared:
    """Every argument checked before the data is read (errors name the parameter)."""
    if method not in METHODS:
        raise InputError(f"unknown method {method!r} (known: {', '.join(METHODS)})")
    opts = options(method, method_options, _OPTIONS[method])
    checked = check_seed(seed)
    if isinstance(benign, str | bytes):
        raise InputError(f"benign must be a list of values, got {benign!r}"[:200])
    marked = tuple(sorted({str(v) for v in benign}))
    parsed = CriteriaSet.parse(criteria, marked)  # before touching the data
    check_population_method(method, parsed, population is not None)
    if hierarchies is not None and not isinstance(hierarchies, Mapping):
        raise InputError("hierarchies must map a column name to a Hierarchy")
    check_hierarchy_columns(hierarchies, qis)
    return _Prepared(opts, checked, marked, parsed)


def _decide(
    hist: HistogramLike,
    method: str,
    prepared: _Prepared,
    hierarchies: Mapping[str, Hierarchy] | None,
    chooser: NodeChooser | None,
    population: pa.Table | PopulationCounts | None,
) -> AnonymizationResult:
    """The anonymizer's decision from the canonical histogram (:func:`~.apply.canonical`),
    its recoding numbering ``hist``'s own rows."""
    from airflow_privacy.core.anonymize.apply import canonical, to_histogram_rows
    from airflow_privacy.core.anonymize.encoding import Column

    enc, order = canonical(hist)
    parsed, opts, seed = prepared.criteria, prepared.opts, prepared.seed
    pop, pop_weights = _population(population, enc.qi_names)
    if method == "lattice":
        from airflow_privacy.core.anonymize.lattice import lattice_anonymize

        result = lattice_anonymize(
            enc, parsed, hierarchies, seed, chooser=chooser, population=pop,
            population_weights=pop_weights, **opts,
        )  # fmt: skip
    elif method == "mondrian":
        from airflow_privacy.core.anonymize.mondrian import mondrian_anonymize

        if pop is not None and pop_weights is not None:  # Mondrian counts population records
            pop = tuple(Column(c.name, np.repeat(c.codes, pop_weights), c.values) for c in pop)
        result = mondrian_anonymize(enc, parsed, hierarchies, seed, population=pop, **opts)
    else:
        from airflow_privacy.core.anonymize.bucketize import bucketize_anonymize

        result = bucketize_anonymize(enc, parsed, hierarchies, seed, **opts)
    if result.recoding is None:  # pragma: no cover - every anonymizer returns one
        raise RuntimeError(f"method {method} returned no recoding")
    result = replace(
        result,
        recoding=to_histogram_rows(result.recoding, order),
        bucketization=result.bucketization.normalized(),
    )
    return _with_benign(result, prepared.marked)


def _population(
    population: pa.Table | PopulationCounts | None, qis: tuple[str, ...]
) -> tuple[tuple[Column, ...] | None, npt.NDArray[np.int64] | None]:
    """The population's QI columns encoded as the input's, and the records of each row
    when it is given by its counts (``keys`` and ``counts``, as a backend's ``GROUP BY``
    of its QI columns returns them); errors name the option ``population``."""
    import pyarrow as pa

    from airflow_privacy.core.anonymize.encoding import encode_population

    if population is None:
        return None, None
    if isinstance(population, pa.Table):
        return encode_population(population, qis), None
    keys, counts = getattr(population, "keys", None), getattr(population, "counts", None)
    if not isinstance(keys, pa.Table) or counts is None:
        raise InputError(
            f"{opt('population')} must be a pyarrow Table or its counts (keys and counts), "
            f"got {type(population).__name__}"
        )
    weights = np.asarray(counts, dtype=np.int64).reshape(-1)
    if weights.shape[0] != keys.num_rows or (weights < 1).any():
        raise InputError(f"{opt('population')}: needs one count >= 1 per row of its keys")
    return encode_population(keys, qis), weights


def _with_benign(result: AnonymizationResult, marked: tuple[str, ...]) -> AnonymizationResult:
    if not marked:
        return result
    return replace(
        result,
        manifest=replace(result.manifest, benign=marked),
        bucketization=result.bucketization.with_benign(marked),
    )


def _check_written(release: pa.Table, decided: AnonymizationResult) -> None:
    """The applied release counted as ``check --group`` counts it must be the decision's
    per-group counts (an internal error otherwise: the recoding was applied wrongly)."""
    from airflow_privacy.core.model import Bucketization, ReleaseSpec

    b = decided.bucketization.normalized()
    spec = ReleaseSpec(sensitive=b.sensitive, group_columns=b.group_columns)
    written = Bucketization.from_arrow(release, spec).normalized()
    if (
        written.groups != b.groups
        or written.values != b.values
        or not np.array_equal(written.counts, b.counts)
    ):
        raise RuntimeError("internal error: the written release does not have the decided counts")


def check_population_method(method: str, criteria: CriteriaSet, given: bool) -> None:
    """A population table with a method that cannot use it, or criteria that need one
    without it: bad input before any data is read (module doc)."""
    if given and method == "bucketize":
        raise InputError(
            f"{opt('population')} does not apply to method bucketize: its buckets publish the "
            "exact quasi-identifiers, so every group is a finest population class; use "
            "method lattice"
        )
    if not given:
        for c in criteria.items:
            if c.needs_population():
                raise InputError(
                    f"criterion {c.label} is decided against a population table: give "
                    f"{opt('population')} (or, for k-map, sampling_fraction or "
                    "population_size)"
                )
