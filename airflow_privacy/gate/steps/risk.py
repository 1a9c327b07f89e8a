"""The risk step, declared once (:class:`RiskStep`; ``airflow-privacy risk`` and
``RiskAnalysisOperator`` are derived from it): the re-identification risk of a release, in
the vocabulary of ARX, sdcMicro and mu-Argus, every number with one plain sentence that says
what it means (docs/risk.md).

The release is read once, only on its quasi-identifier columns (through
:mod:`airflow_privacy.gate.tables`), and turned into its equivalence-class sizes ``f_j``
(the records sharing one combination of QI values); the row-level data goes only to SUDA2,
which needs the records themselves. The engines of :mod:`airflow_privacy.core.risk` then
give:

* El Emam's prosecutor, journalist and marketer risks (El Emam & Dankar 2008; ARX's
  ``RiskModelSampleSummary``) at the threshold ``tau`` (default 0.2, the re-identification
  probability ARX's risk view passes to its summary: ``ModelRisk.getRiskThresholdHighestRisk``);
* population uniqueness (Zayatz 1991, Pitman/Hoshino 2001, SNB/Chen & McNulty 1998) and
  Dankar et al.'s (2012) choice among them, when the sampling fraction is known;
* SUDA2 special uniques, DIS-SUDA and the per-attribute contributions (Elliot et al. 2002;
  Manning, Haglin & Keane 2008; sdcMicro's ``suda2``).

The population of the journalist and marketer models is, in this order: a population table
counted on the same QI columns (``F_j`` its class sizes; it must contain the release); or an
estimate from the sampling fraction ``pi`` (given, or ``n / N`` from a population size ``N``):
``F_j = floor(f_j / pi)``, rounded down so the estimate never understates a risk (an
estimate, as sdcMicro's sampling weights give one); or, without either, the release itself,
as ARX does without a population table (journalist = prosecutor).

The step is an analysis without a threshold on its result: outcome ``estimated``, ``safe``
None. Recorded under an attempt, a check without a verdict blocks the gate like any other
check that did not pass (docs/design.md, invariant 1); the risk step never makes an attempt
publishable. Per-record SUDA scores never go into the envelope (records are only counted);
``records`` names a file that receives them by row number.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.steps import shared
from airflow_privacy.gate.steps.base import Known, MeasuringStep
from airflow_privacy.gate.steps.fields import Field
from airflow_privacy.gate.steps.values import columns

if TYPE_CHECKING:
    from fractions import Fraction

    import pyarrow as pa

    from airflow_privacy.core.risk.suda import SudaResult
    from airflow_privacy.gate.attempts import CheckStart
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.refs import ReleaseRef

#: ``tau``: ARX's default re-identification threshold of its risk view (``ModelRisk``'s
#: ``riskThresholdHighestRisk = 0.2``, which ``ViewRisksOverview`` passes to
#: ``getSampleBasedRiskSummary``). ARX's 0.05 defaults are limits on the *measured* share of
#: records at risk and success rate, shown beside them, not ``tau``.
DEFAULT_THRESHOLD = 0.2
#: sdcMicro's default DIS sampling fraction (used when the sampling fraction is unknown)
DEFAULT_DIS_FRACTION = 0.01
MAX_QIS = 64
#: the largest population (or sum of weights) the models' floating-point arithmetic holds
MAX_FLOAT = sys.float_info.max


@dataclass(frozen=True)
class RiskRequest:
    """What the risk step measures (module doc). At most one of ``population``,
    ``population_size`` and ``sampling_fraction``. ``suda_max_size``: the largest special
    unique SUDA2 looks for (default: every QI, as sdcMicro and ARX). ``dis_fraction``: the
    sampling fraction of DIS-SUDA (default: the sampling fraction when known, else sdcMicro's
    0.01). ``records``: a table file that receives the per-record SUDA scores."""

    release: ReleaseRef
    qis: Sequence[str]
    population: ReleaseRef | None = None
    population_size: int | None = None
    sampling_fraction: float | None = None
    threshold: float = DEFAULT_THRESHOLD
    suda: bool = True
    suda_max_size: int | None = None
    dis_fraction: float | None = None
    records: ReleaseRef | None = None
    name: str = "risk"
    attempt: str | None = None
    ledger: str | None = None
    fmt: Any = None
    delimiter: str | None = None
    entity: str | None = None
    """A column naming the entity (person) of each row: the engines count one record per
    entity, classed by the multiset of its rows' QI tuples (DLP's ``entity_id``)."""
    weight: str | None = None
    """A column of sample weights: a record stands for ``w`` people of the population."""


@dataclass
class _Classes:
    """The release's equivalence classes on its QIs (and what reading them gave)."""

    keys: list[tuple[str | None, ...]]
    sizes: list[int]
    table: pa.Table | None
    weight_sums: dict[tuple[str | None, ...], Fraction] | None
    entity_facts: dict[str, Any] | None


@dataclass
class _Population:
    """The population of the journalist and marketer models and the sampling fraction."""

    sizes: list[int] | None
    pi: Fraction | None
    source: str
    total_weight: Fraction | None


class RiskStep(MeasuringStep):
    """``risk``: the re-identification risk of a release, every number in one sentence
    (module doc). An analysis without a verdict."""

    name = "risk"
    summary = (
        "re-identification risk: prosecutor, journalist, marketer, population uniqueness, SUDA"
    )
    description = (
        "Measure the re-identification risk of a release on its quasi-identifiers, as ARX "
        "and sdcMicro do: prosecutor, journalist and marketer risk, population uniqueness "
        "(Zayatz, Pitman, SNB, Dankar's rule) and SUDA2 special uniques with the attributes "
        "that drive them; each number with one sentence saying what it means. An analysis "
        "without a verdict: exit 0, or 2 on bad input."
    )
    operator = "airflow_privacy.providers.airflow.operators.risk.RiskAnalysisOperator"
    fields = (
        shared.release(
            "the release: a CSV (.csv, .csv.gz) or Parquet file, an object-store URI "
            "(s3://...) or a SQL table (its classes counted in the database)"
        ),
        Field(
            "qi",
            "columns",
            "a quasi-identifier column (at most 64, each once)",
            cli="--qi",
            airflow="qis",
            required=True,
            metavar="COL",
            dest="qis",
            type_hint="list[str]",
            templated=False,
        ),
        Field(
            "population",
            "ref",
            "the population table (file, URI or SQL table), counted on "
            "the same quasi-identifiers; it must contain the release",
            metavar="REF",
            exclusive="population",
            type_hint="str | None",
        ),
        Field(
            "population_size",
            "whole",
            "the population's size: sampling fraction = records / N",
            cli="--population-size",
            metavar="N",
            low=1,
            high=2**63 - 1,
            exclusive="population",
            type_hint="int | str | None",
        ),
        Field(
            "sampling_fraction",
            "number",
            "the share of the population in the release",
            cli="--sampling-fraction",
            metavar="F",
            low=0,
            high=1,
            open_low=True,
            exclusive="population",
            type_hint="float | str | None",
        ),
        Field(
            "threshold",
            "number",
            "a record is at risk when its re-identification "
            "probability is above this (tau; ARX's default)",
            metavar="T",
            low=0,
            high=1,
            open_low=True,
            default=DEFAULT_THRESHOLD,
            type_hint="float | str",
        ),
        Field(
            "suda",
            "flag",
            "run SUDA2 (special uniques, DIS-SUDA, attribute contributions)",
            default=True,
            negatable=True,
            templated=False,
            type_hint="bool",
        ),
        Field(
            "suda_max_size",
            "whole",
            "the largest special unique SUDA2 looks for (default: every quasi-identifier)",
            cli="--suda-max-size",
            metavar="N",
            low=1,
            high=64,
            type_hint="int | str | None",
        ),
        Field(
            "dis_fraction",
            "number",
            "DIS-SUDA's sampling fraction (default: the sampling "
            "fraction when known, else 0.01, sdcMicro's)",
            cli="--dis-fraction",
            metavar="F",
            low=0,
            high=1,
            open_low=True,
            type_hint="float | str | None",
        ),
        Field(
            "records",
            "text",
            "a file (.csv or .parquet) that receives each record's SUDA and "
            "DIS-SUDA scores by row number (records without a special unique are left out)",
            metavar="FILE",
            type_hint="str | None",
        ),
        Field(
            "entity",
            "column",
            "a column naming the person each row belongs to: count "
            "people, not rows (classes of the multiset of their rows' QI values, DLP's "
            "entity_id)",
            cli="--entity",
            airflow="entity_column",
            metavar="COL",
            type_hint="str | None",
        ),
        Field(
            "weight",
            "column",
            "a column of sample weights (a record stands for w >= 1 "
            "people): population class sizes are the sums of the weights; sampling fraction "
            "records / sum",
            cli="--weight",
            airflow="weight_column",
            metavar="COL",
            type_hint="str | None",
        ),
    )
    cli_groups = ("input", "attempt", "report", "output")

    # ------------------------------------------------------------------ the rules
    def rules(self, known: Known) -> None:
        qis: list[str] = []
        if known.has("qi"):
            qis = columns(known["qi"], "qi")
            if len(set(qis)) != len(qis):
                twice = sorted({q for q in qis if qis.count(q) > 1})
                raise InputError(f"{opt('qi')} names column {twice[0]!r} twice")
            if len(qis) > MAX_QIS:
                raise InputError(f"{opt('qi')} names {len(qis)} columns; at most {MAX_QIS}")
        # the exclusive population fields and the declared ranges: Step.check, before this
        k = known.get("suda_max_size")
        if k is not None and (
            isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= max(len(qis), 1)
        ):
            raise InputError(
                f"{opt('suda_max_size')} must be a whole number from 1 to {len(qis)} (the "
                f"number of {opt('qi')} columns), got {k!r}"
            )
        if known.has("suda") and not isinstance(known["suda"], bool):
            raise InputError(f"{opt('suda')} must be true or false, got {known['suda']!r}")
        population, release = known.get("population"), known.get("release")
        if population is not None and population == release:
            raise InputError(
                f"{opt('population')} is the release itself: give the population table"
            )
        entity = known.get("entity")
        if entity is not None:
            from airflow_privacy.gate.entities import check_entity_column

            check_entity_column(entity, {"qi": qis})
            if known.get("records") is not None:
                raise InputError(
                    f"{opt('records')} lists records by row number; with {opt('entity')} "
                    "SUDA scores entities, which have no row number: leave one of them out"
                )
        if known.get("weight") is not None:
            from airflow_privacy.gate.steps.values import column

            w = column(known["weight"], "weight")
            if w in qis or w == entity:
                raise InputError(
                    f"{opt('weight')} {w!r} is also a {opt('qi')} or {opt('entity')} column"
                )
            if population is not None:
                raise InputError(
                    f"give {opt('weight')} or {opt('population')}, not both: the weights "
                    "estimate the population the table counts"
                )
        if known.get("records") is not None and known.get("suda") is False:
            raise InputError(f"{opt('records')} holds SUDA scores: it needs {opt('suda')}")

    def values_of(self, req: RiskRequest) -> Known:
        return Known(
            {
                "release": req.release,
                "qi": req.qis,
                "population": req.population,
                "population_size": req.population_size,
                "sampling_fraction": req.sampling_fraction,
                "threshold": req.threshold,
                "suda": req.suda,
                "suda_max_size": req.suda_max_size,
                "dis_fraction": req.dis_fraction,
                "records": req.records,
                "entity": req.entity,
                "weight": req.weight,
                "attempt": req.attempt,
            }
        )

    def request(self, values: Mapping[str, Any]) -> RiskRequest:
        from airflow_privacy.gate.refs import ReleaseRef

        records = values.get("records")
        if records is not None:  # a file this step writes: never a table on a connection
            records = ReleaseRef(path=records)
        return RiskRequest(
            release=values["release"],
            qis=values["qi"],
            population=values.get("population"),
            population_size=values.get("population_size"),
            sampling_fraction=values.get("sampling_fraction"),
            threshold=(
                DEFAULT_THRESHOLD if values.get("threshold") is None else values["threshold"]
            ),
            suda=True if values.get("suda") is None else values["suda"],
            suda_max_size=values.get("suda_max_size"),
            dis_fraction=values.get("dis_fraction"),
            records=records,
            name=values.get("name") or "risk",
            attempt=values.get("attempt"),
            ledger=values.get("ledger"),
            fmt=values.get("input_format"),
            delimiter=values.get("delimiter"),
            entity=values.get("entity"),
            weight=values.get("weight"),
        )

    # ------------------------------------------------------------------ the work
    def before_begin(self, req: RiskRequest, ctx: GateContext) -> None:
        from airflow_privacy.gate.tables import check_not_input, check_writable

        if req.records is not None:
            check_writable(
                req.records, "the per-record SUDA scores", option="records", kind="table"
            )
            check_not_input(
                req.records, "the per-record SUDA scores", [req.release, req.population],
                option="records",
            )  # fmt: skip

    def measure(
        self, req: RiskRequest, ctx: GateContext, start: CheckStart, prepared: Any
    ) -> Envelope:
        from airflow_privacy.core.risk import population_uniqueness, reidentification_risk
        from airflow_privacy.gate import risk_measures as words

        qis = columns(req.qis, "qi")
        classes = _read_classes(req, qis, ctx)
        sizes = classes.sizes
        n, j = sum(sizes), len(sizes)
        ctx.progress(f"{n:,} records in {j:,} groups on {len(qis)} quasi-identifier(s)")
        pop = _population(req, qis, classes, ctx)
        tau = float(req.threshold)
        risk = reidentification_risk(sizes, pop.sizes, tau)
        measures = words.reidentification_measures(risk, sizes, pop.sizes or sizes, pop.source, tau)
        uniqueness: dict[str, Any] | None = None
        if pop.pi is not None:
            ctx.progress("estimating population uniqueness (Zayatz, Pitman, SNB)")
            pu = population_uniqueness(sizes, float(pop.pi))
            uniqueness = pu.to_dict()
            measures += words.uniqueness_measures(pu)
        else:
            measures.append(
                words.measure(
                    "population_uniqueness", "Population uniqueness", None,
                    "Population uniqueness was not estimated: the models need the sampling "
                    "fraction (give a population table, a population size or the sampling "
                    "fraction).",
                )
            )  # fmt: skip
        suda, outputs = _suda(req, qis, classes, pop, measures, ctx)
        classes.table = None
        return _envelope(req, qis, classes, pop, risk, uniqueness, suda, measures, outputs)


RISK = RiskStep()


def run_risk(req: RiskRequest, ctx: GateContext) -> Envelope:
    """Measure the re-identification risk of ``req.release`` (module doc)."""
    return RISK.run(req, ctx)


def _read_classes(req: RiskRequest, qis: list[str], ctx: GateContext) -> _Classes:
    """The release's classes on ``qis``, counted where it lives: DuckDB for a big file, a
    ``GROUP BY`` in the database for a SQL table (only the class sizes leave it), else the
    QI columns read in process (the rows SUDA2 needs, the entity and weight columns)."""
    from airflow_privacy.core.cells import describe_columns
    from airflow_privacy.gate.risk_classes import class_counts, class_key, file_classes
    from airflow_privacy.gate.tables import column_names, read_table

    present = column_names(req.release, ctx, fmt=req.fmt, delimiter=req.delimiter)
    extra = [(c, r) for c, r in ((req.entity, "entity"), (req.weight, "weight")) if c is not None]
    for q, role in [*((q, "qi") for q in qis), *extra]:
        if q not in present:
            raise InputError(
                f"{opt(role)} column {q!r} does not exist in {req.release.describe()} "
                f"(columns: {describe_columns(present)})"
            )
    weight_sums = None
    entity_facts = None
    table: pa.Table | None = None
    counts: dict[tuple[str | None, ...], int] | None = None
    if not req.release.is_table and not req.release.is_uri and not extra and req.records is None:
        counts = file_classes(req.release, qis, ctx, req.fmt, req.delimiter)
    if counts is None and req.release.is_table and not extra and req.records is None:
        from airflow_privacy.gate.tables import sql_group_counts

        ctx.progress(f"counting the classes of {req.release.describe()} in the database")
        counts = {}
        for row in sql_group_counts(req.release, list(qis), ctx):
            k = class_key(row[:-1])
            counts[k] = counts.get(k, 0) + int(row[-1])
    if counts is None:
        ctx.progress(f"reading {req.release.describe()}")
        table = read_table(
            req.release, [*qis, *(c for c, _ in extra)], ctx, fmt=req.fmt,
            delimiter=req.delimiter,
        )  # fmt: skip
        if extra:
            from airflow_privacy.gate.entities import reduce_risk_table

            table, weight_sums, entity_facts = reduce_risk_table(table, qis, req.entity, req.weight)
        counts = class_counts(table, qis)
    if not counts:
        raise InputError(f"{req.release.describe()} has no records: there is no risk to measure")
    keys = list(counts)
    return _Classes(keys, [counts[k] for k in keys], table, weight_sums, entity_facts)


def _population(
    req: RiskRequest, qis: list[str], classes: _Classes, ctx: GateContext
) -> _Population:
    """The population of the journalist and marketer models (module doc): a population
    table, a population size, a sampling fraction or the sample weights, in that order."""
    from fractions import Fraction

    from airflow_privacy.core.thresholds import exact_limit
    from airflow_privacy.gate.risk_classes import estimated_population_sizes

    keys, sizes = classes.keys, classes.sizes
    n, j = sum(sizes), len(sizes)
    pop_sizes: list[int] | None = None
    pi: Fraction | None = None
    source = "the release itself"
    if req.population is not None:
        from airflow_privacy.gate.population import read_population_classes

        pclasses = read_population_classes(
            req.population, qis, ctx, fmt=req.fmt, delimiter=req.delimiter
        )
        big_n = sum(pclasses.values())
        if big_n < n:
            raise InputError(
                f"{opt('population')} has {big_n:,} records, fewer than the release's {n:,}: "
                "the population must contain the release"
            )
        pop_sizes = [pclasses.get(k, 0) for k in keys]
        short = sum(1 for f, big_f in zip(sizes, pop_sizes, strict=True) if big_f < f)
        if short:
            raise InputError(
                f"{opt('population')} does not contain the release: {short:,} of its "
                f"{j:,} groups have more records in the release than in the population "
                f"(counted on the same {opt('qi')} columns)"
            )
        pi = Fraction(n, big_n)
        source = f"counted in the population table of {big_n:,} records"
    elif req.population_size is not None:
        if req.population_size < n:
            raise InputError(
                f"{opt('population_size')} {req.population_size:,} is smaller than the "
                f"release ({n:,} records): the population must contain the release"
            )
        pi = Fraction(n, req.population_size)
        source = (
            f"estimated as release size / {float(pi):.4g}, the sampling fraction of "
            f"{n:,} records in a population of {req.population_size:,}, rounded down"
        )
    elif req.sampling_fraction is not None:
        pi = exact_limit(float(req.sampling_fraction))
        source = f"estimated as release size / sampling fraction {float(pi):g}, rounded down"
    total_weight: Fraction | None = None
    if classes.weight_sums is not None:
        from airflow_privacy.core.entities import population_sizes

        weight_sums = classes.weight_sums
        total_weight = sum(weight_sums.values(), Fraction(0))
        pop_sizes = population_sizes([weight_sums[k] for k in keys], sizes)
        if pi is None:
            pi = Fraction(n) / total_weight
        source = (
            f"estimated from the sample weights of column {req.weight!r}, the sum of the "
            "weights of the group's records, rounded down"
        )
    if pi is not None:
        _check_population_size(req, n, pi, total_weight)
    if pi is not None and pop_sizes is None:
        pop_sizes = estimated_population_sizes(sizes, pi)
    return _Population(pop_sizes, pi, source, total_weight)


def _check_population_size(
    req: RiskRequest, n: int, pi: Fraction, total_weight: Fraction | None
) -> None:
    """The population ``N = n / pi`` the models compute with is a float: a sampling
    fraction that rounds to 0 or a population (or a sum of weights) beyond the float range
    is bad input naming the option it came from (not the sampling fraction the user may
    never have given)."""
    from fractions import Fraction

    f = float(pi)
    heavy = total_weight is not None and total_weight > Fraction(MAX_FLOAT)
    if f > 0.0 and math.isfinite(n / f) and not heavy:
        return
    source = (
        "weight" if heavy
        else "population" if req.population is not None
        else "population_size" if req.population_size is not None
        else "sampling_fraction" if req.sampling_fraction is not None
        else "weight"
    )  # fmt: skip
    raise InputError(
        f"{opt(source)} makes a population beyond the range the risk models compute with "
        f"(sampling fraction {f:g} of {n:,} records; at most {MAX_FLOAT:.3g} people)"
    )


def _suda(
    req: RiskRequest,
    qis: list[str],
    classes: _Classes,
    pop: _Population,
    measures: list[dict[str, Any]],
    ctx: GateContext,
) -> tuple[dict[str, Any] | None, dict[str, str]]:
    """SUDA2 on the rows when the per-record scores go to ``req.records``, else on the class
    sizes; its measures appended to ``measures``."""
    from airflow_privacy.gate import risk_measures as words

    outputs: dict[str, str] = {}
    if not req.suda:
        return None, outputs
    from airflow_privacy.core.risk.suda import suda2

    dis_f = req.dis_fraction
    if dis_f is None:
        dis_f = float(pop.pi) if pop.pi is not None else DEFAULT_DIS_FRACTION
    k_max = req.suda_max_size or len(qis)
    ctx.progress(f"SUDA2: special uniques of up to {k_max} attribute(s)")
    if classes.table is not None and req.records is not None:
        # the per-record scores name rows: SUDA2 on the rows
        s = suda2(classes.table, qis, k_max=k_max, dis_fraction=dis_f)
    else:
        # the measures need only the classes (a record's MSUs are its class's): SUDA2 on
        # the class sizes, without coding every row again
        from airflow_privacy.core.risk.suda import suda2_counts

        s = suda2_counts(classes.keys, classes.sizes, qis, k_max=k_max, dis_fraction=dis_f)
    measures += words.suda_measures(s, qis)
    suda = {
        "k_max": s.k_max,
        "weighting": s.weighting,
        "dis_fraction": s.dis_fraction,
        "dis": s.dis,
        "sample_uniques": s.sample_uniques,
        "pair_records": s.pair_records,
        "records_with_msu": len(s.records),
        "msu_count_by_size": {str(k): v for k, v in sorted(s.msu_count_by_size.items())},
        "attribute_contributions": dict(s.attribute_contributions),
        "score_max": max((r.score_value() for r in s.records), default=0.0),
        "dis_score_table": words.dis_table(s),
    }
    if req.records is not None:
        _write_records(req.records, s, qis, ctx)
        outputs["records"] = req.records.describe()
    return suda, outputs


def _envelope(
    req: RiskRequest,
    qis: list[str],
    classes: _Classes,
    pop: _Population,
    risk: Any,
    uniqueness: dict[str, Any] | None,
    suda: dict[str, Any] | None,
    measures: list[dict[str, Any]],
    outputs: dict[str, str],
) -> Envelope:
    """The risk step's envelope: no verdict (``safe`` None, outcome ``estimated``)."""
    from airflow_privacy.gate import risk_measures as words
    from airflow_privacy.gate.envelope import Envelope, ReleaseFacts

    sizes = classes.sizes
    n, j = sum(sizes), len(sizes)
    tau = float(req.threshold)
    entity_facts = classes.entity_facts
    pr = risk.prosecutor
    summary = (
        f"risk estimate (no verdict) of {n:,} records in {j:,} groups: highest prosecutor risk "
        f"{words.prob(pr.highest_risk)}, {words.pct(pr.records_at_risk or 0.0)} of records at "
        f"risk above {tau:g}, marketer risk {words.prob(risk.marketer.success_rate)}"
        + (
            f", population uniqueness {words.pct(uniqueness['dankar_fraction'])}"
            if uniqueness is not None
            else ""
        )
        + (f", {suda['records_with_msu']:,} records with a special unique" if suda else "")
        + (
            f" (each record one entity of column {entity_facts['entity_column']!r}: "
            f"{entity_facts['rows']:,} rows)"
            if entity_facts
            else ""
        )
    )
    details: dict[str, Any] = {
        "qis": list(qis),
        "records": n,
        "groups": j,
        "threshold": tau,
        "population": {
            "kind": (
                "weights" if req.weight is not None and req.population_size is None
                and req.sampling_fraction is None
                else "table" if req.population is not None
                else "size" if req.population_size is not None
                else "sampling-fraction" if req.sampling_fraction is not None
                else "none"
            ),
            "ref": req.population.describe() if req.population is not None else None,
            "size": req.population_size,
            "sampling_fraction": float(pop.pi) if pop.pi is not None else None,
            "estimated": pop.sizes is not None and req.population is None,
            "source": pop.source,
            "weight_column": req.weight,
            "weight_sum": float(pop.total_weight) if pop.total_weight is not None else None,
        },
        "entities": entity_facts,
        "reidentification": risk.to_dict(),
        "population_uniqueness": uniqueness,
        "suda": suda,
        "class_sizes": words.histogram(sizes, pop.sizes, tau),
        "measures": measures,
    }  # fmt: skip
    result = {
        "criterion": "risk",
        "safe": None,
        "parameters": {"threshold": tau},
        "value": pr.highest_risk,
        "reason": summary,
        "witness": None,
    }
    return Envelope(
        step="risk",
        name=req.name,
        outcome="estimated",
        safe=None,
        summary=summary,
        release=ReleaseFacts(
            ref=req.release.describe(), records=n, groups=j, group_columns=list(qis)
        ),
        results=[result],
        details=details,
        outputs=outputs,
    )


def _write_records(ref: ReleaseRef, s: SudaResult, qis: Sequence[str], ctx: GateContext) -> None:
    """Per-record SUDA scores by row number (1 = the first record), only the records with a
    special unique; attribute names, never values."""
    import pyarrow as pa

    from airflow_privacy.gate.tables import write_outputs

    rows = list(s.records)
    data: dict[str, Any] = {
        "row": pa.array([r.row + 1 for r in rows], pa.int64()),
        "suda_score": pa.array([r.score_value() for r in rows], pa.float64()),
        "dis_suda_score": pa.array([r.dis_score for r in rows], pa.float64()),
        "special_uniques": pa.array([len(r.msus) for r in rows], pa.int64()),
        "smallest_special_unique": pa.array(
            [min(len(m) for m in r.msus) for r in rows], pa.int64()
        ),
        "special_unique_attributes": pa.array(
            ["; ".join("+".join(m) for m in r.msus) for r in rows], pa.string()
        ),
    }
    for q in qis:
        data[f"contribution:{q}"] = pa.array([r.contribution(q) for r in rows], pa.float64())
    write_outputs({ref: pa.table(data)}, ctx)
