"""The check step: a release against any criteria at once (one count of the data).

Declared once (:class:`CheckStep`): ``airflow-privacy check`` and ``CheckSafetyOperator``
are derived from it. Criteria are validated before the data is read; the release is counted
once (for a SQL table, in the database; a Spark table by Spark) and every criterion is
evaluated on the counts (the criteria's own sections: Martin et al. 2007, Chen et al. 2007,
Machanavajjhala et al. 2007, Li et al. 2007, ...). With an attempt the envelope is recorded
as the attempt's check ``name`` (:class:`~airflow_privacy.gate.steps.base.MeasuringStep`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.steps import shared
from airflow_privacy.gate.steps.base import Known, MeasuringStep
from airflow_privacy.gate.steps.fields import Field
from airflow_privacy.gate.steps.values import column, columns
from airflow_privacy.vocabulary import BACKENDS

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.base import Criterion
    from airflow_privacy.core.model import Bucketization
    from airflow_privacy.gate.attempts import CheckStart
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.refs import ReleaseRef


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
    hierarchies: Mapping[str, str] = field(default_factory=dict)
    """For the way forward only: ``{group column: ARX hierarchy file}``; a failed criterion's
    advice then includes the smallest coarser recoding that passes
    (:mod:`airflow_privacy.core.recoding_advice`)."""
    backend: str = "auto"
    """The counting backend of a file (:mod:`airflow_privacy.core.backends`): ``auto``,
    ``arrow``, ``duckdb`` or ``spark`` (a Parquet file or folder; a ``spark:`` table is
    always counted by Spark); recorded in ``details.backend``."""


class CheckStep(MeasuringStep):
    """``check``: is this release safe against every criterion? (module doc)"""

    name = "check"
    summary = "check a release against criteria (exit 0 safe, 1 unsafe)"
    description = (
        "Check a release against one or more criteria, counted once. Exit 0 = safe, 1 = "
        "unsafe, 2 = bad input. RELEASE is a file (.csv[.gz], .parquet), an object-store URI "
        "(s3://...), table:SCHEMA.NAME with --conn URL (counted in the database), or "
        "spark:DB.NAME (a table of the Spark catalog, counted by Spark)."
    )
    operator = "airflow_privacy.providers.airflow.operators.check.CheckSafetyOperator"
    fields = (
        Field(
            "release",
            "ref",
            "the release: a CSV (.csv, .csv.gz) or Parquet file, an "
            "object-store URI (s3://...), a SQL table or a table of the Spark catalog",
            cli="RELEASE",
            airflow="release",
            required=True,
            type_hint="str | None",
            variants=("sql_table", "spark_table"),
            cli_note="table:SCHEMA.NAME with --conn URL (counted in the database), "
            "spark:DB.NAME (counted by Spark)",
            airflow_note="exactly one of release, sql_table (a table on the SQL connection "
            "conn_id, counted in the database) and spark_table (a table of the Spark "
            "catalog, counted by Spark; no attempt)",
        ),
        shared.sensitive(),
        Field(
            "group",
            "columns",
            "the columns whose distinct combinations are the QI-groups "
            "(the generalized QIs, or the bucket id of a bucketized release)",
            cli="--group",
            airflow="group_columns",
            required=True,
            metavar="COL",
            dest="groups",
            type_hint="list[str]",
        ),
        Field(
            "criterion",
            "criteria",
            "a criterion: NAME, or NAME:PARAM=VALUE,... e.g. "
            "ck-safety:c=0.7,k=3 (all must pass; names and parameters in docs/criteria.md)",
            cli="--criterion",
            airflow="criteria",
            required=True,
            metavar="NAME[:PARAM=VALUE,...]",
            dest="criteria",
            type_hint="list[dict | str]",
            cli_note="a single NAME may take its parameters as flags (--k 5)",
            airflow_note="each {'name': 'ck-safety', 'c': 0.7, 'k': 3} or "
            "'ck-safety:c=0.7,k=3'; templated numbers become numbers",
        ),
        shared.benign(),
        Field(
            "population",
            "ref",
            "the population table (file, URI or SQL table), counted "
            "on the same group columns: k-map without sampling_fraction/population_size "
            "and delta-presence are decided against it",
            metavar="REF",
            type_hint="str | None",
        ),
        shared.missing_as(),
        Field(
            "backend",
            "choice",
            "where a file is counted: arrow (in process), duckdb (an "
            "embedded GROUP BY, out of core), spark (a Parquet file or folder, by Spark) or "
            "auto (DuckDB from 4 x 10^7 Parquet cells, 4 MiB of .csv.gz, 64 MiB of CSV); a "
            "SQL table is always counted in its database, a Spark table by Spark; only "
            "per-group counts come back (docs/backends.md)",
            default="auto",
            choices=BACKENDS,
            type_hint="str",
        ),
        Field(
            "hierarchy",
            "files",
            "for the way forward only: the ARX hierarchy of a group column; when a "
            "criterion fails, the advice includes the fewest further generalization steps "
            "that pass, re-checked on the merged groups",
            cli="--hierarchy",
            airflow="hierarchies",
            metavar="COL=FILE",
            type_hint="Mapping[str, str] | None",
        ),
        Field(
            "entity",
            "column",
            "a column naming the person each row belongs to: each "
            "person counts once, grouped by the multiset of their rows' groups (DLP's "
            "entity_id); not a group or the sensitive column",
            cli="--entity",
            airflow="entity_column",
            metavar="COL",
            type_hint="str | None",
        ),
    )
    cli_groups = ("criterion-flags", "input", "attempt", "report", "output")

    # ------------------------------------------------------------------ the rules
    def rules(self, known: Known) -> None:
        release = known.get("release")
        backend = known.get("backend")
        if known.has("criterion", "population") and known["population"] is None:
            from airflow_privacy.core.criteria.registry import create
            from airflow_privacy.gate.criteria import parse_criteria
            from airflow_privacy.gate.population import require_population

            parsed = parse_criteria(known["criterion"], "criterion")
            require_population([create(n, p) for n, p in parsed], None)
        if known.has("population", "release") and known["population"] is not None:
            from airflow_privacy.gate.population import check_population_ref

            check_population_ref(known["population"], release)
        entity = known.get("entity")
        if entity is not None:
            roles = {"group": known.get("group") or (), "sensitive": [known.get("sensitive")]}
            from airflow_privacy.gate.entities import check_entity_column

            check_entity_column(entity, {k: [c for c in v if c] for k, v in roles.items()})
            if known.get("population") is not None:
                raise InputError(
                    f"{opt('population')} does not apply with {opt('entity')}: a population "
                    "table counts records, not entities"
                )
        if entity is not None and backend not in (None, "auto"):
            raise InputError(
                f"{opt('backend')} {backend} does not apply with {opt('entity')}: entities "
                "are counted in process (leave it at auto)"
            )
        if release is not None and backend is not None:
            from airflow_privacy.gate.tables import backend_for

            backend_for(release, backend)
        if release is not None and release.is_spark and known.get("attempt") is not None:
            raise InputError(
                f"{release.describe()} is a Spark table: the ledger gates files and SQL tables "
                f"(no {opt('attempt')}); publish the release through a SQL warehouse or a file"
            )

    def values_of(self, req: CheckRequest) -> Known:
        return Known(
            {
                "release": req.release,
                "sensitive": req.sensitive,
                "group": req.group_columns,
                "criterion": req.criteria,
                "benign": req.benign,
                "population": req.population,
                "missing_as": req.missing_as,
                "backend": req.backend,
                "entity": req.entity,
                "attempt": req.attempt,
            }
        )

    def request(self, values: Mapping[str, Any]) -> CheckRequest:
        return CheckRequest(
            release=values["release"],
            sensitive=values["sensitive"],
            group_columns=list(values["group"]),
            criteria=values["criterion"],
            entity=values.get("entity"),
            name=values.get("name") or "check",
            attempt=values.get("attempt"),
            ledger=values.get("ledger"),
            missing_as=values.get("missing_as"),
            fmt=values.get("input_format"),
            delimiter=values.get("delimiter"),
            benign=tuple(values.get("benign") or ()),
            population=values.get("population"),
            backend="auto" if values.get("backend") is None else values["backend"],
            hierarchies=dict(values.get("hierarchy") or {}),
        )

    # ------------------------------------------------------------------ the work
    def before_begin(self, req: CheckRequest, ctx: GateContext) -> None:
        from airflow_privacy.gate.benign import benign_values
        from airflow_privacy.gate.criteria import parse_criteria

        parse_criteria(req.criteria, "criterion")
        benign_values(req.benign)
        column(req.sensitive, "sensitive")
        columns(req.group_columns, "group")
        for name in req.hierarchies:
            if name not in req.group_columns:
                raise InputError(
                    f"{opt('hierarchy')} {name!r} names no group column (group columns: "
                    f"{', '.join(req.group_columns)})"
                )

    def measure(
        self, req: CheckRequest, ctx: GateContext, start: CheckStart, prepared: Any
    ) -> Envelope:
        from airflow_privacy.core.backends import check_backend
        from airflow_privacy.core.criteria.registry import create
        from airflow_privacy.core.model import ReleaseSpec
        from airflow_privacy.gate.benign import benign_details, benign_values
        from airflow_privacy.gate.criteria import parse_criteria
        from airflow_privacy.gate.envelope import Envelope, ReleaseFacts
        from airflow_privacy.gate.tables import read_counts_by

        backend = check_backend(req.backend)
        criteria = parse_criteria(req.criteria, "criterion")
        benign = benign_values(req.benign)
        spec = ReleaseSpec(
            sensitive=column(req.sensitive, "sensitive"),
            group_columns=tuple(columns(req.group_columns, "group")),
        )
        entity_facts: dict[str, Any] = {}
        counted_by = "arrow"
        if req.entity is not None:
            from airflow_privacy.gate.entities import read_entity_counts, reads_values

            b, entity_facts = read_entity_counts(
                req.release, spec, req.entity, ctx, fmt=req.fmt, delimiter=req.delimiter,
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
        advice: list[dict[str, Any]] = []
        hierarchies = _hierarchies(req.hierarchies)
        for name, params in criteria:
            ctx.progress(f"checking {name}")
            criterion = create(name, params)
            result = criterion.evaluate(b).to_dict()
            if result["safe"] is not True:
                _which_attribute(b, criterion, result)
                advice += _advice(b, criterion, name, params, ctx, result.get("value"),
                                  hierarchies)  # fmt: skip
            results.append(result)
        failed = [r for r in results if r["safe"] is not True]
        safe = not failed
        summary = "; ".join(
            f"{r['criterion']} ({_params(r['parameters'])}): {'SAFE' if r['safe'] else 'UNSAFE'}"
            for r in results
        )
        return Envelope(
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
            advice=advice,
            details={
                "sensitive_values": len(b.values),
                "backend": counted_by,
                **entity_facts,
                **benign_details(benign, b.values),
                **population_facts,
            },
        )


CHECK = CheckStep()


def run_check(req: CheckRequest, ctx: GateContext) -> Envelope:
    """Check ``req.release`` against every criterion of ``req.criteria`` (module doc)."""
    return CHECK.run(req, ctx)


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


def _hierarchies(files: Mapping[str, str]) -> dict[str, Any]:
    """The hierarchies given for the way forward, read (a bad file is bad input)."""
    from airflow_privacy.core.hierarchy import Hierarchy

    return {name: Hierarchy.from_arx_csv(path, name) for name, path in files.items()}


def _advice(
    b: Bucketization,
    criterion: Criterion,
    name: str,
    params: dict[str, Any],
    ctx: GateContext,
    measured: Any = None,
    hierarchies: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The way forward from a failed criterion, each change re-checked
    (:mod:`airflow_privacy.core.advice`): the groups to suppress, the parameter that would
    pass, and with hierarchies the smallest coarser recoding that passes
    (:mod:`airflow_privacy.core.recoding_advice`)."""
    from airflow_privacy.core.advice import parameter_advice, suppression_advice

    ctx.progress(f"computing the way forward for {name}")
    level = float(measured) if isinstance(measured, int | float) else None
    found = [suppression_advice(b, criterion), parameter_advice(b, name, dict(params), level)]
    if hierarchies:
        from airflow_privacy.core.recoding_advice import recoding_advice

        found.append(recoding_advice(b, criterion, hierarchies))
    out = [a.to_dict() for a in found if a is not None]
    for a in out:
        ctx.progress(f"advice: {a['text']}")
    return out


def _which_attribute(b: Bucketization, criterion: Criterion, result: dict[str, Any]) -> None:
    """A failing result's witness group, merged over each group column in turn: which
    column drives the failure (``witness.attributes``, and the sentence in
    ``details.which_attribute``; :mod:`airflow_privacy.core.criteria.drivers`)."""
    from airflow_privacy.core.criteria.drivers import which_attribute

    found = which_attribute(b, criterion, result)
    if found is not None:
        result["witness"]["attributes"], result["details"]["which_attribute"] = found
