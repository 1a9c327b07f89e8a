"""Build a :class:`ReleaseReport` from a release file, its manifest and the checks' envelopes.

The release is read once and counted into its bucketization; on it the report computes
what no single check reports: the disclosure-vs-k curve of the worst-case engine (Martin
et al. 2007, section 3.3: :func:`disclosure_curve`, implications and negations), the privacy
skyline staircase at the chosen confidence (Chen et al. 2007, SkylineFind:
:func:`find_skyline`) and the group-size distribution. The composition audit (Ganta et al.
2008) and the MaxEnt estimate (Du et al. 2008) are taken from their checks' envelopes
(:class:`airflow_privacy.gate.envelope.Envelope`), chosen by their ``step``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow_privacy.core.redaction import redact
from airflow_privacy.errors import InputError, opt
from airflow_privacy.report import checks as ck
from airflow_privacy.report.model import (
    STATUSES,
    CriterionRow,
    CurvePoint,
    CurveSection,
    Heatmap,
    HeatmapRow,
    MaxEntSection,
    Metric,
    ReleaseFacts,
    ReleaseReport,
    SizeBin,
    SkylineSection,
    UtilitySection,
    Verdict,
)
from airflow_privacy.report.risk import first_risk, identity_section
from airflow_privacy.report.values import as_float, as_list, as_whole, size_bins

if TYPE_CHECKING:
    from airflow_privacy.core.io import Format
    from airflow_privacy.core.model import Bucketization
    from airflow_privacy.gate.envelope import Envelope

K_MAX_CAP = 10  # default largest k of the curve: min(values - 1, 10)
K_MAX_LIMIT = 1000  # the largest k a report's curve may ask for
SKYLINE_BOUND = 5  # default max l, k, m of the staircase (raised to cover checked points)
SKYLINE_CAP = 10
DEFAULT_C = 0.9  # the skyline's confidence when no check names one
HEATMAP_ROWS = 10

METRIC_MEANINGS: dict[str, str] = {
    "discernibility": "sum of squared group sizes (records squared); lower is better",
    "average-class-size": "records per group; lower is better",
    "precision": "Sweeney's precision, 0 to 1; higher is better",
    "loss": "Iyengar's loss metric, 0 = nothing generalized to 1 = all suppressed",
    "non-uniform-entropy": "information lost by generalizing (bits); lower is better",
    "qi-spread": "loss metric of the buckets' QI ranges, 0 to 1; lower is better",
    "reconstruction-error": "Anatomy reconstruction error per record, 0 to 1; lower is better",
}

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


def read_manifest(release: Path) -> dict[str, Any] | None:
    """``<release>.manifest.json`` beside the release, when present."""
    from airflow_privacy.core.composition.files import manifest_beside, read_json

    p = manifest_beside(release)
    if p is None:
        return None
    data = read_json(p, "manifest")  # a regular file of bounded size, strictly JSON
    if not isinstance(data, dict):
        raise InputError(f"manifest {str(p)!r} is not a JSON object")
    return data


def build_release_report(
    release: str | Path,
    *,
    sensitive: str | None = None,
    group_columns: Sequence[str] | None = None,
    dataset: str | None = None,
    version: str | None = None,
    release_id: int | None = None,
    status: str = "checked",
    reasons: Sequence[str] = (),
    checks: Sequence[Envelope] = (),
    c: float | None = None,
    k_max: int | None = None,
    skyline_c: float | None = None,
    progress: Progress | None = None,
    missing_as: str | None = None,
    fmt: Format | None = None,
    delimiter: str | None = None,
    counts: Callable[[str, list[str]], Bucketization] | None = None,
    manifest: Mapping[str, Any] | None = None,
    identity: Mapping[str, Any] | None = None,
) -> ReleaseReport:
    """The report of ``release`` (module doc). ``checks``: the envelopes of the checks;
    ``reasons`` say why the release was not published (they lead). Blank sensitive cells are
    refused, or counted as ``missing_as`` (as the check that saw them counted them).
    ``fmt`` and ``delimiter``: the file's format and CSV delimiter (default: from its name,
    detected). ``counts(sensitive, group_columns)``: the release's per-group counts from
    where it lives (a SQL table's ``GROUP BY``), instead of reading the file ``release``;
    ``manifest``: its manifest, instead of the one beside the file."""
    say = progress or _quiet
    checks = list(checks)
    if status not in STATUSES:
        raise InputError(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
    _check_params(c, k_max, skyline_c)
    path = Path(release)
    from airflow_privacy.core.io import is_regular_file

    if manifest is None and is_regular_file(path):  # a release table has no file beside it
        manifest = read_manifest(path)
    m = dict(manifest or {})
    sens = sensitive or m.get("sensitive")
    if not sens:
        raise InputError(
            f"which column of {path.name} is sensitive? pass sensitive= (no manifest beside it)"
        )
    groups = list(group_columns or m.get("group_columns") or m.get("qis") or [])
    if not groups:
        raise InputError(
            f"which columns of {path.name} define its groups? pass group_columns= "
            "(no manifest beside it)"
        )
    qis = [str(q) for q in m.get("qis") or groups]
    if counts is not None:
        b = counts(str(sens), groups)
    else:
        say(f"reading {path}")
        b = read_counts(path, str(sens), groups, missing_as, fmt, delimiter)
    # the benign values the checks assumed: the curve and skyline then show what they judged
    b = b.with_benign(v for p in _params_of(checks, m, ("ck-safety", "negation-safety", "skyline"))
                      for v in (p.get("benign") or ()))  # fmt: skip
    say(f"{b.n_records:,} records in {b.n_groups:,} groups, {len(b.values)} sensitive values")

    rows = _criteria_rows(m, checks)
    facts = ReleaseFacts(
        path=str(path),
        dataset=dataset,
        version=None if version is None else str(version),
        release_id=None if release_id is None else int(release_id),
        records=b.n_records,
        groups=b.n_groups,
        sensitive=str(sens),
        sensitive_values=len(b.values),
        group_columns=[str(g) for g in groups],
        qis=qis,
        method=m.get("method"),
        generated=datetime.now(UTC).replace(microsecond=0).isoformat(),
        tool_version=_version(),
    )
    verdict = _verdict(status, reasons, rows)
    forward = [
        redact(f"{env.name}: {a.get('text')}")
        for env in checks
        if env.safe is not True
        for a in env.advice
    ]
    if forward:
        verdict = replace(verdict, advice=forward)
    notes: dict[str, str] = {}

    curve_c = (
        c if c is not None else _first_param(checks, m, _section_criteria("disclosure-curve"), "c")
    )
    k_top = _k_max(b, k_max, checks, m)
    say(f"disclosure curve up to k = {k_top}")
    curve = _curve(b, k_top, curve_c)

    sky_c = skyline_c if skyline_c is not None else _skyline_c(checks, m, curve_c)
    bounds = _skyline_bounds(checks, m)
    say(f"skyline staircase at c = {sky_c:g} within (l, k, m) <= {tuple(bounds)}")
    skyline = _skyline(b, sky_c, bounds)

    composition = None
    maxent = None
    for env in checks:
        if env.outcome == "already-published":
            continue
        if env.step == "audit" and composition is None:
            composition = ck.composition_section(env)
        elif env.step == "maxent" and maxent is None:
            maxent = _maxent(env)
    if composition is None:
        notes["composition"] = "not run: no composition audit was recorded for this release"
    if maxent is None:
        notes["maxent"] = "not run: no MaxEnt estimate was recorded for this release"
    utility = _utility(b, m)
    # the risk analysis among the checks, else the identity risk the attempt recorded
    risk = first_risk(checks) or identity_section(dict(identity) if identity else None)
    say("report built")
    return ReleaseReport(
        facts=facts,
        verdict=verdict,
        criteria=rows,
        curve=curve,
        skyline=skyline,
        composition=composition,
        maxent=maxent,
        utility=utility,
        notes=notes,
        risk=risk,
    )


# --------------------------------------------------------------------------- inputs
def _check_params(c: float | None, k_max: int | None, skyline_c: float | None) -> None:
    for name, v in (("c", c), ("skyline_c", skyline_c)):
        if v is not None and (
            isinstance(v, bool) or not isinstance(v, int | float) or not 0 < float(v) <= 1
        ):
            raise InputError(f"{opt(name)} must be in (0, 1], got {v!r}")
    if k_max is not None and (
        isinstance(k_max, bool) or not isinstance(k_max, int) or not 0 <= k_max <= K_MAX_LIMIT
    ):
        raise InputError(
            f"{opt('k_max')} must be a whole number in [0, {K_MAX_LIMIT}], got {k_max!r}"
        )


def read_counts(
    path: Path,
    sensitive: str,
    groups: Sequence[str],
    missing_as: str | None = None,
    fmt: Format | None = None,
    delimiter: str | None = None,
) -> Bucketization:
    from airflow_privacy.core.cells import describe_columns
    from airflow_privacy.core.io import column_names, read_release
    from airflow_privacy.core.model import Bucketization, ReleaseSpec

    spec = ReleaseSpec(sensitive=sensitive, group_columns=tuple(groups))
    present = column_names(path, fmt, delimiter)
    for col, role in ((sensitive, "sensitive column"), *((g, "group column") for g in groups)):
        if col not in present:
            raise InputError(
                f"{role} {col!r} does not exist in {path.name} "
                f"(columns: {describe_columns(present)})"
            )
    # blank sensitive cells are refused (or published as ``missing_as``), as by every reader
    table = read_release(
        path, [*groups, sensitive], fmt, delimiter, sensitive=sensitive, missing_as=missing_as
    )
    return Bucketization.from_arrow(table, spec)


def _version() -> str:
    from airflow_privacy import __version__

    return __version__


# ------------------------------------------------------------------- criteria/verdict
def _criteria_rows(m: Mapping[str, Any], checks: Sequence[Envelope]) -> list[CriterionRow]:
    rows = [
        ck.criterion_row("anonymizer (manifest)", r)
        for r in m.get("criteria_results") or []
        if isinstance(r, Mapping)
    ]
    for env in checks:
        rows.extend(ck.rows_of(env))
    return rows


def _verdict(status: str, reasons: Sequence[str], rows: Sequence[CriterionRow]) -> Verdict:
    failed = [r for r in rows if r.passed is not True]
    given = [redact(str(r)) for r in reasons if str(r).strip()]
    if status in ("blocked", "not-published") and not given:
        given = [f"{r.source}: {r.criterion}: {r.witness}" for r in failed]
        if not given:
            given = ["not published, but no reason was recorded"]
    headline = {
        "published": "PUBLISHED: the release passed every check and was published",
        "blocked": "BLOCKED: the release was not published",
        "not-published": "NOT PUBLISHED: the gate did not publish this release",
        "candidate": "CANDIDATE: the release awaits the gate's decision (not published)",
        "checked": (
            "CHECKED (not a publication decision): every criterion evaluated passed"
            if not failed and rows
            else "CHECKED (not a publication decision): nothing was evaluated"
            if not rows
            else f"CHECKED (not a publication decision): {len(failed)} of {len(rows)} "
            "criteria did not pass"
        ),
    }[status]
    return Verdict(
        status=status,
        headline=headline,
        reasons=given,
        checks_run=len(rows),
        checks_failed=len(failed),
    )


# -------------------------------------------------------------------------- curve
def _section_criteria(section: str) -> tuple[str, ...]:
    """The criteria whose recorded parameters set report section ``section``
    (``Criterion.report_section``)."""
    from airflow_privacy.core.criteria.registry import CRITERIA

    return tuple(name for name, cls in CRITERIA.items() if cls.report_section == section)


def _params_of(checks: Sequence[Envelope], m: Mapping[str, Any], names: Sequence[str]) -> list[Any]:
    """The parameters of every criterion named ``names`` in the manifest and the checks."""
    out: list[Any] = []
    for crit in as_list(m.get("criteria")):
        if isinstance(crit, Mapping) and crit.get("name") in names:
            out.append(crit.get("parameters") or {})
    for env in checks:
        for r in env.results:
            if r.get("criterion") in names:
                out.append(r.get("parameters") or {})
    return [p for p in out if isinstance(p, Mapping)]


def _first_param(
    checks: Sequence[Envelope], m: Mapping[str, Any], names: Sequence[str], key: str
) -> float | None:
    for params in _params_of(checks, m, names):
        v = as_float(params.get(key))
        if v is not None and (v >= 0 if key == "k" else 0 < v <= 1):
            return v
    return None


def _k_max(b: Bucketization, k_max: int | None, checks: Sequence[Envelope], m: Any) -> int:
    if k_max is not None:
        return int(k_max)
    top = min(max(len(b.values) - 1, 0), K_MAX_CAP)
    checked = _first_param(checks, m, _section_criteria("disclosure-curve"), "k")
    if checked is not None:
        top = max(top, min(int(checked), K_MAX_LIMIT))
    return top


def _curve(b: Bucketization, k_max: int, c: float | None) -> CurveSection:
    from airflow_privacy.core.criteria.worst_case import describe_witness, disclosure_curve

    pts = disclosure_curve(b, k_max)
    last = pts[-1].implications
    return CurveSection(
        k_max=k_max,
        c=None if c is None else float(c),
        points=[
            CurvePoint(
                k=p.k,
                implications=float(p.implications.max_disclosure),
                negations=float(p.negations.max_disclosure),
            )
            for p in pts
        ],
        witness=f"at k = {k_max}: {describe_witness(b, last)}",
    )


# ------------------------------------------------------------------------- skyline
def _skyline_points(checks: Sequence[Envelope], m: Mapping[str, Any]) -> list[Any]:
    """The recorded skyline points, each read by the one parser of a point (the skyline
    parameter's kind); a point that does not read as one is skipped (a report shows what
    was recorded and never fails on it)."""
    from airflow_privacy.core.criteria.base import parse_points

    out = []
    for params in _params_of(checks, m, _section_criteria("skyline")):
        for p in as_list(params.get("points")):
            try:
                ((lv, kv, mv, c),) = parse_points("skyline", [p])
            except InputError:
                continue
            out.append([min(x, SKYLINE_CAP) for x in (lv, kv, mv)] + [c])
    return out


def _skyline_c(checks: Sequence[Envelope], m: Mapping[str, Any], c: float | None) -> float:
    pts = _skyline_points(checks, m)
    if pts:
        return float(pts[0][3])
    return float(c) if c is not None else DEFAULT_C


def _skyline_bounds(checks: Sequence[Envelope], m: Mapping[str, Any]) -> list[int]:
    bounds = [SKYLINE_BOUND] * 3
    for p in _skyline_points(checks, m):
        for i in range(3):
            bounds[i] = min(SKYLINE_CAP, max(bounds[i], p[i] + 1))
    return bounds


def _skyline(b: Bucketization, c: float, bounds: Sequence[int]) -> SkylineSection:
    from airflow_privacy.core.criteria.skyline import describe_breach, find_skyline

    res = find_skyline(b, c, *bounds)
    example = None
    if res.unsafe_example is not None:
        ex = res.unsafe_example
        example = (
            f"(l, k, m) = ({ex.l}, {ex.k}, {ex.m}): breach {ex.breach:.4g}: "
            + describe_breach(b, ex)
        )
    return SkylineSection(
        c=float(c),
        bounds=[int(x) for x in res.bounds],
        points=[[int(x) for x in p] for p in res.points],
        breaches=[float(r.breach) for r in res.breaches],
        staircase=[[int(x) for x in row] for row in res.staircase],
        evaluations=int(res.evaluations),
        unsafe_example=example,
    )


# -------------------------------------------------------------------------- maxent
def _maxent(env: Envelope) -> MaxEntSection:
    from dataclasses import replace

    sec = ck.maxent_section(env)
    hm = env.details.get("heatmap")
    if isinstance(hm, Mapping):
        return replace(sec, heatmap=_heatmap(hm, f"{env.name}: P*(s | q) under its knowledge"))
    return replace(sec, heatmap_note="the estimate carries no P*(s | q) rows to draw")


def _heatmap(hm: Mapping[str, Any], source: str) -> Heatmap:
    """The heatmap of an envelope, by rank (as
    :func:`~airflow_privacy.report.maxent.maxent_heatmap` writes it): rows of an older
    envelope, whose columns were sensitive values, are sorted and their columns named by
    rank, so the report never says which value a QI value is likely to hold."""
    from airflow_privacy.report.maxent import rank_label

    values = [str(v) for v in as_list(hm.get("values"))]
    ranked = hm.get("ranked") is True
    rows = []
    for r in as_list(hm.get("rows")):
        if not isinstance(r, Mapping):
            continue
        posterior = [as_float(x) for x in as_list(r.get("posterior"))]
        if len(posterior) != len(values) or any(x is None or not 0 <= x <= 1 for x in posterior):
            continue  # a row the report cannot draw (an envelope written by hand)
        cells = [float(x) for x in posterior if x is not None]
        rows.append(
            HeatmapRow(
                label=str(r.get("label", "?")),
                records=as_whole(r.get("records")) or 0,
                posterior=cells if ranked else sorted(cells, reverse=True),
            )
        )
    if not ranked:
        values = [rank_label(j) for j in range(len(values))]
    return Heatmap(values=values, rows=rows, source=source)


def _utility(b: Bucketization, m: Mapping[str, Any]) -> UtilitySection:
    import numpy as np

    sizes = np.asarray(b.sizes, dtype=np.int64)
    lo, hi = int(sizes.min()), int(sizes.max())
    hist = []
    for low, high in size_bins(hi):
        if high < lo:
            continue
        sel = (sizes >= low) & (sizes <= high)
        hist.append(SizeBin(low, high, int(sel.sum()), int(sizes[sel].sum())))
    util = m.get("utility") if isinstance(m.get("utility"), Mapping) else {}
    assert isinstance(util, Mapping)
    metrics = [
        Metric(str(k), ck._num(v), METRIC_MEANINGS.get(str(k), "as the anonymizer reports it"))
        for k, v in util.items()
    ]
    return UtilitySection(
        method=m.get("method"),
        records_in=m.get("records_in"),
        records_out=b.n_records,
        suppressed=m.get("suppressed"),
        groups=b.n_groups,
        min_size=lo,
        median_size=float(statistics.median(sizes.tolist())),
        mean_size=float(sizes.mean()),
        max_size=hi,
        histogram=hist,
        metrics=metrics,
        dropped_columns=[str(x) for x in m.get("dropped_columns") or []],
    )
