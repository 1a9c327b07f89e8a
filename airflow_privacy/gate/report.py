"""The report step: the HTML release report of an attempt (or of checks given directly).

With an attempt, everything comes from the ledger: the checks are the envelopes recorded
for the attempt, and the status is the ledger's. A report says ``published`` only when the
ledger says the attempt published (or found the content already published); anything else
is ``blocked`` (the gate's reasons) or ``not published`` with every failed or missing step
named (a task that failed is a reason, a required check without a result is a reason). The
report is written atomically beside the release (and beside its published copy) and stored
in the ledger with the attempt, where the Airflow UI shows it.

Without an attempt (``airflow-privacy report RELEASE --check FILE``) the report shows the
checks given and is marked "checked": a look at the numbers, not a publication decision.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.envelope import Envelope, ReleaseFacts, attempt_ref, failed_task_reasons
from airflow_privacy.gate.refs import ReleaseRef

if TYPE_CHECKING:
    from airflow_privacy.ledger import AttemptInfo

REPORT_SUFFIX = ".report.html"


@dataclass(frozen=True)
class ReportRequest:
    release: ReleaseRef
    attempt: str | None = None
    checks: Sequence[Envelope] = ()
    out: ReleaseRef | None = None
    failed_tasks: Mapping[str, str] = field(default_factory=dict)
    sensitive: str | None = None
    group_columns: Sequence[str] | None = None
    dataset: str | None = None
    version: str | None = None
    c: float | None = None
    k_max: int | None = None
    skyline_c: float | None = None
    ledger: str | None = None
    name: str = "report"
    missing_as: str | None = None  # blank sensitive cells counted as this (else refused)
    fmt: Any = None  # the release's format, "csv" or "parquet" (default: from its name)
    delimiter: str | None = None  # its CSV delimiter (default: detected)
    manifest: ReleaseRef | None = None  # a release table's manifest file


def status_of(info: AttemptInfo, failed_tasks: Mapping[str, str]) -> tuple[str, list[str]]:
    """The report's status and reasons from the ledger's attempt (module doc)."""
    if info.status in ("published", "already-published"):
        return "published", []
    if info.status in ("blocked", "superseded"):
        reasons = list(info.reasons)
        if info.status == "superseded":
            reasons.append(
                f"superseded by {info.superseded_by} at {info.superseded_at}: "
                f"{info.supersede_reason}"
            )
        return "blocked", reasons
    reasons = failed_task_reasons(failed_tasks)
    recorded = {c.name: c for c in info.checks}
    for name in info.required:
        if name not in recorded:
            reasons.append(f"{name}: no result was recorded")
    for c in info.checks:
        if c.safe is not True:
            reasons.append(f"{c.name}: did not pass")
    if info.status == "publishing":
        reasons.insert(0, "the gate allowed it, but the files were not yet in place: re-run "
                       "the publish step")  # fmt: skip
    else:
        reasons.insert(0, "the gate did not decide (the publish step did not run)")
    return "not-published", reasons


def report_target(
    release: ReleaseRef, out: ReleaseRef | None, option: str = "report-out"
) -> ReleaseRef:
    """Where the report of ``release`` goes (``out``, else ``RELEASE.report.html`` beside
    it), checked before any work: ``release`` is a file (a report reads it and the manifest
    beside it; a SQL table has neither), and the target is an ``.html`` file in a folder
    that exists. ``option`` names the parameter that set ``out`` in messages."""
    from airflow_privacy.gate.tables import check_writable

    if release.is_table and out is None:
        raise InputError(
            f"{release.describe()} is a SQL table: give {opt(option)}, the file the report is "
            "written to"
        )
    target = out or release.sibling(REPORT_SUFFIX)
    check_writable(target, "the report", option=option, kind="html")
    return target


def run_report(req: ReportRequest, ctx: GateContext) -> Envelope:
    """Build, write and store the report (module doc)."""
    from airflow_privacy.gate.tables import write_outputs
    from airflow_privacy.report import render_html

    out = report_target(req.release, req.out)
    info = None
    checks = list(req.checks)
    dataset, version, release_id = req.dataset, req.version, None
    if req.attempt is not None:
        with ctx.open_ledger(req.ledger) as db:
            info = db.attempt(req.attempt)
        from airflow_privacy.gate.attempts import same_run

        same_run(info, ctx)
        checks = [Envelope.from_dict(c.envelope, f"check {c.name!r}") for c in info.checks]
        status, reasons = status_of(info, req.failed_tasks)
        dataset, version, release_id = info.release.dataset, info.release.version, info.release.id
    else:
        failed = [c for c in checks if c.safe is not True and c.outcome != "already-published"]
        status = "checked"
        reasons = [r for c in failed for r in (c.reasons or [f"{c.name}: {c.summary}"])]
    from airflow_privacy.vocabulary import DP_KIND

    if info is not None and info.release.kind == DP_KIND:
        report = _dp_report(req, info, checks, status, reasons, ctx)
    else:
        report = _partition_report(req, info, checks, status, reasons, dataset, version,
                                   release_id, ctx)  # fmt: skip
    report = _with_path(report, req.release.describe())
    html = render_html(report)
    targets = [out]
    if (
        info is not None
        and info.status == "published"
        and info.destination
        and not info.destination.startswith("table:")  # a published table: no file beside it
    ):
        targets.append(ReleaseRef(path=info.destination + REPORT_SUFFIX))
    write_outputs({t: html for t in targets}, ctx)
    ctx.progress(f"report written to {', '.join(t.describe() for t in targets)}")
    if info is not None:
        with ctx.open_ledger(req.ledger) as db:
            db.attach_report(info.uuid, report.to_dict())
        ctx.progress(f"report stored in the ledger with attempt {info.uuid}")
    v = report.verdict
    outcome = {"published": "published", "blocked": "blocked", "checked": "computed"}.get(
        status, "not-published"
    )
    safe: bool | None = True if status == "published" else (None if status == "checked" else False)
    return Envelope(
        step="report",
        name=req.name,
        outcome=outcome,
        safe=safe,
        summary=v.headline,
        reasons=list(v.reasons),
        release=ReleaseFacts(
            ref=req.release.describe(),
            records=report.facts.records,
            groups=report.facts.groups,
            sensitive=report.facts.sensitive,
            group_columns=list(report.facts.group_columns),
        ),
        attempt=attempt_ref(info) if info is not None else None,
        details={"status": status, "checks_run": v.checks_run, "checks_failed": v.checks_failed},
        outputs={
            "report": out.describe(),
            **({"published_report": targets[1].describe()} if len(targets) > 1 else {}),
        },
    )


def _partition_report(
    req: ReportRequest,
    info: AttemptInfo | None,
    checks: Sequence[Envelope],
    status: str,
    reasons: Sequence[str],
    dataset: str | None,
    version: str | None,
    release_id: int | None,
    ctx: GateContext,
) -> Any:
    """The report of a partition release (its groups read where it lives)."""
    from airflow_privacy.gate.tables import local_copy
    from airflow_privacy.report import build_release_report

    with contextlib.ExitStack() as stack:
        table_args: dict[str, Any] = {}
        if req.release.is_table:
            table_args = _table_report_args(req, ctx)
            path: Any = req.release.describe()
        else:
            path = stack.enter_context(local_copy(req.release, ctx))
            table_args = {"counts": _file_counts(path, req, ctx)}
        report = build_release_report(
            path,
            **table_args,
            sensitive=req.sensitive,
            group_columns=list(req.group_columns) if req.group_columns else None,
            dataset=dataset,
            version=version,
            release_id=release_id,
            status=status,
            reasons=reasons,
            checks=checks,
            c=req.c,
            k_max=req.k_max,
            skyline_c=req.skyline_c,
            progress=ctx.progress,
            missing_as=req.missing_as,
            fmt=req.fmt,
            delimiter=req.delimiter,
            identity=(info.release.spec or {}).get("identity") if info is not None else None,
        )
    return report


def _dp_report(
    req: ReportRequest,
    info: AttemptInfo,
    checks: Sequence[Envelope],
    status: str,
    reasons: Sequence[str],
    ctx: GateContext,
) -> Any:
    """The report of a DP release (:mod:`airflow_privacy.report.dp`): its record, the
    dataset's spends and the released cells (the file, which is the release)."""
    from datetime import UTC, datetime

    from airflow_privacy.gate.policy import dp_cap
    from airflow_privacy.gate.tables import read_table
    from airflow_privacy.report.build import _verdict, _version
    from airflow_privacy.report.dp import CELLS_SHOWN, dp_section
    from airflow_privacy.report.model import ReleaseFacts as Facts
    from airflow_privacy.report.model import ReleaseReport, UtilitySection

    record = next((c for c in checks if c.step == "dp-release"), None)
    if record is None:
        raise InputError(f"attempt {info.uuid} is a DP release without its dp-release record")
    with ctx.open_ledger(req.ledger) as db:
        budget = db.dp_budget(info.release.dataset, dp_cap)
        spends = db.dp_spends(info.release.dataset)
    if req.release.is_table:
        raise InputError("a DP release is a file: give the file dp-release wrote")
    table = read_table(req.release, None, ctx, fmt=req.fmt, delimiter=req.delimiter)
    d = record.details
    section = dp_section(record.to_dict(), spends, budget.unit or str(d.get("unit") or "rho"),
                         budget.cap, table.slice(0, CELLS_SHOWN).to_pylist())  # fmt: skip
    rel = info.release
    facts = Facts(
        path=req.release.describe(), dataset=rel.dataset, version=rel.version,
        release_id=rel.id, records=0, groups=int(d.get("cells") or 0), sensitive="",
        sensitive_values=0, group_columns=[], qis=list(rel.qis),
        method=f"differential privacy ({section.mechanism})",
        generated=datetime.now(UTC).replace(microsecond=0).isoformat(), tool_version=_version(),
    )  # fmt: skip
    utility = UtilitySection(
        method=facts.method, records_in=None, records_out=0, suppressed=None,
        groups=facts.groups, min_size=0, median_size=0.0, mean_size=0.0, max_size=0,
        histogram=[], metrics=[], dropped_columns=[],
    )  # fmt: skip
    return ReleaseReport(
        facts=facts, verdict=_verdict(status, reasons, []), criteria=[], curve=None,
        skyline=None, composition=None, maxent=None, utility=utility, dp=section,
    )  # fmt: skip


def _with_path(report: Any, ref: str) -> Any:
    from dataclasses import replace

    return replace(report, facts=replace(report.facts, path=ref))


def checks_from_files(specs: Sequence[str]) -> list[Envelope]:
    """``--check [NAME=]FILE``: envelopes saved with ``--format json`` (strictly read).

    The text splits at its first ``=``: NAME never contains one, FILE may
    (``run=1/ck.json`` is the file ``1/ck.json`` named ``run``). A FILE whose path has an
    ``=`` therefore needs a NAME in front (``ck=dir=a/ck.json``, or ``=dir=a/ck.json``: an
    empty NAME); without a NAME the envelope's own name is used."""
    import json
    from pathlib import Path

    out: list[Envelope] = []
    names: set[str] = set()
    for spec in specs:
        name, sep, file = spec.partition("=")
        if not sep:
            name, file = "", spec
        elif not file:
            raise InputError(
                f"{opt('check')} expects [NAME=]FILE (NAME before the first '='), got {spec!r}"
            )
        name = name.strip()  # an empty NAME (``=FILE``): the envelope's own name
        from airflow_privacy.core.io import read_text

        text = read_text(Path(file), opt("check"), limit=64 << 20)
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, too many digits, depth
            reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise InputError(f"{opt('check')} file {file!r} is not JSON: {reason}") from None
        env = Envelope.from_dict(data, f"{opt('check')} file {file!r}")
        from airflow_privacy.gate.rules import verdict_problem

        problem = verdict_problem(data)
        if problem is not None:
            raise InputError(f"{opt('check')} file {file!r} is not a consistent report: {problem}")
        if name:
            from dataclasses import replace

            env = replace(env, name=name)
        if env.name in names:
            raise InputError(f"two checks are named {env.name!r}: use NAME=FILE")
        names.add(env.name)
        out.append(env)
    return out


def _table_report_args(req: ReportRequest, ctx: GateContext) -> dict[str, Any]:
    """A release table's counts (its ``GROUP BY`` in the database) and manifest file."""
    from airflow_privacy.core.composition.files import read_json
    from airflow_privacy.core.model import Bucketization
    from airflow_privacy.gate.tables import local_copy, sql_group_counts

    def counts(sensitive: str, groups: list[str]) -> Bucketization:
        ctx.progress(f"counting {req.release.describe()} in the database (GROUP BY)")
        rows = sql_group_counts(req.release, [*groups, sensitive], ctx)
        return Bucketization.from_counts(rows, groups, sensitive, missing_as=req.missing_as,
                                         source=req.release.describe())  # fmt: skip

    manifest = None
    if req.manifest is not None:
        with local_copy(req.manifest, ctx) as m:
            manifest = read_json(m, "manifest")
        if not isinstance(manifest, dict):
            raise InputError(f"manifest {req.manifest.describe()!r} is not a JSON object")
    return {"counts": counts, "manifest": manifest}


def _file_counts(path: Path, req: ReportRequest, ctx: GateContext) -> Any:
    """The counts of a release file: a large one (:func:`~airflow_privacy.core.backends.
    large`) by the backend ``auto`` picks for it, in bounded memory (DuckDB, or Arrow one
    row group at a time: only the per-group counts are held); else the in-process reader,
    with its checks and messages."""
    from airflow_privacy.core.backends import count_release, large
    from airflow_privacy.core.model import Bucketization, ReleaseSpec
    from airflow_privacy.report.build import read_counts

    def counts(sensitive: str, groups: list[str]) -> Bucketization:
        if large(path, req.fmt, [*groups, sensitive]):
            ctx.progress(f"counting {req.release.describe()} without reading it whole")
            spec = ReleaseSpec(sensitive=sensitive, group_columns=tuple(groups))
            return count_release(path, spec, requested="auto", fmt=req.fmt,
                                 delimiter=req.delimiter, missing_as=req.missing_as)[0]  # fmt: skip
        ctx.progress(f"reading {req.release.describe()}")
        return read_counts(path, sensitive, groups, req.missing_as, req.fmt, req.delimiter)

    return counts
