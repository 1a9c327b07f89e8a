"""The check step: a release against any criteria at once (one count of the data).

Criteria are validated before the data is read; the release is counted once (for a SQL
table, in the database) and every criterion is evaluated on the counts. With an attempt the
envelope is recorded as the attempt's check ``name``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.attempts import begin_check, record, skipped
from airflow_privacy.gate.benign import benign_details, benign_values
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.criteria import parse_criteria
from airflow_privacy.gate.envelope import Envelope, ReleaseFacts
from airflow_privacy.gate.refs import ReleaseRef

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.base import Criterion
    from airflow_privacy.core.model import Bucketization


@dataclass(frozen=True)
class CheckRequest:
    release: ReleaseRef
    sensitive: str
    group_columns: Sequence[str]
    criteria: Any
    name: str = "check"
    entity: str | None = None
    """A column naming the entity (person) each row belongs to: one record per entity,
    grouped by the multiset of its rows' group tuples (DLP's ``entity_id``)."""
    attempt: str | None = None
    ledger: str | None = None
    missing_as: str | None = None
    fmt: Any = None
    delimiter: str | None = None
    benign: Sequence[str] = ()
    population: ReleaseRef | None = None
    """A population table (k-map against it, delta-presence): counted on the group columns."""
    backend: str = "auto"
    """The counting backend of a file (:mod:`airflow_privacy.core.backends`): ``auto``,
    ``arrow``, ``duckdb`` or ``spark`` (a Parquet file or folder; a ``spark:`` table is
    always counted by Spark); recorded in ``details.backend``."""


def columns(value: Any, what: str) -> list[str]:
    """A list of column names (refuses a bare string, which would be read letter by letter)."""
    if isinstance(value, str):
        raise InputError(
            f"{opt(what)} must be a list of column names, got the text {value[:60]!r} "
            f"(write [{value[:60]!r}])"
        )
    if not isinstance(value, list | tuple) or not value:
        raise InputError(f"{opt(what)} must be a non-empty list of column names")
    out = []
    for v in value:
        if not isinstance(v, str) or not v.strip():
            raise InputError(f"{opt(what)}: {v!r} is not a column name")
        if v.startswith("--"):
            raise InputError(f"{opt(what)}: {v!r} looks like a command-line option, not a column")
        out.append(v)
    return out


def column(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{opt(what)} must be a column name, got {value!r}")
    if value.startswith("--"):
        raise InputError(f"{opt(what)}: {value!r} looks like a command-line option, not a column")
    return value


def run_check(req: CheckRequest, ctx: GateContext) -> Envelope:
    """Check ``req.release`` against every criterion of ``req.criteria`` (module doc)."""
    from airflow_privacy.core.backends import check_backend
    from airflow_privacy.core.criteria.registry import create
    from airflow_privacy.core.model import ReleaseSpec
    from airflow_privacy.gate.population import check_population_ref, require_population
    from airflow_privacy.gate.tables import read_counts_by

    backend = check_backend(req.backend)
    criteria = parse_criteria(req.criteria, "criterion")
    benign = benign_values(req.benign)
    check_population_ref(req.population, req.release)
    require_population([create(n, p) for n, p in criteria], req.population)
    spec = ReleaseSpec(
        sensitive=column(req.sensitive, "sensitive"),
        group_columns=tuple(columns(req.group_columns, "group")),
    )
    entity = None
    if req.entity is not None:
        from airflow_privacy.gate.entities import check_entity_column

        entity = check_entity_column(
            req.entity, {"group": spec.group_columns, "sensitive": [spec.sensitive]}
        )
        if req.population is not None:
            raise InputError(
                f"{opt('population')} does not apply with {opt('entity')}: a population "
                "table counts records, not entities"
            )
        if backend != "auto":
            raise InputError(
                f"{opt('backend')} {backend} does not apply with {opt('entity')}: entities "
                "are counted in process (leave it at auto)"
            )
    if req.release.is_spark and req.attempt is not None:
        raise InputError(
            f"{req.release.describe()} is a Spark table: the ledger gates files and SQL tables "
            f"(no {opt('attempt')}); publish the release through a SQL warehouse or a file"
        )
    start = begin_check(req.attempt, req.ledger, ctx, reads=req.release)
    attempt = start.info
    if start.skip:
        return skipped("check", req.name, attempt)
    entity_facts: dict[str, Any] = {}
    counted_by = "arrow"
    if entity is not None:
        from airflow_privacy.gate.entities import read_entity_counts, reads_values

        b, entity_facts = read_entity_counts(
            req.release, spec, entity, ctx, fmt=req.fmt, delimiter=req.delimiter,
            missing_as=req.missing_as,
            reads_values=any(reads_values(name) for name, _ in criteria),
        )  # fmt: skip
    else:
        b, counted_by = read_counts_by(
            req.release, spec, ctx, backend=backend, fmt=req.fmt, delimiter=req.delimiter,
            missing_as=req.missing_as,
        )  # fmt: skip
    b = b.with_benign(benign)
    population_facts: dict[str, Any] = {}
    if req.population is not None:
        from airflow_privacy.gate import population

        classes = population.read_population_classes(
            req.population, spec.group_columns, ctx, fmt=req.fmt, delimiter=req.delimiter
        )
        b = population.with_population(b, classes)
        population_facts = population.population_facts(req.population, b)
    ctx.progress(
        f"{b.n_records:,} records in {b.n_groups:,} groups, {len(b.values)} sensitive values"
    )
    results = []
    for name, params in criteria:
        ctx.progress(f"checking {name}")
        criterion = create(name, params)
        result = criterion.evaluate(b).to_dict()
        if result["safe"] is not True:
            _which_attribute(b, criterion, result)
        results.append(result)
    failed = [r for r in results if r["safe"] is not True]
    safe = not failed
    summary = "; ".join(
        f"{r['criterion']} ({_params(r['parameters'])}): {'SAFE' if r['safe'] else 'UNSAFE'}"
        for r in results
    )
    env = Envelope(
        step="check",
        name=req.name,
        outcome="passed" if safe else "failed",
        safe=safe,
        summary=summary,
        reasons=[f"{r['criterion']}: {r['reason']}" for r in failed],
        release=ReleaseFacts(
            ref=req.release.describe(),
            records=b.n_records,
            groups=b.n_groups,
            sensitive=spec.sensitive,
            group_columns=list(spec.group_columns),
        ),
        results=results,
        details={
            "sensitive_values": len(b.values),
            "backend": counted_by,
            **entity_facts,
            **benign_details(benign, b.values),
            **population_facts,
        },
    )
    return record(env, start, req.ledger, ctx)


def _params(params: dict[str, Any]) -> str:
    """The parameters in the summary line, as their declarations shorten them."""
    from airflow_privacy.core.criteria.registry import parameter_named

    out = []
    for k, v in params.items():
        if v is None:
            continue
        declared = parameter_named(k)
        if declared is not None:
            out.append(declared.short(v))
        elif isinstance(v, float):
            out.append(f"{k}={v:g}")
        else:
            out.append(f"{k}={v}")
    return ", ".join(out)


def _which_attribute(b: Bucketization, criterion: Criterion, result: dict[str, Any]) -> None:
    """A failing result's witness group, merged over each group column in turn: which
    column drives the failure (``witness.attributes``, and the sentence in
    ``details.which_attribute``; :mod:`airflow_privacy.core.criteria.drivers`)."""
    from airflow_privacy.core.criteria.drivers import which_attribute

    found = which_attribute(b, criterion, result)
    if found is not None:
        result["witness"]["attributes"], result["details"]["which_attribute"] = found
