"""The DP release step, declared once (:class:`DPReleaseStep`; ``airflow-privacy
dp-release`` and ``DPReleaseOperator`` are derived from it): noisy counts of declared
marginals, within the dataset's privacy budget, published through an attempt like any
release.

Ganta, Kasiviswanathan and Smith (KDD 2008), section 4: partition-based releases leak when
intersected (the composition audit finds it), differential privacy does not. Here:

1. the inputs are checked and the marginals' key sets read (public: declared files, never
   the data), before anything else;
2. the data is counted where it lives, each person's records bounded in the same query
   (:func:`airflow_privacy.core.backends.duck.bounded_counts`); only counts come back;
3. the mechanism's scale for the budget asked is OpenDP's (:mod:`airflow_privacy.core.dp`);
4. in one ledger transaction under the dataset's lock
   (:meth:`~airflow_privacy.ledger.api.ReleaseLedger.open_dp_attempt`): the dataset's
   budget (its policy's cap minus every spend recorded) must hold the spend, else the step
   is refused with exit 1 and nothing is drawn, recorded or written; then the noise is
   drawn, and the release, its spend, an open attempt and this step's record are stored
   together;
5. the file is written (atomically) after the commit; ``publish --attempt`` decides and
   copies it like any release.

A spend is charged when the noise is drawn: a release that is never published (or whose
file is lost) keeps its charge, because its numbers may have been seen.
"""

from __future__ import annotations

import hashlib
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.steps.base import Known, Step
from airflow_privacy.gate.steps.fields import Field
from airflow_privacy.gate.steps.values import given_or

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from airflow_privacy.core.dp.marginals import Marginal, Summed
    from airflow_privacy.core.dp.noise import NoisePlan
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.refs import ReleaseRef
    from airflow_privacy.ledger import AttemptInfo
    from airflow_privacy.ledger.budget import Budget

#: the largest number of records one person may contribute (the sensitivity per marginal)
MAX_ROWS_PER_PERSON = 1000


@dataclass(frozen=True)
class DPReleaseRequest:
    """A DP release of ``marginals`` of ``source`` as a version of ``dataset``."""

    source: ReleaseRef
    dataset: str
    marginals: Sequence[Sequence[str]]
    keys: Mapping[str, str]
    out: ReleaseRef
    sums: Sequence[Summed] = ()
    rho: float | None = None
    epsilon: float | None = None
    entity: str | None = None
    max_rows_per_person: int = 1
    delta: float = 1e-6
    version: str | None = None
    ledger: str | None = None
    name: str = "dp-release"
    fmt: Any = None
    delimiter: str | None = None


def parse_marginal(text: str) -> tuple[str, ...]:
    """``age,sex`` -> ``("age", "sex")`` (a column list, commas between)."""
    cols = tuple(c.strip() for c in str(text).split(","))
    if not cols or any(not c for c in cols):
        raise InputError(f"{opt('marginals')} {text!r}: name its columns, COL[,COL...]")
    return cols


def parse_sum(text: str) -> Summed:
    """``hours=0:99`` -> ``Summed("hours", 0, 99)`` (whole bounds, low below high)."""
    from airflow_privacy.core.dp.marginals import MAX_SUM_BOUND, Summed

    column, eq, bounds = str(text).partition("=")
    low, colon, high = bounds.partition(":")
    form = f"{opt('sums')} {text!r}: write COL=LOW:HIGH with whole numbers (hours=0:99)"
    if not eq or not colon or not column.strip():
        raise InputError(form)
    try:
        lo, hi = int(low.strip()), int(high.strip())
    except ValueError:
        raise InputError(form) from None
    if lo >= hi:
        raise InputError(f"{opt('sums')} {text!r}: the low bound must be below the high one")
    if max(abs(lo), abs(hi)) > MAX_SUM_BOUND:
        raise InputError(
            f"{opt('sums')} {text!r}: the bounds must be within +-{MAX_SUM_BOUND:,} (a sum's "
            "noise grows with them)"
        )
    return Summed(column.strip(), lo, hi)


class DPReleaseStep(Step):
    """``dp-release``: noisy marginals within the dataset's budget (module doc)."""

    name = "dp-release"
    summary = "release noisy counts of marginals with differential privacy, within a budget"
    description = (
        "Count the declared marginals of INPUT over their public key sets (each person's "
        "records bounded), add discrete Gaussian noise (--rho, zero-concentrated DP) or "
        "discrete Laplace noise (--epsilon, pure DP) from OpenDP, and record the spend under "
        "the dataset's budget (its policy's --dp-rho-cap or --dp-epsilon-cap, never reset), "
        "the release and an attempt in one transaction; then write --out. Publish it with "
        "`airflow-privacy publish --attempt UUID --to DIR OUT`. Exit 0 = released, 1 = "
        "refused (the budget would be exceeded, or the policy allows no DP release: nothing "
        "drawn, recorded or written), 2 = bad input."
    )
    operator = "airflow_privacy.providers.airflow.operators.dp_release.DPReleaseOperator"
    fields = (
        Field("source", "ref", "the data to count: a CSV or Parquet file (counted by "
              "DuckDB), a SQL table (counted in its database) or a Spark table; only counts "
              "come back", cli="INPUT", required=True, type_hint="str | None",
              variants=("sql_table",),
              cli_note="table:SCHEMA.NAME with --conn URL; spark:DB.NAME",
              airflow_note="exactly one of source and sql_table (with conn_id)"),
        Field("dataset", "label", "the dataset whose budget the release spends (its policy "
              "sets the cap)", required=True, metavar="NAME", type_hint="str"),
        Field("marginals", "values", "a marginal to release, its columns joined by commas "
              "(age or age,sex); every cell of it over the key sets is released",
              cli="--marginal", required=True, metavar="COL[,COL...]",
              type_hint="Sequence[str]"),
        Field("keys", "files", "the public values of a column: a file whose lines' first "
              "field (';'-separated, as ARX hierarchies) is a value; records with another "
              "value are not counted. Never read from the data", cli="--keys",
              airflow="key_files", required=True, metavar="COL=FILE",
              type_hint="Mapping[str, str]"),
        Field("sums", "values", "also release the sum of a numeric column in every cell, "
              "each value clamped to [LOW, HIGH] and rounded to a whole number (a null counts "
              "0); its noise grows with max(|LOW|, |HIGH|)", cli="--sum",
              metavar="COL=LOW:HIGH", type_hint="Sequence[str] | None"),
        Field("rho", "number", "the budget this release spends in zero-concentrated DP "
              "(discrete Gaussian noise)", low=0, high=100, open_low=True, metavar="RHO",
              exclusive="budget", type_hint="float | str | None"),
        Field("epsilon", "number", "instead, the budget in pure DP (discrete Laplace noise)",
              low=0, high=100, open_low=True, metavar="EPS", exclusive="budget",
              type_hint="float | str | None"),
        Field("entity", "column", "the column naming a person when a person may have several "
              "records (default: every record is a different person)", cli="--entity",
              airflow="entity_column", metavar="COL", type_hint="str | None"),
        Field("max_rows_per_person", "whole", "the most records of one person counted (the "
              "others are left out): the sensitivity of each marginal", low=1,
              high=MAX_ROWS_PER_PERSON, default=1, metavar="N", type_hint="int"),
        Field("delta", "number", "the delta of the (epsilon, delta) statement of the report",
              low=0, high=0.001, open_low=True, default=1e-6, metavar="DELTA",
              type_hint="float"),
        Field("out", "text", "the file to write the noisy counts to (.csv or .parquet), "
              "after the spend is recorded; publish this file", required=True, metavar="FILE",
              airflow="output_file", type_hint="str"),
        Field("version", "label", "the version label (default: the dataset's next number)",
              metavar="LABEL", type_hint="str | None"),
    )  # fmt: skip
    cli_groups = ("ledger", "input", "output")

    def rules(self, known: Known) -> None:
        if known.has("rho", "epsilon") and known["rho"] is None and known["epsilon"] is None:
            raise InputError(f"give the budget to spend: {opt('rho')} or {opt('epsilon')}")
        if known.has("entity", "max_rows_per_person"):
            rows = known["max_rows_per_person"]
            if known["entity"] is None and rows not in (None, 1):
                raise InputError(
                    f"{opt('max_rows_per_person')} {rows} needs {opt('entity')}: without it "
                    "every record is a different person"
                )

    def request(self, values: Mapping[str, Any]) -> DPReleaseRequest:
        from airflow_privacy.gate.refs import ReleaseRef

        return DPReleaseRequest(
            source=values["source"],
            dataset=values["dataset"],
            marginals=[parse_marginal(m) for m in values.get("marginals") or []],
            keys=dict(values.get("keys") or {}),
            out=ReleaseRef(path=values["out"]),
            sums=[parse_sum(x) for x in values.get("sums") or []],
            rho=values.get("rho"),
            epsilon=values.get("epsilon"),
            entity=values.get("entity"),
            max_rows_per_person=given_or(values.get("max_rows_per_person"), 1),
            delta=given_or(values.get("delta"), 1e-6),
            version=values.get("version"),
            ledger=values.get("ledger"),
            name=values.get("name") or "dp-release",
            fmt=values.get("input_format"),
            delimiter=values.get("delimiter"),
        )

    def run(self, req: DPReleaseRequest, ctx: GateContext) -> Envelope:
        from airflow_privacy.core.dp.marginals import Marginal, check_marginals
        from airflow_privacy.gate.tables import check_not_input, check_writable

        self.check(
            Known({"rho": req.rho, "epsilon": req.epsilon, "entity": req.entity,
                   "max_rows_per_person": req.max_rows_per_person, "delta": req.delta})
        )  # fmt: skip
        marginals = [Marginal(tuple(m)) for m in req.marginals]
        keys = _key_sets(req.keys, marginals)
        n_cells = check_marginals(marginals, keys, what=opt("marginals"))
        if req.entity is not None and any(req.entity in m.columns for m in marginals):
            raise InputError(f"{opt('entity')} {req.entity!r} is also a column of a marginal")
        _check_sums(req, marginals)
        check_writable(req.out, "the noisy counts", option="out", kind="table")
        check_not_input(req.out, "the noisy counts", [req.source], option="out")
        from airflow_privacy.core.dp.noise import plan

        mechanism = "gaussian" if req.rho is not None else "laplace"
        budget = float(req.rho if req.rho is not None else req.epsilon)  # type: ignore[arg-type]
        noise = plan(mechanism, budget, req.max_rows_per_person, len(marginals),
                     [(x.column, x.reach) for x in req.sums])  # fmt: skip
        ledger = ctx.open_ledger(req.ledger, create=False)  # missing: bad input, first
        vectors, summed = _count(req, marginals, keys, ctx)
        ctx.progress(
            f"{len(marginals)} marginal(s), {n_cells:,} cells; {mechanism} noise of scale "
            f"{noise.scale:.4g} per cell"
        )
        return _release(req, ledger, marginals, keys, (vectors, summed), noise, n_cells, ctx)


def _check_sums(req: DPReleaseRequest, marginals: Sequence[Marginal]) -> None:
    """A summed column at most once, not the entity; the names of the released sum columns
    free (no marginal column is called ``hours_sum``)."""
    from airflow_privacy.core.dp.marginals import columns_of

    seen: set[str] = set()
    taken = {*columns_of(marginals), "marginal", "count", "estimate", "noisy_count", "low95",
             "high95"}  # fmt: skip
    for x in req.sums:
        if x.column in seen:
            raise InputError(f"{opt('sums')}: column {x.column!r} is summed twice")
        seen.add(x.column)
        if x.column == req.entity:
            raise InputError(f"{opt('sums')}: column {x.column!r} is the {opt('entity')}")
        for name in _sum_columns(x):
            if name in taken:
                raise InputError(
                    f"{opt('sums')}: the released column {name!r} would have the name of "
                    "another column of the release"
                )


def _sum_columns(x: Summed) -> tuple[str, str, str, str]:
    """The released columns of a sum: its estimate, its drawn value, its interval."""
    return x.name, f"{x.name}_noisy", f"{x.name}_low95", f"{x.name}_high95"


def _key_sets(files: Mapping[str, str], marginals: Sequence[Marginal]) -> dict[str, list[str]]:
    """Each column's public values, from its file (first field of each line)."""
    from airflow_privacy.core.hierarchy import Hierarchy

    used = {c for m in marginals for c in m.columns}
    extra = sorted(set(files) - used)
    if extra:
        raise InputError(f"{opt('keys')} {extra[0]!r} names a column of no marginal")
    out: dict[str, list[str]] = {}
    for column in sorted(used):
        path = files.get(column)
        if path is None:
            raise InputError(
                f"column {column!r} has no public key set: give {opt('keys')} {column}=FILE "
                "(the values are declared, never read from the data)"
            )
        out[column] = list(Hierarchy.from_arx_csv(path, column).values)
    return out


def _count(
    req: DPReleaseRequest,
    marginals: Sequence[Marginal],
    keys: Mapping[str, Sequence[str]],
    ctx: GateContext,
) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    """Each marginal's count vector and, for each summed column, each marginal's sum
    vector."""
    from airflow_privacy.core.backends.duck import bounded_counts
    from airflow_privacy.core.dp.marginals import columns_of, count_vectors, sum_vectors
    from airflow_privacy.gate.tables import local_copy

    columns = columns_of(marginals)
    if req.source.is_spark:
        from airflow_privacy.core.backends import spark
        from airflow_privacy.gate.spark_tables import spark_session, spark_source

        table, counts = spark.bounded_counts(
            spark_source(req.source), columns, entity=req.entity,
            bound=req.max_rows_per_person, spark=spark_session(ctx), progress=ctx.progress,
            sums=req.sums,
        )  # fmt: skip
    elif req.source.is_table:
        from airflow_privacy.core.backends import sql
        from airflow_privacy.gate.tables import sql_target

        engine, name = sql_target(req.source, ctx)
        ctx.progress(f"counting {req.source.describe()} in the database")
        table, counts = sql.bounded_counts(
            engine, name, columns, entity=req.entity, bound=req.max_rows_per_person,
            sums=req.sums,
        )  # fmt: skip
    else:
        with local_copy(req.source, ctx) as path:
            table, counts = bounded_counts(
                path, columns, entity=req.entity, bound=req.max_rows_per_person, fmt=req.fmt,
                delimiter=req.delimiter, progress=ctx.progress, sums=req.sums,
            )  # fmt: skip
    if not int(counts.sum()):  # an empty extract: a mistake, never worth a spend
        raise InputError(f"{req.source.describe()} holds no records: nothing to release")
    return (
        count_vectors(table, counts, marginals, keys),
        sum_vectors(table, marginals, keys, len(req.sums)),
    )


def _people(req: DPReleaseRequest, ledger: Any, ctx: GateContext) -> list[str] | None:
    """The keyed hashes of the release's people (the ``entity`` column), when there is one
    and the ledger has its identifier key: the budget then holds per person too
    (:mod:`airflow_privacy.ledger.budget`). Never the identifiers."""
    if req.entity is None or ledger.hash_key(required=False) is None:
        return None
    from airflow_privacy.gate.attempts import member_hashes

    return member_hashes(req.source, req.entity, ledger.key_env, ctx)


def _consistency(
    marginals: Sequence[Marginal], keys: Mapping[str, Sequence[str]], noise: NoisePlan
) -> dict[str, Any]:
    """Whether the marginals are made consistent (two or more, when cheap:
    :data:`~airflow_privacy.core.dp.consistency.MAX_WORK` over the counts and every summed
    column) and each one's standard deviation after it, for the counts and for each sum;
    from the key sets' sizes, before any noise."""
    import math

    from airflow_privacy.core.dp.consistency import MAX_WORK, variance_factors, work

    sets = [m.columns for m in marginals]
    sizes = {c: len(keys[c]) for m in marginals for c in m.columns}
    applied = len(marginals) >= 2 and work(sets, sizes) * (1 + len(noise.sums)) <= MAX_WORK
    # one marginal is its own fit
    factors = variance_factors(sets, sizes) if applied else [1.0] * len(marginals)

    def sds(stddev: float) -> dict[str, float]:
        return {m.name: stddev * math.sqrt(max(f, 0.0))
                for m, f in zip(marginals, factors, strict=True)}  # fmt: skip

    return {
        "applied": applied,
        "stddev": sds(noise.stddev),
        "sum_stddev": {sn.column: sds(sn.stddev) for sn in noise.sums},
    }


def _table(
    marginals: Sequence[Marginal],
    keys: Mapping[str, Sequence[str]],
    noisy: Sequence[np.ndarray],
    noise: NoisePlan,
    consistent: bool,
    sums: Sequence[tuple[Summed, Sequence[np.ndarray]]] = (),
) -> pa.Table:
    """The released table: one row per cell, its marginal, its value of each column (null
    where the marginal does not have the column), the count shown (the estimate rounded,
    never below zero), the estimate (the marginals made consistent when ``consistent``,
    else the noisy count), the noisy count itself (unbiased) and its interval; then each
    summed column's estimate, drawn value and interval (:func:`_sum_columns`)."""
    import numpy as np
    import pyarrow as pa

    from airflow_privacy.core.dp.marginals import cells, columns_of
    from airflow_privacy.core.dp.noise import clamp

    columns = columns_of(marginals)
    data: dict[str, list[Any]] = {"marginal": [], **{c: [] for c in columns}}
    for m in marginals:
        rows = cells(m, keys)
        data["marginal"] += [m.name] * len(rows)
        for c in columns:
            if c in m.columns:
                i = m.columns.index(c)
                data[c] += [r[i] for r in rows]
            else:
                data[c] += [None] * len(rows)
    table = {k: pa.array(v, pa.string()) for k, v in data.items()}
    raw, estimate = _estimate(marginals, keys, noisy, consistent)
    table["count"] = pa.array(clamp(np.rint(estimate).astype(np.int64)))
    table["estimate"] = pa.array(np.round(estimate, 6))
    table["noisy_count"] = pa.array(raw)
    table["low95"] = pa.array(np.maximum(raw - noise.half_width, 0))
    table["high95"] = pa.array(raw + noise.half_width)
    for (x, drawn), sn in zip(sums, noise.sums, strict=True):
        raw, estimate = _estimate(marginals, keys, drawn, consistent)
        est, noisy_name, low, high = _sum_columns(x)
        table[est] = pa.array(np.round(estimate, 6))
        table[noisy_name] = pa.array(raw)
        # a sum of values >= 0 is >= 0: the low end raised to zero, as the counts'
        table[low] = pa.array(np.maximum(raw - sn.half_width, 0) if x.low >= 0
                              else raw - sn.half_width)  # fmt: skip
        table[high] = pa.array(raw + sn.half_width)
    return pa.table(table)


def _estimate(
    marginals: Sequence[Marginal],
    keys: Mapping[str, Sequence[str]],
    noisy: Sequence[np.ndarray],
    consistent: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """The drawn vectors end to end, and the estimate: made consistent when ``consistent``
    (:mod:`~airflow_privacy.core.dp.consistency`), else the drawn values."""
    import numpy as np

    from airflow_privacy.core.dp.consistency import project

    raw = np.concatenate(list(noisy)) if noisy else np.zeros(0, np.int64)
    if not consistent:
        return raw, raw.astype(np.float64)
    sizes = {c: len(keys[c]) for m in marginals for c in m.columns}
    parts = project([m.columns for m in marginals], sizes, noisy)
    return raw, np.concatenate(parts) if parts else np.zeros(0)


def _release(
    req: DPReleaseRequest,
    ledger: Any,
    marginals: Sequence[Marginal],
    keys: Mapping[str, Sequence[str]],
    vectors: tuple[Sequence[np.ndarray], Sequence[Sequence[np.ndarray]]],
    noise: NoisePlan,
    n_cells: int,
    ctx: GateContext,
) -> Envelope:
    from dataclasses import replace

    from airflow_privacy.core.dp.marginals import columns_of
    from airflow_privacy.core.dp.noise import draw_release
    from airflow_privacy.gate.policy import dp_cap
    from airflow_privacy.gate.tables import _serialize, write_outputs

    written: dict[str, bytes] = {}
    recorded: dict[str, Envelope] = {}
    consistency = _consistency(marginals, keys, noise)
    consistent = bool(consistency["applied"])

    counts, sums = vectors

    def drawn(room: float, unit: str) -> str:
        noisy, noisy_sums = draw_release(noise, counts, sums, room, unit)
        summed = list(zip(req.sums, noisy_sums, strict=True))
        buf = io.BytesIO()
        table = _table(marginals, keys, noisy, noise, consistent, summed)
        _serialize(table, req.out.name, buf)
        written["bytes"] = buf.getvalue()
        return "sha256:" + hashlib.sha256(written["bytes"]).hexdigest()

    def record(info: AttemptInfo, after: Budget) -> dict[str, Any]:
        recorded["env"] = _envelope(
            req, marginals, noise, n_cells, after, info, consistency, spent=True
        )
        return recorded["env"].to_dict()

    columns = columns_of(marginals)
    spec = {
        "mechanism": noise.mechanism, "scale": noise.scale, "bound": noise.bound,
        "marginals": [list(m.columns) for m in marginals], "entity": req.entity,
        "sums": [{"column": x.column, "low": x.low, "high": x.high,
                  "scale": sn.scale} for x, sn in zip(req.sums, noise.sums, strict=True)],
    }  # fmt: skip
    with ledger:
        people = _people(req, ledger, ctx)
        info, budget = ledger.open_dp_attempt(
            req.dataset, columns=columns, spec=spec, mechanism=noise.mechanism, rho=noise.rho,
            epsilon=noise.epsilon, cap=dp_cap, draw=drawn, envelope=record, name=req.name,
            version=req.version, origin=ctx.origin, member_hashes=people,
        )  # fmt: skip
    if info is None:
        return _envelope(req, marginals, noise, n_cells, budget, None, consistency, spent=False)
    write_outputs({req.out: written["bytes"]}, ctx)
    # the envelope the ledger recorded with the spend, and where its file went
    return replace(recorded["env"], outputs={"release": req.out.describe()})


def _loss_words(noise: NoisePlan, budget: Budget, delta: float) -> dict[str, Any]:
    """What the dataset's total spend means (Ganta et al., Theorem 15 and Proposition 17)."""
    from airflow_privacy.core.dp.noise import approx_dp, semantic

    if budget.unit == "epsilon" and math.isfinite(budget.spent):
        eps, d = budget.spent, 0.0
    else:
        rho = budget.spent if budget.unit == "rho" else noise.rho
        eps, d = approx_dp(rho, delta), delta
    bound = semantic(eps, d)
    guarantee = f"({eps:.4g}, {d:g})-DP" if d else f"{eps:.4g}-DP"
    factor = math.exp(eps) if eps < 700 else math.inf
    text = (
        f"the dataset's DP releases so far are {guarantee}: with or without any one "
        f"person's data, every outcome of them is at most {factor:.4g} times as likely"
        + (f" (up to a probability of {d:g})" if d else "")
    )
    if bound < 1:
        text += (
            f"; whatever an adversary knows besides, its belief about anyone computed from "
            f"them moves by at most {bound:.3g} in statistical distance (Ganta, "
            "Kasiviswanathan and Smith, KDD 2008, "
            + ("Theorem 15)" if not d else "Proposition 17)")
        )
    else:
        text += (
            "; at this spend the semantic-privacy bound of Ganta, Kasiviswanathan and Smith "
            f"(KDD 2008) is {bound:.3g}, which bounds nothing (a bound below 1 needs a "
            "smaller total)"
        )
    return {"epsilon": eps, "delta": d, "factor": factor, "semantic": bound, "text": text}


def _refusal(
    dataset: str, budget: Budget, unit: str, cost: float | None
) -> tuple[str, list[dict[str, Any]]]:
    """Why a release the budget does not hold is refused, and the way forward."""
    if budget.cap is None:
        why = (
            f"the policy of {dataset!r} allows no differentially private release (it sets no "
            "DP budget)"
        )
        return why, [{
            "kind": "policy", "criterion": "dp",
            "text": f"an officer sets a budget in the policy of {dataset!r} "
                    "(policy set --dp-rho-cap or --dp-epsilon-cap; DatasetPolicyOperator's "
                    "dp_rho_cap or dp_epsilon_cap; a second person "
                    "approves it)",
        }]  # fmt: skip
    asked = f"spending {unit}={cost if cost is not None else 'unbounded'} would exceed the budget"
    if budget.people is not None and budget.people > budget.spent:
        shown = "unbounded" if math.isinf(budget.people) else f"{budget.people:.6g}"
        why = (
            f"{asked} of {dataset!r} for some of its people: cap {budget.cap:g}, and a person "
            f"of this release already spent {shown} in other DP releases (by their identifier "
            f"hashes), left {budget.left:.6g}"
        )
    else:
        shown = "unbounded" if math.isinf(budget.spent) else f"{budget.spent:.6g}"
        why = (
            f"{asked} of {dataset!r}: cap {budget.cap:g}, spent {shown} over "
            f"{budget.releases} release(s), left {budget.left:.6g}"
        )
    if budget.left <= 0:
        return why, []
    return why, [{
        "kind": "budget", "criterion": "dp",
        "text": f"at most {unit}={budget.left:.6g} is left: spend {unit} "
                f"{budget.left:.6g} or less (more noise), or release fewer marginals",
    }]  # fmt: skip


def _envelope(
    req: DPReleaseRequest,
    marginals: Sequence[Marginal],
    noise: NoisePlan,
    n_cells: int,
    budget: Budget,
    info: AttemptInfo | None,
    consistency: Mapping[str, Any],
    *,
    spent: bool,
) -> Envelope:
    from airflow_privacy.core.dp.noise import CONFIDENCE
    from airflow_privacy.gate.envelope import Envelope, ReleaseFacts, attempt_ref
    from airflow_privacy.vocabulary import DP_KIND

    unit = budget.unit or ("rho" if noise.mechanism == "gaussian" else "epsilon")
    cost = noise.rho if unit == "rho" else noise.epsilon
    details: dict[str, Any] = {
        "mechanism": noise.to_dict(),
        "marginals": [{"name": m.name, "columns": list(m.columns)} for m in marginals],
        "sums": [
            {"column": x.column, "low": x.low, "high": x.high, "columns": list(_sum_columns(x))}
            for x in req.sums
        ],
        "cells": n_cells,
        "unit": unit,
        "cost": cost,
        "budget": budget.to_dict(),
        # whether the cap held per person too (the entity's identifier hashes were recorded)
        "per_person": budget.people is not None,
        "confidence": CONFIDENCE,
        "consistency": dict(consistency),
    }
    facts = ReleaseFacts(ref=req.source.describe(), group_columns=[], kind=DP_KIND)
    if not spent:
        why, advice = _refusal(req.dataset, budget, unit, cost)
        return Envelope(
            step="dp-release", name=req.name, outcome="blocked", safe=False,
            summary=f"refused: {why}; nothing was drawn, recorded or written",
            reasons=[why], release=facts, details=details, advice=advice,
        )  # fmt: skip
    words = _loss_words(noise, budget, req.delta)
    details["loss"] = words
    summary = (
        f"released {details['cells']:,} cells of {len(marginals)} marginal(s) with "
        f"{noise.mechanism} noise (scale {noise.scale:.4g}, standard deviation "
        f"{noise.stddev:.4g}, 95% of cells within +-{noise.half_width})"
        + "".join(
            f"; the sums of {sn.column} with standard deviation {sn.stddev:.4g} "
            f"(95% within +-{sn.half_width:,})"
            for sn in noise.sums
        )
        + f"; spent {unit}={cost:.6g} of {req.dataset!r}'s budget, {budget.left:.6g} of "
        f"{budget.cap:g} left"
    )
    return Envelope(
        step="dp-release", name=req.name, outcome="passed", safe=True, summary=summary,
        release=facts, attempt=attempt_ref(info) if info is not None else None,
        details=details,
    )  # fmt: skip


DP_RELEASE = DPReleaseStep()
