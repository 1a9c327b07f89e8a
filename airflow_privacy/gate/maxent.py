"""The MaxEnt risk step: disclosure under probabilistic background knowledge (Du, Teng and
Zhu, SIGMOD 2008, Privacy-MaxEnt), gated at a threshold ``c``.

The verdict errs on the safe side: the largest posterior must be below ``c`` by more than the
stated tolerance and the solver's error bound (:func:`airflow_privacy.core.thresholds.maxent_safe`).
Without ``c`` the step is an estimate and gives no verdict (``safe`` is None), which no gate
accepts as a pass. People named in a knowledge file appear in the envelope only as counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.attempts import begin_check, record, skipped
from airflow_privacy.gate.benign import benign_values
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.envelope import Envelope, ReleaseFacts
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.steps.values import column, columns

if TYPE_CHECKING:
    from airflow_privacy.core.maxent import BucketRelease

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
    output: ReleaseRef | None = None
    joint: bool = False
    name: str = "maxent"
    attempt: str | None = None
    ledger: str | None = None
    missing_as: str | None = None
    fmt: Any = None
    delimiter: str | None = None
    benign: Sequence[str] = ()


def _benign_parameter(benign: Sequence[str]) -> dict[str, Any]:
    return {"benign": list(benign)} if benign else {}


def _whole(value: Any, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{opt(what)} must be a whole number in [{low}, {high}], got {value!r}")
    return value


def _check(req: MaxEntRequest) -> None:
    _whole(req.top_positive, "top_positive", 0, 100_000)
    _whole(req.top_negative, "top_negative", 0, 100_000)
    _whole(req.min_support, "min_support", 1, 10**9)
    _whole(req.top, "top", 0, 10_000)
    if (req.top_positive or req.top_negative) and req.original is None:
        raise InputError(
            f"{opt('top_positive')}/{opt('top_negative')} mine rules from {opt('original')}"
        )
    if req.c is not None and (
        isinstance(req.c, bool) or not isinstance(req.c, int | float) or not 0 < req.c <= 1
    ):
        raise InputError(f"{opt('c-threshold')} must be in (0, 1], got {req.c!r}")
    if req.qis and (req.sensitive in req.qis or req.bucket in req.qis):
        raise InputError(f"{opt('qi')} must not name the sensitive or the bucket column")
    for w in req.rule_widths or ():
        _whole(w, "rule_width", 1, 64)
    if isinstance(req.not_sensitive, str):
        raise InputError(f"{opt('not_sensitive')} must be a list of values")
    benign_values(req.benign)


def run_maxent(req: MaxEntRequest, ctx: GateContext) -> Envelope:
    """Estimate P*(s | q) and gate on it (module doc)."""
    from airflow_privacy.core.io import describe_columns
    from airflow_privacy.core.maxent import SolverOptions, estimate
    from airflow_privacy.core.maxent.knowledge_file import load_knowledge
    from airflow_privacy.core.thresholds import TOLERANCE, maxent_safe
    from airflow_privacy.gate.tables import check_writable, column_names, read_table, write_outputs
    from airflow_privacy.report import maxent_heatmap

    _check(req)
    sensitive = column(req.sensitive, "sensitive")
    bucket = column(req.bucket, "bucket")
    if req.output is not None:
        from airflow_privacy.gate.tables import check_not_input

        check_writable(req.output, "the posterior table", option="output", kind="table")
        check_not_input(
            req.output, "the posterior table", [req.release, req.original], option="output"
        )
    start = begin_check(req.attempt, req.ledger, ctx, reads=req.release)
    attempt = start.info
    if start.skip:
        return skipped("maxent", req.name, attempt)
    present = column_names(req.release, ctx, fmt=req.fmt, delimiter=req.delimiter)
    for col, what in ((sensitive, "sensitive"), (bucket, "bucket")):
        if col not in present:
            raise InputError(
                f"{what} column {col!r} does not exist (columns: {describe_columns(present)})"
            )
    qis = (
        columns(req.qis, "qi") if req.qis else [c for c in present if c not in (sensitive, bucket)]
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
    details["heatmap"] = maxent_heatmap(result, HEATMAP_ROWS)
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
    return record(env, start, req.ledger, ctx)


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
    """A bucketized release file, counted by the backend ``auto`` picks: DuckDB's histogram
    of ``(qis..., bucket, sensitive)`` for a big file (only the distinct tuples and their
    counts come back), else the in-process reader."""
    from airflow_privacy.core.backends import choose
    from airflow_privacy.core.maxent import BucketRelease
    from airflow_privacy.gate.tables import read_table

    cols = [*qis, bucket, sensitive]
    if not req.release.is_uri:
        path = req.release.local
        if choose("auto", path, req.fmt, cols) == "duckdb":
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
