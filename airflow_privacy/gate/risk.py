"""The risk step: re-identification risk of a release, in the vocabulary of ARX, sdcMicro and
mu-Argus, every number with one plain sentence that says what it means (docs/risk.md).

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
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from airflow_privacy.core.thresholds import exact_limit, smallest_size_at_most
from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.attempts import begin_check, record, skipped
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.envelope import Envelope, ReleaseFacts
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.steps.values import columns

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.risk import PopulationUniqueness, ReidentificationRisk
    from airflow_privacy.core.risk.suda import SudaResult

#: ``tau``: ARX's default re-identification threshold of its risk view (``ModelRisk``'s
#: ``riskThresholdHighestRisk = 0.2``, which ``ViewRisksOverview`` passes to
#: ``getSampleBasedRiskSummary``). ARX's 0.05 defaults are limits on the *measured* share of
#: records at risk and success rate, shown beside them, not ``tau``.
DEFAULT_THRESHOLD = 0.2
#: sdcMicro's default DIS sampling fraction (used when the sampling fraction is unknown)
DEFAULT_DIS_FRACTION = 0.01
#: sdcMicro's DIS-SUDA summary thresholds (``print.suda2``: records with a score above each)
DIS_THRESHOLDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
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


def _fraction(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{opt(what)} must be a number in (0, 1], got {value!r}")
    v = float(value)
    if not (math.isfinite(v) and 0.0 < v <= 1.0):
        raise InputError(f"{opt(what)} must be in (0, 1], got {value!r}")
    return v


def _check(req: RiskRequest) -> list[str]:
    qis = columns(req.qis, "qi")
    if len(set(qis)) != len(qis):
        twice = sorted({q for q in qis if qis.count(q) > 1})
        raise InputError(f"{opt('qi')} names column {twice[0]!r} twice")
    if len(qis) > MAX_QIS:
        raise InputError(f"{opt('qi')} names {len(qis)} columns; at most {MAX_QIS}")
    given = [
        name
        for name, v in (
            ("population", req.population),
            ("population_size", req.population_size),
            ("sampling_fraction", req.sampling_fraction),
        )
        if v is not None
    ]
    if len(given) > 1:
        raise InputError(
            f"give at most one of {opt('population')}, {opt('population_size')} and "
            f"{opt('sampling_fraction')} (got {', '.join(opt(g) for g in given)})"
        )
    if req.population_size is not None and (
        isinstance(req.population_size, bool)
        or not isinstance(req.population_size, int)
        or req.population_size < 1
    ):
        raise InputError(
            f"{opt('population_size')} must be a whole number of people, got "
            f"{req.population_size!r}"
        )
    if req.sampling_fraction is not None:
        _fraction(req.sampling_fraction, "sampling_fraction")
    _fraction(req.threshold, "threshold")
    if req.dis_fraction is not None:
        _fraction(req.dis_fraction, "dis_fraction")
    if req.suda_max_size is not None:
        k = req.suda_max_size
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= len(qis):
            raise InputError(
                f"{opt('suda_max_size')} must be a whole number from 1 to {len(qis)} (the "
                f"number of {opt('qi')} columns), got {k!r}"
            )
    if isinstance(req.suda, bool) is False:
        raise InputError(f"{opt('suda')} must be true or false, got {req.suda!r}")
    if req.population is not None and req.population == req.release:
        raise InputError(f"{opt('population')} is the release itself: give the population table")
    if req.entity is not None:
        from airflow_privacy.gate.entities import check_entity_column

        check_entity_column(req.entity, {"qi": qis})
        if req.records is not None:
            raise InputError(
                f"{opt('records')} lists records by row number; with {opt('entity')} SUDA "
                "scores entities, which have no row number: leave one of them out"
            )
    if req.weight is not None:
        from airflow_privacy.gate.steps.values import column

        w = column(req.weight, "weight")
        if w in qis or w == req.entity:
            raise InputError(
                f"{opt('weight')} {w!r} is also a {opt('qi')} or {opt('entity')} column"
            )
        if req.population is not None:
            raise InputError(
                f"give {opt('weight')} or {opt('population')}, not both: the weights estimate "
                "the population the table counts"
            )
    return qis


def _check_population_size(
    req: RiskRequest, n: int, pi: Fraction, total_weight: Fraction | None
) -> None:
    """The population ``N = n / pi`` the models compute with is a float: a sampling
    fraction that rounds to 0 or a population (or a sum of weights) beyond the float range
    is bad input naming the option it came from (not the sampling fraction the user may
    never have given)."""
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


# ------------------------------------------------------------------------------ counting
def class_key(values: Sequence[Any]) -> tuple[str | None, ...]:
    """A class's QI combination, compared as text (a CSV reads text, Parquet keeps types)."""
    return tuple(None if v is None else str(v) for v in values)


def class_counts(table: pa.Table, qis: Sequence[str]) -> dict[tuple[str | None, ...], int]:
    """The size of every equivalence class (records sharing one QI combination)."""
    if table.num_rows == 0:
        return {}
    grouped = table.group_by(list(qis)).aggregate([([], "count_all")])
    keys = [grouped.column(q).to_pylist() for q in qis]
    counts = grouped.column("count_all").to_pylist()
    out: dict[tuple[str | None, ...], int] = {}
    for i, c in enumerate(counts):
        k = class_key([col[i] for col in keys])
        out[k] = out.get(k, 0) + int(c)
    return out


def file_classes(
    ref: ReleaseRef, columns: Sequence[str], ctx: GateContext, fmt: Any, delimiter: str | None
) -> dict[tuple[str | None, ...], int] | None:
    """The class sizes of a file on ``columns`` counted by DuckDB when ``auto`` picks it for
    the file (a big one: only the classes come back), else ``None`` (read in process)."""
    from airflow_privacy.core.backends import choose

    path = ref.local
    if choose("auto", path, fmt, list(columns)) != "duckdb":
        return None
    from airflow_privacy.core.backends.duck import DuckDBBackend

    out: dict[tuple[str | None, ...], int] = {}
    for values, n in DuckDBBackend().class_counts(
        path, columns, fmt=fmt, delimiter=delimiter, progress=ctx.progress
    ):
        k = class_key(values)
        out[k] = out.get(k, 0) + n
    return out


def estimated_population_sizes(sizes: Sequence[int], pi: Fraction) -> list[int]:
    """``F_j = floor(f_j / pi)`` (module doc): rounded down, so the estimated risk ``1/F_j``
    is never below the unrounded estimate's."""
    return [max(f, math.floor(Fraction(f) / pi)) for f in sizes]


# ------------------------------------------------------------------------------ wording
def _p(x: float) -> str:
    """A probability as people read it: 4 significant digits."""
    return f"{x:.4g}"


def _pct(x: float | Fraction) -> str:
    return f"{100 * float(x):.4g}%"


def _largest_risky_size(tau: float) -> int:
    """The largest class size ``s`` with ``1/s > tau`` (0 when none): the strict comparison
    of ARX, on the decimal ``tau`` is written as."""
    return smallest_size_at_most(tau) - 1


def _measure(key: str, label: str, value: Any, explanation: str) -> dict[str, Any]:
    return {"measure": key, "label": label, "value": value, "explanation": explanation}


def _at_risk_sentence(model: str, k: int, n: int, tau: float, population: str) -> str:
    s = _largest_risky_size(tau)
    if s == 0:
        return f"No record is at {model} risk: no probability can exceed the threshold {tau:g}."
    if k == 0:
        where = "group of the release" if model == "prosecutor" else "matching population group"
        return (
            f"No record is at {model} risk: no {where} holds {s:,} or fewer "
            f"{'records' if model == 'prosecutor' else 'people'}, the sizes whose "
            f"re-identification probability 1/size is above the threshold {tau:g}."
        )
    share = f"{_pct(Fraction(k, n))} of the records ({k:,} of {n:,}) are at {model} risk"
    if model == "prosecutor":
        size = f"at most {s:,} {'record' if s == 1 else 'records'}"
        return (
            f"{share}: they sit in groups of {size}, where an attacker who knows they are in "
            f"the release picks each of them out with probability above the threshold {tau:g}."
        )
    size = f"at most {s:,} {'person' if s == 1 else 'people'}"
    return (
        f"{share}: the population group matching theirs ({population}) holds {size}, so an "
        "attacker who knows only that they are in the population picks each of them out with "
        f"probability above the threshold {tau:g}."
    )


def _reidentification_measures(
    r: ReidentificationRisk, sizes: Sequence[int], pop: Sequence[int], source: str, tau: float
) -> list[dict[str, Any]]:
    pr, jr, mr = r.prosecutor, r.journalist, r.marketer
    n, j = pr.n_records, pr.n_classes
    m = min(sizes)
    big_m = min(pop)
    out = [
        _measure(
            "prosecutor_highest_risk", "Highest prosecutor risk", pr.highest_risk,
            f"Highest prosecutor risk {_p(pr.highest_risk)}: the smallest group has {m:,} "
            f"record{'s' if m != 1 else ''}, so an attacker who knows a person is in the "
            "release and knows their quasi-identifiers picks the right record with "
            f"probability 1/{m:,}" + (" (certainty)." if m == 1 else "."),
        ),
        _measure(
            "prosecutor_records_at_risk", "Prosecutor records at risk", pr.records_at_risk,
            _at_risk_sentence("prosecutor", int(pr.n_records_at_risk or 0), n, tau, source),
        ),
        _measure(
            "prosecutor_success_rate", "Prosecutor success rate (average risk)",
            pr.average_risk,
            f"Average prosecutor risk {_p(pr.average_risk)} (ARX's success rate): an attacker "
            "who tries every record of the release, knowing each person is in it, is right "
            f"{j:,} times out of {n:,} (once per group) on average.",
        ),
    ]  # fmt: skip
    if source == "the release itself":
        out.append(
            _measure(
                "journalist_highest_risk", "Highest journalist risk", jr.highest_risk,
                f"Highest journalist risk {_p(jr.highest_risk)}: no population was given, so "
                "the release is its own population (as in ARX) and the journalist risks equal "
                "the prosecutor risks; give a population table, size or sampling fraction "
                "for the risk of an attacker who does not know who is in the release.",
            )
        )  # fmt: skip
    else:
        est = source.startswith("estimated")
        out.append(
            _measure(
                "journalist_highest_risk", "Highest journalist risk", jr.highest_risk,
                f"Highest journalist risk {_p(jr.highest_risk)}: the smallest population "
                f"group matching a group of the release has {'an estimated ' if est else ''}"
                f"{big_m:,} {'person' if big_m == 1 else 'people'} ({source}), so an "
                "attacker who knows only that a person is in the population picks the right "
                f"record with probability 1/{big_m:,}.",
            )
        )  # fmt: skip
    out += [
        _measure(
            "journalist_records_at_risk", "Journalist records at risk", jr.records_at_risk,
            _at_risk_sentence("journalist", int(jr.n_records_at_risk or 0), n, tau, source),
        ),
        _measure(
            "journalist_success_rate", "Journalist success rate (average risk)",
            jr.average_risk,
            f"Average journalist risk {_p(jr.average_risk)} (ARX's success rate, the larger "
            "of groups per population person and the mean of release size / population "
            "size over the records): the share of records an attacker who does not know who "
            "is in the release re-identifies on average.",
        ),
        _measure(
            "marketer_success_rate", "Marketer risk", mr.success_rate,
            f"Marketer risk {_p(mr.success_rate)}: an attacker who links every record of the "
            "release to the population at once expects to re-identify "
            f"{mr.success_rate * n:,.1f} of the {n:,} records ({_pct(mr.success_rate)}), the "
            "sum over groups of release size / population size.",
        ),
    ]  # fmt: skip
    return out


_MODEL_NAMES = {"zayatz": "Zayatz", "pitman": "Pitman", "snb": "SNB", "none": "none"}


def _uniqueness_measures(pu: PopulationUniqueness) -> list[dict[str, Any]]:
    n, pi, big_n = pu.n_records, pu.sampling_fraction, pu.population_size
    out = [
        _measure(
            "sample_uniques", "Sample uniques", pu.n_sample_uniques,
            f"{pu.n_sample_uniques:,} of the {n:,} records ({_pct(pu.sample_uniqueness)}) are "
            "the only record of their group in the release (unique on all the "
            "quasi-identifiers together).",
        )
    ]  # fmt: skip
    what = {
        "zayatz": "the sample uniques times the estimated chance (hypergeometric draws) that "
        "a record unique in the release is unique in the population, scaled up by the "
        "sampling fraction to the whole population",
        "pitman": "a Pitman partition fitted to the group sizes by maximum likelihood",
        "snb": "population group sizes modelled as 1 + negative binomial (Chen & McNulty)",
    }
    for model in ("zayatz", "pitman", "snb"):
        u = getattr(pu, f"{model}_uniques")
        f = getattr(pu, f"{model}_fraction")
        name = _MODEL_NAMES[model]
        if u is None:
            text = (
                f"{name}'s model gives no estimate for this release (its fit found no valid "
                "solution, or the model does not apply at this sampling fraction)."
            )
        else:
            text = (
                f"{name}'s model estimates {u:,.1f} population-unique people "
                f"({_pct(f)} of a population of {big_n:,.0f}), from {what[model]}."
            )
        out.append(_measure(f"{model}_uniques", f"Population uniques ({name})", u, text))
    if pu.n_sample_uniques == 0:
        why = "the release has no sample unique, so every model estimates 0"
    elif pi <= 0.1:
        why = f"the sampling fraction {pi:.4g} is at most 0.1, where the rule prefers Pitman"
    else:
        why = (
            f"the sampling fraction {pi:.4g} is above 0.1, where the rule takes the smaller of "
            "Zayatz and SNB"
        )
    chosen = _MODEL_NAMES[pu.dankar_model]
    out.append(
        _measure(
            "population_uniqueness", "Population uniqueness (Dankar's choice)",
            pu.dankar_fraction,
            f"Population uniqueness {_pct(pu.dankar_fraction)} ({chosen}, chosen by Dankar et "
            f"al.'s rule because {why}): about {pu.dankar_uniques:,.1f} people of the "
            "population are unique on the quasi-identifiers, so anyone who knows their values "
            "finds their record.",
        )
    )  # fmt: skip
    return out


def _dis_table(s: SudaResult) -> list[dict[str, Any]]:
    scores = [r.dis_score for r in s.records]
    return [{"above": t, "records": sum(1 for x in scores if x > t)} for t in DIS_THRESHOLDS]


def _suda_measures(s: SudaResult, qis: Sequence[str]) -> list[dict[str, Any]]:
    n = s.n_records
    k = len(s.records)
    out = [
        _measure(
            "suda_records_with_msu", "Records with a special unique", k,
            f"{k:,} of the {n:,} records ({_pct(Fraction(k, n))}) have a special unique: a "
            f"combination of at most {s.k_max} quasi-identifier value"
            f"{'s' if s.k_max != 1 else ''} that no other record shares, none of whose parts "
            "is unique on its own (SUDA2's minimal sample uniques).",
        )
    ]  # fmt: skip
    if k:
        top = max(float(r.score) for r in s.records)
        out.append(
            _measure(
                "suda_max_score", "Highest SUDA score", top,
                f"Highest SUDA score {top:g}: a record's score adds (number of QIs - size)! for "
                "each of its special uniques, so small special uniques (few values single a "
                "person out) weigh most.",
            )
        )  # fmt: skip
    above = sum(1 for r in s.records if r.dis_score > 0.1)
    out.append(
        _measure(
            "dis", "DIS probability", s.dis,
            f"DIS {_p(s.dis)}: the estimated probability that a record unique in the release "
            f"is unique in the population too (sampling fraction {s.dis_fraction:g}; "
            f"{s.sample_uniques:,} uniques, {s.pair_records:,} records in pairs).",
        )
    )  # fmt: skip
    out.append(
        _measure(
            "dis_suda_above_0_1", "Records with DIS-SUDA above 0.1", above,
            f"{above:,} record{'s' if above != 1 else ''} have a DIS-SUDA score above 0.1: "
            "DIS-SUDA turns the SUDA scores into estimated probabilities of re-identification, "
            "so these are the records most worth protecting.",
        )
    )  # fmt: skip
    contrib = s.attribute_contributions
    ranked = sorted(qis, key=lambda a: (-contrib.get(a, 0.0), list(qis).index(a)))
    if k and ranked:
        lead = ranked[0]
        out.append(
            _measure(
                "suda_driving_attribute", "Attribute driving the risk", lead,
                f"{lead} drives the risk most: special uniques containing it carry "
                f"{contrib[lead]:.1f}% of the total SUDA score (the shares add up to more than "
                "100% because one special unique can hold several attributes); generalizing or "
                "suppressing it removes the most risk.",
            )
        )  # fmt: skip
    for a in ranked:
        out.append(
            _measure(
                f"suda_contribution:{a}", f"SUDA contribution of {a}", contrib.get(a, 0.0),
                f"{contrib.get(a, 0.0):.1f}% of the total SUDA score comes from special uniques "
                f"that contain {a}.",
            )
        )  # fmt: skip
    return out


# ------------------------------------------------------------------------------ the step
def run_risk(req: RiskRequest, ctx: GateContext) -> Envelope:
    """Measure the re-identification risk of ``req.release`` (module doc)."""
    from airflow_privacy.core.io import describe_columns
    from airflow_privacy.core.risk import population_uniqueness, reidentification_risk
    from airflow_privacy.gate.tables import (
        check_not_input,
        check_writable,
        column_names,
        read_table,
    )

    qis = _check(req)
    if req.records is not None:
        check_writable(req.records, "the per-record SUDA scores", option="records", kind="table")
        check_not_input(
            req.records, "the per-record SUDA scores", [req.release, req.population],
            option="records",
        )  # fmt: skip
        if not req.suda:
            raise InputError(f"{opt('records')} holds SUDA scores: it needs {opt('suda')}")
    start = begin_check(req.attempt, req.ledger, ctx, reads=req.release)
    if start.skip:
        return skipped("risk", req.name, start.info)
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
    classes: dict[tuple[str | None, ...], int]
    duck = None
    if not req.release.is_table and not req.release.is_uri and not extra and req.records is None:
        duck = file_classes(req.release, qis, ctx, req.fmt, req.delimiter)
    if duck is not None:
        classes = duck
    elif req.release.is_table and not extra and req.records is None:
        # only the class sizes leave the database (a GROUP BY there)
        from airflow_privacy.gate.tables import sql_group_counts

        ctx.progress(f"counting the classes of {req.release.describe()} in the database")
        classes = {}
        for row in sql_group_counts(req.release, list(qis), ctx):
            k = class_key(row[:-1])
            classes[k] = classes.get(k, 0) + int(row[-1])
    else:
        ctx.progress(f"reading {req.release.describe()}")
        table = read_table(
            req.release, [*qis, *(c for c, _ in extra)], ctx, fmt=req.fmt,
            delimiter=req.delimiter,
        )  # fmt: skip
        if extra:
            from airflow_privacy.gate.entities import reduce_risk_table

            table, weight_sums, entity_facts = reduce_risk_table(table, qis, req.entity, req.weight)
        classes = class_counts(table, qis)
    if not classes:
        raise InputError(f"{req.release.describe()} has no records: there is no risk to measure")
    keys = list(classes)
    sizes = [classes[k] for k in keys]
    n, j = sum(sizes), len(sizes)
    ctx.progress(f"{n:,} records in {j:,} groups on {len(qis)} quasi-identifier(s)")

    # the population of the journalist and marketer models, and the sampling fraction
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
    if weight_sums is not None:
        from airflow_privacy.core.entities import population_sizes

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

    tau = float(req.threshold)
    risk = reidentification_risk(sizes, pop_sizes, tau)
    measures = _reidentification_measures(risk, sizes, pop_sizes or sizes, source, tau)

    uniqueness: dict[str, Any] | None = None
    if pi is not None:
        ctx.progress("estimating population uniqueness (Zayatz, Pitman, SNB)")
        pu = population_uniqueness(sizes, float(pi))
        uniqueness = pu.to_dict()
        measures += _uniqueness_measures(pu)
    else:
        measures.append(
            _measure(
                "population_uniqueness", "Population uniqueness", None,
                "Population uniqueness was not estimated: the models need the sampling "
                "fraction (give a population table, a population size or the sampling "
                "fraction).",
            )
        )  # fmt: skip

    suda: dict[str, Any] | None = None
    outputs: dict[str, str] = {}
    if req.suda:
        from airflow_privacy.core.risk.suda import suda2

        dis_f = req.dis_fraction
        if dis_f is None:
            dis_f = float(pi) if pi is not None else DEFAULT_DIS_FRACTION
        k_max = req.suda_max_size or len(qis)
        ctx.progress(f"SUDA2: special uniques of up to {k_max} attribute(s)")
        if table is not None:
            s = suda2(table, qis, k_max=k_max, dis_fraction=dis_f)
        else:
            from airflow_privacy.core.risk.suda import suda2_counts

            s = suda2_counts(keys, sizes, qis, k_max=k_max, dis_fraction=dis_f)
        measures += _suda_measures(s, qis)
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
            "score_max": max((float(r.score) for r in s.records), default=0.0),
            "dis_score_table": _dis_table(s),
        }
        if req.records is not None:
            _write_records(req.records, s, qis, ctx)
            outputs["records"] = req.records.describe()
    del table

    histogram = _histogram(sizes, pop_sizes, tau)
    pr = risk.prosecutor
    summary = (
        f"risk estimate (no verdict) of {n:,} records in {j:,} groups: highest prosecutor risk "
        f"{_p(pr.highest_risk)}, {_pct(pr.records_at_risk or 0.0)} of records at risk above "
        f"{tau:g}, marketer risk {_p(risk.marketer.success_rate)}"
        + (
            f", population uniqueness {_pct(uniqueness['dankar_fraction'])}"
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
            "sampling_fraction": float(pi) if pi is not None else None,
            "estimated": pop_sizes is not None and req.population is None,
            "source": source,
            "weight_column": req.weight,
            "weight_sum": float(total_weight) if total_weight is not None else None,
        },
        "entities": entity_facts,
        "reidentification": risk.to_dict(),
        "population_uniqueness": uniqueness,
        "suda": suda,
        "class_sizes": histogram,
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
    env = Envelope(
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
    return record(env, start, req.ledger, ctx)


def _histogram(
    sizes: Sequence[int], pop_sizes: Sequence[int] | None, tau: float
) -> list[dict[str, Any]]:
    """Groups by size: how many, their records, each one's prosecutor risk ``1/size`` and
    whether it is above ``tau`` (ARX's strict comparison), for the report's plot."""

    safe_size = smallest_size_at_most(tau)  # risk 1/size above tau below this size
    by: dict[int, list[int]] = {}
    for i, f in enumerate(sizes):
        by.setdefault(f, []).append(i)
    out = []
    for f in sorted(by):
        idx = by[f]
        journalist_at_risk = (
            sum(f for i in idx if pop_sizes[i] < safe_size) if pop_sizes is not None else None
        )
        out.append(
            {
                "size": f,
                "groups": len(idx),
                "records": f * len(idx),
                "prosecutor_risk": float(Fraction(1, f)),
                "at_risk": f < safe_size,
                "journalist_records_at_risk": journalist_at_risk,
            }
        )
    return out


def _write_records(ref: ReleaseRef, s: SudaResult, qis: Sequence[str], ctx: GateContext) -> None:
    """Per-record SUDA scores by row number (1 = the first record), only the records with a
    special unique; attribute names, never values."""
    import pyarrow as pa

    from airflow_privacy.gate.tables import write_outputs

    rows = list(s.records)
    data: dict[str, Any] = {
        "row": pa.array([r.row + 1 for r in rows], pa.int64()),
        "suda_score": pa.array([float(r.score) for r in rows], pa.float64()),
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
        data[f"contribution:{q}"] = pa.array(
            [float(r.contributions.get(q, 0)) for r in rows], pa.float64()
        )
    write_outputs({ref: pa.table(data)}, ctx)
