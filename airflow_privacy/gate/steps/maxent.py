"""The MaxEnt risk step, declared once (:class:`MaxEntStep`; ``airflow-privacy maxent`` and
``MaxEntRiskOperator`` are derived from it): disclosure under probabilistic background
knowledge (Du, Teng and Zhu, SIGMOD 2008, Privacy-MaxEnt, sections 4-5), gated at a threshold
``c``.

The verdict errs on the safe side: the largest posterior must be below ``c`` by more than the
stated tolerance and the solver's error bound (:func:`airflow_privacy.core.thresholds.maxent_safe`).
Without ``c`` the step is an estimate and gives no verdict (``safe`` is None), which no gate
accepts as a pass. People named in a knowledge file appear in the envelope only as counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.steps import shared
from airflow_privacy.gate.steps.base import Known, MeasuringStep
from airflow_privacy.gate.steps.fields import Field
from airflow_privacy.gate.steps.values import column, columns, given_or

if TYPE_CHECKING:
    from airflow_privacy.core.maxent import BucketRelease
    from airflow_privacy.gate.attempts import CheckStart
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.refs import ReleaseRef

HEATMAP_ROWS = 10


@dataclass(frozen=True)
class MaxEntRequest:
    release: ReleaseRef
    sensitive: str
    bucket: str
    qis: Sequence[str] | None = None
    knowledge: str | None = None
    original: ReleaseRef | None = None
    top_positive: int = 0
    top_negative: int = 0
    min_support: int = 3
    rule_widths: Sequence[int] | None = None
    not_sensitive: Sequence[str] = ()
    c: float | None = None
    top: int = 10
    heatmap_rows: int = HEATMAP_ROWS
    output: ReleaseRef | None = None
    joint: bool = False
    name: str = "maxent"
    attempt: str | None = None
    ledger: str | None = None
    missing_as: str | None = None
    fmt: Any = None
    delimiter: str | None = None
    benign: Sequence[str] = ()


class MaxEntStep(MeasuringStep):
    """``maxent``: the largest posterior P*(s | q) under background knowledge, gated at a
    threshold (module doc)."""

    name = "maxent"
    summary = "estimate P(sensitive | QI) under probabilistic background knowledge"
    description = (
        "Maximum-entropy estimate of P(s | q) for a bucketized release, given background "
        "knowledge (a YAML/JSON file and/or the Top-(K+, K-) association rules of the "
        "original table): the maximum posterior, the QI values and people most at risk, and "
        "the estimation accuracy against the original. Exit 0 = below --c (or no --c), 1 = "
        "the maximum posterior reaches --c, 2 = bad input or infeasible knowledge."
    )
    operator = "airflow_privacy.providers.airflow.operators.maxent.MaxEntRiskOperator"
    fields = (
        Field(
            "release",
            "ref",
            "the bucketized release (.csv[.gz] or .parquet, or a SQL table "
            "on the command line): QI columns exact, a bucket column and the sensitive column",
            cli="RELEASE",
            required=True,
            type_hint="str",
        ),
        shared.sensitive(),
        Field(
            "bucket",
            "column",
            "the bucket (group id) column",
            cli="--bucket",
            airflow="bucket_column",
            default="bucket",
            metavar="COL",
            templated=False,
            type_hint="str",
        ),
        Field(
            "qi",
            "columns",
            "a quasi-identifier column (default: every column but the bucket and sensitive ones)",
            cli="--qi",
            airflow="qis",
            metavar="COL",
            dest="qis",
            templated=False,
            type_hint="list[str] | None",
        ),
        Field(
            "knowledge",
            "text",
            "background knowledge, a YAML or JSON file (docs/usage/maxent.md)",
            metavar="FILE",
            type_hint="str | None",
        ),
        shared.conn("the connection of a URI (s3://...) of the release or the original"),
        Field(
            "original",
            "ref",
            "the original (pre-bucketization) table: needed to mine "
            "association rules, and gives the estimation accuracy",
            metavar="FILE",
            type_hint="str | None",
        ),
        Field(
            "top_positive",
            "whole",
            "use the K strongest positive rules Q => s",
            cli="--top-positive",
            metavar="K",
            default=0,
            low=0,
            high=2_000,
            type_hint="int | str",
        ),
        Field(
            "top_negative",
            "whole",
            "use the K strongest negative rules Q => not s",
            cli="--top-negative",
            metavar="K",
            default=0,
            low=0,
            high=2_000,
            type_hint="int | str",
        ),
        Field(
            "min_support",
            "whole",
            "minimum support of a mined rule, in records",
            cli="--min-support",
            metavar="N",
            default=3,
            low=1,
            high=10**9,
            type_hint="int | str",
        ),
        Field(
            "rule_width",
            "wholes",
            "mine rules whose condition names this many QI columns (default: every width)",
            cli="--rule-width",
            airflow="rule_widths",
            metavar="T",
            dest="rule_widths",
            low=1,
            high=64,
            templated=False,
            type_hint="list[int] | None",
        ),
        shared.benign(
            "a sensitive value whose disclosure is not a breach: the largest posterior and "
            "the verdict consider only the other values; a value absent from the release is "
            "noted, not an error",
            aliases=("--not-sensitive",),
        ),
        Field(
            "not_sensitive",
            "values",
            "the former name of benign_values (both lists are merged)",
            cli=None,
            default=(),
            templated=False,
            type_hint="list[str]",
        ),
        Field(
            "c-threshold",
            "number",
            "block when the maximum posterior is >= this; without "
            "it, an estimate without a verdict, which no gate accepts as a pass",
            cli="--c",
            airflow="threshold",
            metavar="C",
            low=0,
            high=1,
            open_low=True,
            explicit=True,
            type_hint="float | str | None",
        ),
        Field(
            "top",
            "whole",
            "how many QI values / people at risk to list",
            metavar="N",
            default=10,
            low=0,
            high=10_000,
            templated=False,
            type_hint="int",
        ),
        Field(
            "heatmap_rows",
            "whole",
            "how many QI values most at risk the report's P*(s | q) heatmap shows",
            cli="--heatmap-rows",
            metavar="N",
            default=HEATMAP_ROWS,
            low=0,
            high=1000,
            templated=False,
            type_hint="int",
        ),
        Field(
            "output",
            "text",
            "write the whole P*(s | q) table (.csv or .parquet), atomically",
            airflow=None,
            metavar="FILE",
        ),
        Field(
            "joint",
            "flag",
            "solve every bucket jointly (no Theorem 5 closed form; slower, same answer)",
            default=False,
            templated=False,
            type_hint="bool",
        ),
        shared.missing_as(),
    )
    cli_groups = ("input", "attempt", "report", "output")

    def rules(self, known: Known) -> None:
        from airflow_privacy.gate.benign import benign_values

        # the declared ranges (top_positive, top_negative, min_support, top, c): Step.check
        mined = [known.get(k) for k in ("top_positive", "top_negative")]
        if (
            known.has("original")
            and known["original"] is None
            and any(isinstance(n, int) and n > 0 for n in mined)
        ):
            raise InputError(
                f"{opt('top_positive')}/{opt('top_negative')} mine rules from {opt('original')}"
            )
        qis = known.get("qi")
        if qis and not isinstance(qis, str):
            for key in ("sensitive", "bucket"):
                if known.get(key) in qis:
                    raise InputError(f"{opt('qi')} must not name the {key} column {known[key]!r}")
        for w in known.get("rule_width") or ():
            _whole(w, "rule_width", 1, 64)
        if isinstance(known.get("not_sensitive"), str):
            raise InputError(f"{opt('not_sensitive')} must be a list of values")
        if known.get("benign") is not None:
            benign_values(known["benign"])

    def values_of(self, req: MaxEntRequest) -> Known:
        return Known(
            {
                "release": req.release, "sensitive": req.sensitive, "bucket": req.bucket,
                "qi": req.qis, "knowledge": req.knowledge, "original": req.original,
                "top_positive": req.top_positive, "top_negative": req.top_negative,
                "min_support": req.min_support, "rule_width": req.rule_widths,
                "benign": req.benign, "not_sensitive": req.not_sensitive,
                "c-threshold": req.c, "top": req.top, "heatmap_rows": req.heatmap_rows,
                "output": req.output, "joint": req.joint,
                "missing_as": req.missing_as, "attempt": req.attempt,
            }
        )  # fmt: skip

    def request(self, values: Mapping[str, Any]) -> MaxEntRequest:
        from airflow_privacy.gate.refs import ReleaseRef

        output = values.get("output")
        return MaxEntRequest(
            release=values["release"],
            sensitive=values["sensitive"],
            bucket=given_or(values.get("bucket"), "bucket"),
            qis=values.get("qi") or None,
            knowledge=values.get("knowledge"),
            original=values.get("original"),
            top_positive=given_or(values.get("top_positive"), 0),
            top_negative=given_or(values.get("top_negative"), 0),
            min_support=given_or(values.get("min_support"), 3),
            rule_widths=values.get("rule_width") or None,
            not_sensitive=tuple(values.get("not_sensitive") or ()),
            benign=tuple(values.get("benign") or ()),
            c=values.get("c-threshold"),
            top=given_or(values.get("top"), 10),
            heatmap_rows=given_or(values.get("heatmap_rows"), HEATMAP_ROWS),
            output=ReleaseRef(path=output) if output is not None else None,
            joint=bool(values.get("joint")),
            name=values.get("name") or "maxent",
            attempt=values.get("attempt"),
            ledger=values.get("ledger"),
            missing_as=values.get("missing_as"),
            fmt=values.get("input_format"),
            delimiter=values.get("delimiter"),
        )

    def before_begin(self, req: MaxEntRequest, ctx: GateContext) -> None:
        column(req.sensitive, "sensitive")
        column(req.bucket, "bucket")
        if req.output is not None:
            from airflow_privacy.gate.tables import check_not_input, check_writable

            check_writable(req.output, "the posterior table", option="output", kind="table")
            check_not_input(
                req.output, "the posterior table", [req.release, req.original], option="output"
            )

    def measure(
        self, req: MaxEntRequest, ctx: GateContext, start: CheckStart, prepared: Any
    ) -> Envelope:
        """Estimate P*(s | q) and gate on it (module doc)."""
        from airflow_privacy.core.cells import describe_columns
        from airflow_privacy.core.maxent import SolverOptions, estimate
        from airflow_privacy.core.maxent.knowledge_file import load_knowledge
        from airflow_privacy.core.thresholds import TOLERANCE, maxent_safe
        from airflow_privacy.gate.benign import benign_values
        from airflow_privacy.gate.envelope import Envelope, ReleaseFacts
        from airflow_privacy.gate.tables import column_names, read_table, write_outputs
        from airflow_privacy.report import maxent_heatmap

        sensitive = column(req.sensitive, "sensitive")
        bucket = column(req.bucket, "bucket")
        present = column_names(req.release, ctx, fmt=req.fmt, delimiter=req.delimiter)
        for col, what in ((sensitive, "sensitive"), (bucket, "bucket")):
            if col not in present:
                raise InputError(
                    f"{what} column {col!r} does not exist (columns: {describe_columns(present)})"
                )
        qis = (
            columns(req.qis, "qi")
            if req.qis
            else [c for c in present if c not in (sensitive, bucket)]
        )
        if req.release.is_table:  # only the counts leave the database (a GROUP BY there)
            release = _table_release(req, qis, bucket, sensitive, ctx)
        else:
            release = _file_release(req, qis, bucket, sensitive, ctx)
        ctx.progress(
            f"{release.n_records:,} records in {release.n_buckets:,} buckets, "
            f"{len(release.qi_values):,} QI values, {len(release.values)} sensitive values"
        )
        knowledge = load_knowledge(req.knowledge, release) if req.knowledge is not None else None
        original = None
        if req.original is not None:
            ctx.progress(f"reading the original table {req.original.describe()}")
            original = read_table(req.original, [*qis, sensitive], ctx, fmt=req.fmt,
                                  delimiter=req.delimiter, sensitive=sensitive,
                                  missing_as=req.missing_as)  # fmt: skip
        ctx.progress("solving the maximum-entropy problem")
        result = estimate(
            release,
            knowledge,
            original=original,
            top_positive=req.top_positive,
            top_negative=req.top_negative,
            min_support=req.min_support,
            rule_widths=list(req.rule_widths) if req.rule_widths else None,
            benign=(*benign_values(req.benign), *benign_values(req.not_sensitive, "not_sensitive")),
            options=SolverOptions(split=not req.joint),
        )
        st = result.solution.stats
        ctx.progress(
            f"done in {st.seconds:.2f} s: {st.buckets_solved:,} bucket(s) solved jointly, "
            f"{st.buckets - st.buckets_solved:,} in closed form; residual {st.residual:.1e}"
        )
        outputs: dict[str, str] = {}
        if req.output is not None:
            import pyarrow as pa

            header, rows = result.posterior_rows()
            data = {h: [row[i] for row in rows] for i, h in enumerate(header)}
            write_outputs({req.output: pa.table(data)}, ctx)
            outputs["posterior"] = req.output.describe()
        error = float(result.posterior_error_bound)
        tolerance = max(TOLERANCE, error)
        safe: bool | None = None
        if req.c is not None:
            safe = maxent_safe(result.max_posterior, float(req.c), error)
        reason = result.public_reason(req.c)
        details = result.public_dict(req.top)
        details["heatmap"] = maxent_heatmap(result, req.heatmap_rows)
        n_rules = len(result.rules)
        n_file = len(result.facts) - n_rules
        parts = []
        if req.knowledge:
            parts.append(f"{n_file} statement(s) from {req.knowledge}")
        if n_rules:
            n_pos = sum(r.positive for r in result.rules)
            parts.append(f"{n_pos} positive + {n_rules - n_pos} negative rules mined from "
                         f"{req.original.describe() if req.original else 'the original'} "
                         f"(min support {req.min_support})")  # fmt: skip
        details.update(
            records=release.n_records,
            buckets=release.n_buckets,
            values=len(release.values),
            knowledge_text="; ".join(parts),
            solver={"buckets_solved": st.buckets_solved, "buckets": st.buckets,
                    "newton_iterations": st.newton_iterations, "residual": st.residual,
                    "seconds": st.seconds},
        )  # fmt: skip
        details["error_bound"] = error
        details["qis"] = list(qis)  # the gate compares them with the attempt's (gate.rules)
        verdict = {
            "criterion": "maxent",
            "safe": safe,
            "parameters": {"c": req.c, "tolerance": tolerance, **_benign_parameter(result.benign)},
            "value": result.max_posterior,
            "reason": reason,
            "max_disclosure": result.max_posterior,
            "witness": None,
            "details": {"tolerance": tolerance},
        }
        env = Envelope(
            step="maxent",
            name=req.name,
            outcome="estimated" if safe is None else ("passed" if safe else "failed"),
            safe=safe,
            summary=reason,
            reasons=[f"maxent: {reason}"] if safe is False else [],
            release=ReleaseFacts(
                ref=req.release.describe(),
                records=release.n_records,
                groups=release.n_buckets,
                sensitive=sensitive,
                group_columns=[bucket],
            ),
            results=[verdict],
            details=details,
            outputs=outputs,
        )
        return env


MAXENT = MaxEntStep()


def run_maxent(req: MaxEntRequest, ctx: GateContext) -> Envelope:
    """Estimate P*(s | q) and gate on it (module doc)."""
    return MAXENT.run(req, ctx)


def _benign_parameter(benign: Sequence[str]) -> dict[str, Any]:
    return {"benign": list(benign)} if benign else {}


def _whole(value: Any, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{opt(what)} must be a whole number in [{low}, {high}], got {value!r}")
    return value


def _table_release(
    req: MaxEntRequest, qis: list[str], bucket: str, sensitive: str, ctx: GateContext
) -> BucketRelease:
    """A bucketized release table from its ``GROUP BY qis, bucket, sensitive`` counts; a
    missing value is refused as in a file (a blank sensitive value, unless
    ``missing_as``)."""
    import pyarrow as pa

    from airflow_privacy.core.io import blank_mask
    from airflow_privacy.core.maxent import BucketRelease
    from airflow_privacy.gate.tables import sql_group_counts

    ctx.progress(f"counting {req.release.describe()} in the database (GROUP BY)")
    counted = sql_group_counts(req.release, [*qis, bucket, sensitive], ctx)
    # blank sensitive cells by the one definition every backend uses
    texts = pa.array([None if r[-2] is None else str(r[-2]) for r in counted], pa.string())
    blank = blank_mask(texts)[1].to_pylist() if counted else []
    rows = []
    for row, is_blank in zip(counted, blank, strict=True):
        *q, b, v, n = row
        if is_blank:
            if req.missing_as is None:
                raise InputError(
                    f"column {sensitive!r} of {req.release.describe()} has missing values: "
                    f"give {opt('missing_as')} to publish them as a value"
                )
            v = req.missing_as
        if b is None or any(x is None for x in q):
            raise InputError(
                f"{req.release.describe()} has missing values in its QI or bucket columns"
            )
        rows.append((q, b, v, int(n)))
    return BucketRelease.from_counts(qis, rows, sensitive, bucket)


def _file_release(
    req: MaxEntRequest, qis: list[str], bucket: str, sensitive: str, ctx: GateContext
) -> BucketRelease:
    """A bucketized release file: DuckDB's histogram of ``(qis..., bucket, sensitive)`` for
    a file too large to read whole (:func:`~airflow_privacy.core.backends.large`: only the
    distinct tuples and their counts come back), else the in-process reader."""
    from airflow_privacy.core.backends import large
    from airflow_privacy.core.maxent import BucketRelease
    from airflow_privacy.gate.tables import read_table

    cols = [*qis, bucket, sensitive]
    if not req.release.is_uri:
        path = req.release.local
        if large(path, req.fmt, cols):
            from airflow_privacy.core.backends.duck import DuckDBBackend

            ctx.progress(f"counting {req.release.describe()} with DuckDB")
            hist = DuckDBBackend().histogram(
                path, [*qis, bucket], sensitive, fmt=req.fmt, delimiter=req.delimiter,
                missing_as=req.missing_as, progress=ctx.progress,
            )  # fmt: skip
            enc = hist.encoded()
            w = enc.row_weights().tolist()
            rows = [
                (
                    tuple(c.values[int(c.codes[r])] for c in enc.qis[:-1]),
                    enc.qis[-1].values[int(enc.qis[-1].codes[r])],
                    enc.sensitive.values[int(enc.sensitive.codes[r])],
                    int(w[r]),
                )
                for r in range(enc.rows)
            ]
            return BucketRelease.from_counts(qis, rows, sensitive, bucket)
    ctx.progress(f"reading {req.release.describe()}")
    table = read_table(req.release, cols, ctx, fmt=req.fmt, delimiter=req.delimiter,
                       sensitive=sensitive, missing_as=req.missing_as)  # fmt: skip
    return BucketRelease.from_arrow(table, qis, sensitive, bucket)
