"""Entity-level counting and sample weights for the check and risk steps
(:mod:`airflow_privacy.core.entities`; docs/risk.md, "Entities and weights").

The check reads the release on its group, sensitive and entity columns (for a SQL table, as
``SELECT entity, g.., s, COUNT(*) ... GROUP BY entity, g.., s``, plain SQL every dialect
runs; the entity identifiers reach this process, never a message, log or envelope) and
counts one record per entity. The risk step reduces its QI table the same way, and reads
the weights of its records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.entities import Reduction
    from airflow_privacy.core.model import Bucketization, ReleaseSpec


def check_entity_column(entity: Any, roles: dict[str, Sequence[str]]) -> str:
    """The entity column's name, checked: a name, and none of the release's other roles
    (``roles``: an :func:`opt` name -> the columns it names)."""
    from airflow_privacy.gate.steps.values import column

    name = column(entity, "entity")
    for role, cols in roles.items():
        if name in cols:
            raise InputError(
                f"{opt('entity')} {name!r} is also a {opt(role)} column: the entity column "
                "names the person a row belongs to, it is neither published nor measured"
            )
    return name


def facts(column: str, r: Reduction) -> dict[str, Any]:
    """What the envelope records of the reduction: the column's name and the numbers."""
    return {
        "entity_column": column,
        "rows": r.rows,
        "entities": r.entities,
        "composite_entities": r.composite,
    }


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, str) and not v.strip())


def read_entity_counts(
    ref: ReleaseRef,
    spec: ReleaseSpec,
    entity: str,
    ctx: GateContext,
    *,
    reads_values: bool,
    fmt: Any = None,
    delimiter: str | None = None,
    missing_as: str | None = None,
) -> tuple[Bucketization, dict[str, Any]]:
    """Per-group sensitive counts of the entities of a release (one record per entity,
    grouped by the multiset of its rows' group tuples), with the envelope's facts.

    ``reads_values``: some criterion reads the sensitive values, so every entity must hold
    one value; otherwise an entity with several is counted under its smallest (the sizes
    are all that is read)."""
    from airflow_privacy.core.entities import reduce_entities
    from airflow_privacy.core.model import Bucketization

    rows = _entity_rows(ref, spec, entity, ctx, fmt, delimiter, missing_as)
    width = len(spec.group_columns)
    r = reduce_entities(rows, width, 1)
    if reads_values and r.disagreeing[0]:
        n = r.disagreeing[0]
        raise InputError(
            f"{opt('entity')}: {n:,} of {r.entities:,} entities hold more than one value of "
            f"the sensitive column {spec.sensitive!r}; the criteria that read the sensitive "
            "values need one value per entity (docs/risk.md, Entities and weights)"
        )
    source = "the release" if not ref.is_table else f"table {ref.sql_table!r}"
    counted = [(*key, low[0], 1) for key, low in zip(r.keys, r.lowest, strict=True)]
    b = Bucketization.from_counts(
        counted, spec.group_columns, spec.sensitive, missing_as=missing_as, source=source
    )
    ctx.progress(f"{r.rows:,} rows of {r.entities:,} entities (entity column {entity!r})")
    return b, facts(entity, r)


def _entity_rows(
    ref: ReleaseRef,
    spec: ReleaseSpec,
    entity: str,
    ctx: GateContext,
    fmt: Any,
    delimiter: str | None,
    missing_as: str | None,
) -> list[tuple[Any, ...]]:
    """``(entity, g.., s, count)`` rows; blank sensitive values as None (refused or
    replaced later, as without entities); a missing group value is refused as without
    entities."""
    cols = [entity, *spec.group_columns, spec.sensitive]
    if ref.is_table:
        rows = _sql_entity_counts(ref, cols, ctx)
    else:
        from airflow_privacy.core.cells import check_missing_as, describe_columns
        from airflow_privacy.core.model import check_columns
        from airflow_privacy.gate.tables import column_names, read_table

        check_missing_as(missing_as)
        present = column_names(ref, ctx, fmt=fmt, delimiter=delimiter)
        check_columns(present, spec)
        if entity not in present:
            raise InputError(
                f"{opt('entity')} column {entity!r} does not exist "
                f"(columns: {describe_columns(present)})"
            )
        ctx.progress(f"reading {ref.describe()}")
        table = read_table(
            ref, cols, ctx, fmt=fmt, delimiter=delimiter, sensitive=spec.sensitive,
            missing_as=missing_as,
        )  # fmt: skip
        if table.num_rows == 0:
            raise InputError("the release is empty (0 records)")
        for col in spec.group_columns:
            nulls = table.column(col).null_count
            if nulls:
                raise InputError(
                    f"column {col!r} has {nulls} missing value(s); fill or drop them first"
                )
        rows = grouped_rows(table, cols)
    out = []
    for row in rows:
        if any(v is None for v in row[1:-2]):
            raise InputError("a group column has missing values; fill or drop them first")
        s = row[-2]
        out.append((*row[:-2], None if _blank(s) else str(s), row[-1]))
    return out


def grouped_rows(table: pa.Table, cols: Sequence[str]) -> list[tuple[Any, ...]]:
    """``(cols.., count)`` for every distinct combination of ``cols`` in ``table``."""
    grouped = table.group_by(list(cols)).aggregate([([], "count_all")])
    data = [grouped.column(c).to_pylist() for c in cols]
    counts = grouped.column("count_all").to_pylist()
    return [(*(d[i] for d in data), int(counts[i])) for i in range(len(counts))]


def _sql_entity_counts(
    ref: ReleaseRef, cols: Sequence[str], ctx: GateContext
) -> list[tuple[Any, ...]]:
    """``SELECT entity, g.., s, COUNT(*) ... GROUP BY entity, g.., s``: quoted identifiers,
    a float zero's sign kept (the multisets are built here)."""
    from airflow_privacy.gate.tables import sql_group_counts

    ctx.progress(f"counting {ref.describe()} by entity in the database (GROUP BY)")
    rows = sql_group_counts(ref, list(cols), ctx)
    if not rows:
        raise InputError("the release is empty (0 records)")
    return rows


# ------------------------------------------------------------------------------ risk
def read_weights(table: pa.Table, weight: str) -> dict[Any, Fraction]:
    """Every distinct weight of ``table`` as an exact fraction; a weight that is missing,
    not a number, not finite or below 1 is bad input naming :func:`opt` ``weight`` and the
    first such data row (never its value)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from airflow_privacy.core.entities import bad_weight_message, parse_weight

    col = table.column(weight)
    parsed: dict[Any, Fraction] = {}
    bad: list[Any] = []
    for v in pc.unique(col).to_pylist():
        if v is None:
            continue
        w = parse_weight(v)
        if w is None:
            bad.append(v)
        else:
            parsed[v] = w
    mask = pc.is_null(col)
    if bad:
        values = pa.array(bad, type=col.type)
        mask = pc.or_(mask, pc.is_in(col, value_set=values))
    n_bad = int(pc.sum(mask).as_py() or 0)
    if n_bad:
        first = int(pc.index(mask, True).as_py())
        raise InputError(bad_weight_message(first + 1, n_bad))
    return parsed


def reduce_risk_table(
    table: pa.Table, qis: Sequence[str], entity: str | None, weight: str | None
) -> tuple[pa.Table, dict[tuple[str | None, ...], Fraction] | None, dict[str, Any] | None]:
    """The table the risk engines read (one record per entity with ``entity``; the release
    itself without), the exact sum of the weights of every class (``weight`` given; a class
    is keyed by its QI values as text) and the envelope's entity facts."""
    import pyarrow as pa

    weights = read_weights(table, weight) if weight is not None else None
    sums: dict[tuple[str | None, ...], Fraction] | None = None
    if entity is None:
        if weights is None or weight is None:
            return table, None, None
        sums = {}
        for *values, w, count in grouped_rows(table, [*qis, weight]):
            key = tuple(None if v is None else str(v) for v in values)
            sums[key] = sums.get(key, Fraction(0)) + weights[w] * count
        return table.select(list(qis)), sums, None
    from airflow_privacy.core.entities import reduce_entities

    cols = [entity, *qis] + ([weight] if weight is not None else [])
    rows: Iterable[tuple[Any, ...]] = grouped_rows(table, cols)
    if weights is not None:
        rows = [(*r[:-2], weights[r[-2]], r[-1]) for r in rows]
    # SUDA2 reads each QI column alone: labels unambiguous per column
    r = reduce_entities(rows, len(qis), 1 if weight is not None else 0, by_column=True)
    if weight is not None and r.disagreeing[0]:
        raise InputError(
            f"{opt('weight')}: {r.disagreeing[0]:,} of {r.entities:,} entities "
            f"({opt('entity')}) have rows with different weights; an entity's weight is "
            "the person's, one per entity"
        )
    reduced = pa.table(
        {q: pa.array([k[j] for k in r.keys], pa.string()) for j, q in enumerate(qis)}
    )
    if weight is not None:
        sums = {}
        for key, attrs in zip(r.keys, r.attrs, strict=True):
            sums[key] = sums.get(key, Fraction(0)) + attrs[0]
    return reduced, sums, facts(entity, r)


def reads_values(name: str) -> bool:
    """Whether criterion ``name`` reads the sensitive values (its class does not declare
    ``sizes_only``): then every entity must hold one value."""
    from airflow_privacy.core.criteria.registry import lookup

    return not lookup(name).sizes_only
