"""Pieces every anonymizer shares: option checking, placeholder group labels, and the final
check of the release exactly as ``airflow-privacy check`` will see it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.anonymize.encoding import Encoded
    from airflow_privacy.core.anonymize.plan import Recoding

IntArray = npt.NDArray[np.int64]
Progress = Callable[[str], None]

#: ``source_rows`` of a result whose release is not built yet (a decision from a histogram).
NO_ROWS: IntArray = np.zeros(0, dtype=np.int64)

_PLACEHOLDERS: list[tuple[str]] = []


def placeholder_groups(n: int) -> tuple[tuple[str], ...]:
    """Group keys ``("0",), ("1",), ...`` for bucketizations checked during a search (real
    labels are only built for the release)."""
    while len(_PLACEHOLDERS) < n:
        _PLACEHOLDERS.extend((str(i),) for i in range(len(_PLACEHOLDERS), max(n, 1024)))
    return tuple(_PLACEHOLDERS[:n])


def counts_bucketization(
    counts: IntArray, values: tuple[str, ...], sensitive: str
) -> Bucketization:
    """A bucketization of a count matrix, groups named by their row number."""
    return Bucketization(("group",), sensitive, placeholder_groups(counts.shape[0]), values, counts)


def no_progress(_message: str) -> None:
    return None


def options(method: str, given: Mapping[str, Any], allowed: Mapping[str, Any]) -> dict[str, Any]:
    """``allowed`` with the ``given`` overrides; unknown options are an error naming them."""
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise InputError(
            f"option {unknown[0]!r} does not apply to method {method} "
            f"(options: {', '.join(sorted(allowed)) or 'none'})"
        )
    out = dict(allowed)
    out.update(given)
    return out


def check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or int(seed) < 0:
        raise InputError(f"seed must be a whole number >= 0, got {seed!r}")
    return int(seed)


def recheck(
    release: pa.Table,
    group_columns: tuple[str, ...],
    sensitive: str,
    criteria: CriteriaSet,
    population: Mapping[tuple[str, ...], int] | None = None,
) -> tuple[Bucketization, list[CriterionResult]]:
    """Count the release by its group columns (as ``check --group`` does) and evaluate
    every criterion; an anonymizer only returns a release that passes. ``population``: the
    classes of the population generalized as the release is, keyed by their labels (as
    ``check --population`` counts them)."""
    spec = ReleaseSpec(sensitive=sensitive, group_columns=group_columns)
    return recheck_counts(Bucketization.from_arrow(release, spec), criteria, population)


def recheck_counts(
    b: Bucketization,
    criteria: CriteriaSet,
    population: Mapping[tuple[str, ...], int] | None = None,
) -> tuple[Bucketization, list[CriterionResult]]:
    """:func:`recheck` on the release's per-group counts (from a histogram and its
    recoding, or counted by a backend on the written release)."""
    if population is not None:
        b = b.with_population_classes(population)
    results = criteria.evaluate_all(b)
    failed = [r for r in results if not r.safe]
    if failed:  # an anonymizer bug, not bad input
        raise RuntimeError(
            f"internal error: the release fails {failed[0].criterion}: {failed[0].reason}"
        )
    return b, results


def empty_release(
    enc: Encoded, recoding: Recoding, column_types: Mapping[str, pa.DataType] | None = None
) -> pa.Table:
    """The release's columns with no rows: what a decision from a histogram returns before
    a backend applies it (:func:`airflow_privacy.core.anonymize.apply.apply_recoding` gives
    the same columns in the same order)."""
    import pyarrow as pa

    types = dict(column_types or {})
    published = set(recoding.columns)
    fields = []
    for c in enc.qis:
        kind = pa.string() if c.name in published else enc.table.schema.field(c.name).type
        fields.append(pa.field(c.name, kind))
    for name in recoding.columns:
        if name not in enc.qi_names:
            fields.append(pa.field(name, types.get(name, pa.string())))
    fields.append(pa.field(enc.sensitive.name, enc.table.schema.field(enc.sensitive.name).type))
    return pa.schema(fields).empty_table()
