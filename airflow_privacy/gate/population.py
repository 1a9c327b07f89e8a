"""A population table's class sizes, counted once for every step that needs them.

k-map against a population table and delta-presence compare every group of a release with
the matching class of a population (the population's records with the same values of the
group columns, the sample included: docs/kmap-delta-presence.md). The population is a
reference like the release (file, URI or SQL table); only its class sizes are kept, and an
envelope records its reference and size, never its rows.

A group of the release that the population lacks, or holds fewer records of than the
release, is bad input naming the option and the group's published label (the group's values
are what the release publishes; never a sensitive value).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt

if TYPE_CHECKING:
    from airflow_privacy.core.model import Bucketization
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.refs import ReleaseRef

Classes = dict[tuple[str | None, ...], int]


def check_population_ref(population: Any, release: ReleaseRef | None = None) -> None:
    """A population reference, checked before any data is read."""
    from airflow_privacy.gate.refs import ReleaseRef

    if population is None:
        return
    if not isinstance(population, ReleaseRef):
        raise InputError(f"{opt('population')} must be a table reference, got {population!r}")
    if release is not None and population == release:
        raise InputError(f"{opt('population')} is the release itself: give the population table")


def require_population(criteria: Sequence[Any], population: Any) -> None:
    """Criteria decided against a population table, without one: bad input before any data
    is read, naming the option (``--population``, ``population``)."""
    if population is not None:
        return
    for c in criteria:
        if c.needs_population():
            raise InputError(
                f"criterion {c.label} is decided against a population table: give "
                f"{opt('population')} (or, for k-map, sampling_fraction or population_size)"
            )


def read_population_classes(
    ref: ReleaseRef,
    columns: Sequence[str],
    ctx: GateContext,
    *,
    fmt: Any = None,
    delimiter: str | None = None,
) -> Classes:
    """The size of every class of population ``ref`` on ``columns`` (values as text)."""
    from airflow_privacy.core.cells import describe_columns
    from airflow_privacy.gate.risk_classes import class_counts
    from airflow_privacy.gate.tables import column_names, read_table

    present = column_names(ref, ctx, fmt=fmt, delimiter=delimiter)
    for c in columns:
        if c not in present:
            raise InputError(
                f"{opt('population')} {ref.describe()} has no column {c!r} "
                f"(columns: {describe_columns(present)})"
            )
    if not ref.is_table and not ref.is_uri:
        from airflow_privacy.gate.risk_classes import file_classes

        counted = file_classes(ref, columns, ctx, fmt, delimiter)
        if counted is not None:
            if not counted:
                raise InputError(f"{opt('population')} {ref.describe()} has no records")
            return counted
    if ref.is_table:  # only the class sizes leave the database
        from airflow_privacy.gate.risk_classes import class_key
        from airflow_privacy.gate.tables import sql_group_counts

        ctx.progress(f"counting the population's classes in {ref.describe()} (GROUP BY)")
        classes: Classes = {}
        for row in sql_group_counts(ref, list(columns), ctx):
            k = class_key(row[:-1])
            classes[k] = classes.get(k, 0) + int(row[-1])
    else:
        ctx.progress(f"reading the population {ref.describe()}")
        table = read_table(ref, list(columns), ctx, fmt=fmt, delimiter=delimiter)
        classes = class_counts(table, list(columns))
    if not classes:
        raise InputError(f"{opt('population')} {ref.describe()} has no records")
    return classes


def with_population(b: Bucketization, classes: Classes) -> Bucketization:
    """``b`` with the population class size of each of its groups and the sizes of the
    population classes no group covers (``Bucketization.population``).

    A population record belongs to the group whose published labels cover its values, read
    as the composition audit reads labels (:mod:`airflow_privacy.core.composition.descriptors`:
    the label itself, ``*``, an interval ``20-29``, a mask ``130**``), so the population may
    hold the original values of a generalized release or values generalized as it is. A
    record that no group covers is in a population class without a released record (its
    values form its class); a record that several groups cover (overlapping labels) is bad
    input, as is a group the population lacks or holds fewer records of than the release."""
    import numpy as np

    from airflow_privacy.core.composition.descriptors import match_matrix

    q = len(b.group_columns)
    keys = list(classes)
    sizes = np.asarray([classes[k] for k in keys], dtype=np.int64)
    n_groups = b.n_groups
    # per column: the distinct population values x the distinct group labels
    covers = []
    value_codes = np.zeros((len(keys), q), dtype=np.int64)
    label_codes = np.zeros((n_groups, q), dtype=np.int64)
    for c, col in enumerate(b.group_columns):
        labels = list(dict.fromkeys(g[c] for g in b.groups))
        label_pos = {lab: i for i, lab in enumerate(labels)}
        label_codes[:, c] = [label_pos[g[c]] for g in b.groups]
        values = list(dict.fromkeys("" if k[c] is None else str(k[c]) for k in keys))
        value_pos = {v: i for i, v in enumerate(values)}
        value_codes[:, c] = [value_pos["" if k[c] is None else str(k[c])] for k in keys]
        matrix = match_matrix(labels, values, col)
        blank = value_pos.get("")
        if blank is not None:
            matrix[blank, :] = False  # a blank population value matches no label
        covers.append(matrix)
    population = np.zeros(n_groups, dtype=np.int64)
    rest: list[int] = []
    chunk = max(1, 4_000_000 // max(n_groups, 1))
    for start in range(0, len(keys), chunk):
        stop = min(start + chunk, len(keys))
        hit = np.ones((stop - start, n_groups), dtype=bool)
        for c in range(q):
            hit &= covers[c][value_codes[start:stop, c]][:, label_codes[:, c]]
        count = hit.sum(axis=1)
        several = np.flatnonzero(count > 1)
        if several.size:
            gs = np.flatnonzero(hit[int(several[0])])
            raise InputError(
                f"{opt('population')}: records of the population are covered by the labels of "
                f"{int(count[several[0]])} groups of the release ('{b.group_label(int(gs[0]))}' "
                f"and '{b.group_label(int(gs[1]))}'): the groups overlap, so their population "
                "classes are ambiguous; give the population generalized as the release is"
            )
        one = count == 1
        np.add.at(population, np.argmax(hit[one], axis=1), sizes[start:stop][one])
        rest.extend(int(x) for x in sizes[start:stop][~one])
    missing = np.flatnonzero(population == 0)
    if missing.size:
        g = int(missing[0])
        more = f" ({missing.size} groups are missing)" if missing.size > 1 else ""
        raise InputError(
            f"{opt('population')} does not contain the release: no record of the population "
            f"falls in group '{b.group_label(g)}' ({int(b.sizes[g])} records), counted on the "
            f"same group columns{more}"
        )
    return b.with_population(population, rest)


def population_facts(ref: ReleaseRef, b: Bucketization) -> dict[str, Any]:
    """What an envelope records of the population: its reference and size, never rows."""
    return {
        "population": {
            "ref": ref.describe(),
            "records": b.population_records,
            "classes": b.n_groups + len(b.population_rest),
            "classes_without_release_records": len(b.population_rest),
        }
    }
