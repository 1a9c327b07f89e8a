"""The release report as one self-contained, accessible HTML5 document.

The verdict comes first (a blocked release's report opens with the reason), then the
criteria with their numbers, the disclosure-vs-k curve, the skyline staircase, the
composition audit, the MaxEnt posteriors and the utility of the release. Charts are inline
SVG (:mod:`.svg`) with a title, a description and an adjacent data table; CSS is inline;
nothing is loaded from anywhere (no script, no link, no font, no image). Every string that
comes from data is escaped. A section that did not run says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from airflow_privacy.report import svg
from airflow_privacy.report.dp import render_dp
from airflow_privacy.report.model import (
    CompositionSection,
    CriterionRow,
    CurveSection,
    MaxEntSection,
    Number,
    ReleaseReport,
    SkylineSection,
    UtilitySection,
)
from airflow_privacy.report.risk_html import render_risk
from airflow_privacy.report.svg import e
from airflow_privacy.report.theme import dark_css

CSS = """
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1a1a1a; background: #ffffff; margin: 0 auto; max-width: 62rem; padding: 1rem 1.5rem; }
h1 { font-size: 1.6rem; margin: 0.5rem 0; }
h2 { font-size: 1.3rem; border-bottom: 2px solid #1a1a1a; margin-top: 2.2rem; }
h3 { font-size: 1.05rem; margin-top: 1.4rem; }
table { border-collapse: collapse; margin: 0.6rem 0; font-size: 0.92rem; }
th, td { border: 1px solid #8a8a8a; padding: 0.25rem 0.5rem; text-align: left;
  vertical-align: top; }
th { background: #eeeeee; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.verdict { border: 3px solid #1a1a1a; padding: 0.8rem 1rem; margin: 1rem 0; }
.verdict.blocked { border-style: double; border-width: 6px; }
.verdict p.lead { font-size: 1.15rem; font-weight: 600; margin: 0 0 0.4rem; }
.tag { font-weight: 700; letter-spacing: 0.04em; }
.fail { font-weight: 700; }
.fail::before { content: "\\2716\\00a0"; }
.pass::before { content: "\\2714\\00a0"; }
.notrun { font-style: italic; border-left: 4px solid #8a8a8a; padding-left: 0.6rem; }
figure { margin: 0.8rem 0; overflow-x: auto; }
figcaption { font-size: 0.9rem; }
svg.chart { max-width: 100%; height: auto; font: 12px system-ui, sans-serif; }
svg .small { font-size: 11px; }
svg .tiny { font-size: 10px; }
details { margin: 0.4rem 0 1rem; }
summary { cursor: pointer; font-weight: 600; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
code { font-size: 0.9em; }
@media print { details { display: block; } summary { display: none; } }
""" + dark_css([
    ("body", "color: #e4e6ea; background: #16191d;"),
    ("h2, .verdict", "border-color: #e4e6ea;"),
    ("th", "background: #2a2f36;"),
    ("th, td, .notrun", "border-color: #5d646e;"),
    ("a", "color: #8ab4f8;"),
    ("a:visited", "color: #c58af9;"),
    # the charts keep their ink on a light card
    ("figure svg.chart, svg.chart", "background: #ffffff; color: #1a1a1a; border-radius: 4px;"),
])  # fmt: skip


def render_html(report: ReleaseReport) -> str:
    """The report as one complete HTML5 document (UTF-8, ``lang="en"``)."""
    f = report.facts
    name = f.dataset or f.path.rsplit("/", 1)[-1]
    if f.version:
        name += f" v{f.version}"
    status = report.verdict.status.upper()
    body = [
        "<header>",
        f"<h1>Release report: {e(name)}</h1>",
        "</header>",
        "<main>",
        _verdict(report),
        *([render_dp(report.dp), "</main>"] if report.dp is not None else []),
    ]
    if report.dp is None:
        body += [
            _facts(report),
            _criteria(report.criteria),
            _curve(report.curve, report.notes.get("curve")),
            _skyline(report.skyline, report.notes.get("skyline")),
            _composition(report.composition, report.notes.get("composition")),
            _maxent(report.maxent, report.notes.get("maxent")),
            *([render_risk(report.risk)] if report.risk is not None else []),
            _utility(report.utility),
            _reading(),
            "</main>",
        ]
    body += [
        f"<footer><p>Generated {e(f.generated)} by airflow-privacy {e(f.tool_version)}. "
        "This document is self-contained: it loads nothing from the network.</p></footer>",
    ]
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{e(status)}: release report {e(name)}</title>\n"
        f"<style>{CSS}</style>\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )


# ------------------------------------------------------------------------- helpers
def _num(v: Number, fmt: str = ".4g") -> str:
    if v is None:
        return "—"
    if isinstance(v, str):
        return "∞" if v == "inf" else ("−∞" if v == "-inf" else e(v))
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    if abs(v) >= 1e4:
        return f"{v:,.0f}"
    return format(v, fmt)


def _pct(v: float | None, digits: int = 2) -> str:
    return "—" if v is None else f"{v:.{digits}f}%"


def _prob(v: float | None) -> str:
    return "—" if v is None else f"{v:.4f}"


def _conf(c: float) -> str:
    p = c * 100
    return f"{p:.0f}%" if abs(p - round(p)) < 1e-9 else f"{p:.4g}%"


def _passed(p: bool | None) -> str:
    if p is None:
        return "<span>not decided</span>"
    return '<span class="pass">passed</span>' if p else '<span class="fail">FAILED</span>'


def _table(
    caption: str, head: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()
) -> str:
    """A table whose cells are already escaped HTML; ``numeric`` columns align right."""
    ths = "".join(
        f'<th scope="col"{" class=num" if i in numeric else ""}>{h}</th>'
        for i, h in enumerate(head)
    ).replace(" class=num", ' class="num"')
    out = [f"<table><caption>{caption}</caption><thead><tr>{ths}</tr></thead><tbody>"]
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            if i == 0:
                cells.append(f'<th scope="row">{c}</th>')
            else:
                cls = ' class="num"' if i in numeric else ""
                cells.append(f"<td{cls}>{c}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _details(summary: str, inner: str, open_: bool = False) -> str:
    return f"<details{' open' if open_ else ''}><summary>{summary}</summary>{inner}</details>"


def _section(sid: str, title: str, inner: Sequence[str]) -> str:
    return (
        f'<section id="{sid}" aria-labelledby="{sid}-h">\n<h2 id="{sid}-h">{title}</h2>\n'
        + "\n".join(inner)
        + "\n</section>"
    )


def _not_run(text: str | None, default: str) -> str:
    return f'<p class="notrun">{e(text or default)}</p>'


# ------------------------------------------------------------------------ sections
def _verdict(r: ReleaseReport) -> str:
    v = r.verdict
    blocked = v.status in ("blocked", "not-published")
    inner: list[str] = []
    if blocked:
        first = v.reasons[0] if v.reasons else "no reason was recorded"
        tag = "BLOCKED" if v.status == "blocked" else "NOT PUBLISHED"
        inner.append(
            f'<p class="lead"><span class="tag">{tag}</span>: nothing was published. '
            f"Reason: {e(first)}</p>"
        )
    else:
        inner.append(f'<p class="lead">{e(v.headline)}</p>')
    if v.reasons and (len(v.reasons) > 1 or not blocked):
        items = "".join(f"<li>{e(x)}</li>" for x in v.reasons)
        inner.append(f"<p>Every reason given:</p><ol>{items}</ol>")
    if v.advice:
        items = "".join(f"<li>{e(x)}</li>" for x in v.advice)
        inner.append(
            '<p id="way-forward">The way forward (each change re-checked before it is '
            f"suggested):</p><ul>{items}</ul>"
        )
    failed = [c for c in r.criteria if c.passed is not True]
    inner.append(
        f"<p>{int(v.checks_run)} criteria evaluated, {int(v.checks_failed)} did not pass"
        + (
            ": "
            + ", ".join(
                f"{e(c.criterion)} ({e(c.source)}"
                + (", no verdict" if c.passed is None else "")
                + ")"
                for c in failed
            )
            + "."
            if failed
            else "."
        )
        + "</p>"
    )
    cls = "verdict blocked" if blocked else "verdict"
    return (
        f'<section id="verdict" class="{cls}" aria-labelledby="verdict-h">\n'
        f'<h2 id="verdict-h">Verdict: {e(v.status.upper())}</h2>\n'
        + "\n".join(inner)
        + "\n</section>"
    )


def _facts(r: ReleaseReport) -> str:
    f = r.facts
    items = [
        ("Dataset", e(f.dataset or "—")),
        ("Version", e(f.version or "—")),
        ("Ledger release", "—" if f.release_id is None else f"#{int(f.release_id)}"),
        ("Release file", f"<code>{e(f.path)}</code>"),
        ("Records", f"{f.records:,} records"),
        ("Groups", f"{f.groups:,} groups (by {e(', '.join(f.group_columns))})"),
        ("Quasi-identifiers", e(", ".join(f.qis))),
        ("Sensitive column", f"{e(f.sensitive)} ({f.sensitive_values} distinct values)"),
        ("Method", e(f.method or "not recorded (no manifest)")),
        ("Generated", e(f.generated)),
    ]
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items)
    return _section("release", "The release", [f'<dl class="facts">{dl}</dl>'])


def _criteria(rows: Sequence[CriterionRow]) -> str:
    if not rows:
        return _section(
            "criteria",
            "Criteria and their numbers",
            [_not_run(None, "not run: no check was given and the release has no manifest")],
        )
    body = [
        [
            e(x.criterion),
            _passed(x.passed),
            f"{_num(x.value)}<br><small>{e(x.measure)}</small>",
            e(x.threshold),
            e(x.source),
            e(x.witness),
        ]
        for x in rows
    ]
    table = _table(
        "Each criterion: the number the release achieves against the required threshold, "
        "and the witness (where the release is weakest) in words",
        ["Criterion", "Result", "Number", "Threshold", "Checked by", "Witness"],
        body,
        numeric=(2,),
    )
    return _section("criteria", "Criteria and their numbers", [table])


def _curve(c: CurveSection | None, note: str | None) -> str:
    title = "Disclosure against k pieces of background knowledge"
    if c is None:
        return _section("curve", title, [_not_run(note, "not run")])
    xs = [p.k for p in c.points]
    imp = [p.implications for p in c.points]
    neg = [p.negations for p in c.points]
    thr = (c.c, f"c = {c.c:g}") if c.c is not None else None
    desc = (
        f"Maximum disclosure (probability) for k = 0 to {c.k_max}: implications "
        + ", ".join(f"{v:.3g}" for v in imp)
        + "; negated atoms "
        + ", ".join(f"{v:.3g}" for v in neg)
        + (f". Threshold c = {c.c:g}." if c.c is not None else ".")
    )
    chart = svg.line_chart(
        "curve-chart",
        "Maximum disclosure vs. k (implications and negations)",
        desc,
        xs,
        [svg.Series("implications", imp), svg.Series("negations", neg)],
        x_label="k: pieces of background knowledge",
        y_label="maximum disclosure (probability)",
        threshold=thr,
    )
    rows = [
        [
            str(p.k),
            f"{p.implications:.4f}",
            f"{p.negations:.4f}",
            "—"
            if c.c is None
            else ("below c" if p.implications < c.c else '<span class="fail">reaches c</span>'),
        ]
        for p in c.points
    ]
    table = _table(
        "Maximum disclosure (probability) by k",
        ["k", "implications", "negated atoms", "implications vs. c"],
        rows,
        numeric=(1, 2),
    )
    unsafe = [p.k for p in c.points if c.c is not None and p.implications >= c.c]
    lead = (
        "<p>The worst-case engine (Martin et al. 2007) on this release: an adversary who "
        "knows k basic implications (solid line, round markers) or k negated atoms "
        "(dashed line, square markers) about the people in it. "
        + (
            f"From k = {unsafe[0]} on, the disclosure reaches c = {c.c:g}."
            if unsafe
            else (
                f"Up to k = {c.k_max} the disclosure stays below c = {c.c:g}."
                if c.c is not None
                else ""
            )
        )
        + "</p>"
    )
    return _section(
        "curve",
        title,
        [
            lead,
            f"<figure>{chart}<figcaption>Maximum disclosure (probability, 0 to 1) against k; "
            "the dotted horizontal line is the threshold c. Where the two lines coincide, the "
            "round markers sit inside the square ones.</figcaption></figure>",
            table,
            f"<p>Witness: {e(c.witness)}</p>",
        ],
    )


def _skyline(s: SkylineSection | None, note: str | None) -> str:
    title = "Privacy skyline"
    if s is None:
        return _section("skyline", title, [_not_run(note, "not run")])
    max_l, max_k, max_m = s.bounds
    ks = list(range(max_k + 1))
    series = [
        svg.Series(f"l = {li}", [m if m >= 0 else None for m in row])
        for li, row in enumerate(s.staircase)
        if any(m >= 0 for m in row)
    ]
    desc = (
        f"For each l (values the target is known not to have), the largest m (people known "
        f"to share the target's value if anyone does) that keeps the breach below "
        f"c = {s.c:g}, by k (other people's values known). Maximal safe points: "
        + ("; ".join(f"({p[0]}, {p[1]}, {p[2]})" for p in s.points) or "none")
        + "."
    )
    inner = [
        f"<p>SkylineFind (Chen et al. 2007) at confidence c = {s.c:g}, within l &le; {max_l}, "
        f"k &le; {max_k}, m &le; {max_m}: the release is safe against every adversary whose "
        f"knowledge (l, k, m) lies on or below the staircase.</p>"
    ]
    if series:
        chart = svg.line_chart(
            "skyline-chart",
            f"Skyline staircase at c = {s.c:g}: largest safe m by k, one line per l",
            desc,
            ks,
            series,
            x_label="k: other people's values known",
            y_label="largest safe m",
            y_max=float(max(1, max_m)),
            step=True,
        )
        inner.append(
            f"<figure>{chart}<figcaption>One step line per l (its own dash pattern and "
            "marker); a missing point means no m is safe.</figcaption></figure>"
        )
    else:
        inner.append(f"<p><strong>No (l, k, m) is safe at c = {s.c:g}</strong>, not even "
                     "(0, 0, 0).</p>")  # fmt: skip
    rows = [
        [f"l = {li}", *[str(m) if m >= 0 else "none" for m in row]]
        for li, row in enumerate(s.staircase)
    ]
    inner.append(
        _table(
            f"Largest safe m for each l (rows) and k (columns) at c = {s.c:g}",
            ["l \\ k", *[f"k = {k}" for k in ks]],
            rows,
            numeric=tuple(range(1, len(ks) + 1)),
        )
    )
    pts = [
        [f"({p[0]}, {p[1]}, {p[2]})", f"{b:.4f}"] for p, b in zip(s.points, s.breaches, strict=True)
    ]
    inner.append(
        _table(
            "Maximal safe points and their breach (probability)",
            ["(l, k, m)", "maximum breach"],
            pts or [["none", "—"]],
            numeric=(1,),
        )
    )
    if s.unsafe_example:
        inner.append(f"<p>One step further: {e(s.unsafe_example)}</p>")
    return _section("skyline", title, inner)


def _composition(s: CompositionSection | None, note: str | None) -> str:
    title = "Composition audit"
    if s is None:
        return _section("composition", title, [_not_run(note, "not run")])
    inner = [
        f"<p>{_passed(s.passed)} ({e(s.source)}): {e(s.summary)}</p>",
    ]
    if s.note:
        inner.append(f"<p>{e(s.note)}</p>")
    facts = []
    if s.confidence is not None:
        facts.append(f"gate at confidence C = {_conf(s.confidence)}")
    if s.max_pvp is not None:
        facts.append(f"limit {s.max_pvp:g}% of the overlap")
    if s.measure:
        facts.append(f"measure {e(s.measure)}")
    if s.overlap:
        facts.append(f"{e(s.overlap)} overlap")
    if s.population is not None:
        facts.append(f"{s.population:,} people in the candidate")
    if s.overlap_size is not None:
        facts.append(f"{s.overlap_size:,} also in an earlier release")
    if s.vp is not None:
        facts.append(f"{s.vp:,} lose effective anonymity (VP)")
    if facts:
        inner.append("<p>" + "; ".join(facts) + ".</p>")
    if s.pvp:
        labels = [_conf(r.confidence) for r in s.pvp]
        series = [svg.Series("C_i = 1/|S_i|", [r.pvp for r in s.pvp])]
        if any(r.posterior_pvp is not None for r in s.pvp):
            series.append(svg.Series("posterior", [r.posterior_pvp for r in s.pvp]))
        desc = "Share of the overlap pinned down with confidence at least C: " + "; ".join(
            f"C = {lab}: {r.pvp:.2f}%" for lab, r in zip(labels, s.pvp, strict=True)
        )
        chart = svg.bar_chart(
            "pvp-chart",
            "Vulnerable population (PVP_C, % of the overlap) by confidence level",
            desc,
            labels,
            series,
            x_label="confidence level C",
            y_label="% of the overlap",
            value_format=".2f",
            unit="%",
        )
        inner.append(
            f"<figure>{chart}<figcaption>PVP_C: the share of the people in the candidate and an "
            "earlier release whom the intersection attack pins to one sensitive value with "
            "confidence at least C (solid: Ganta's C_i; hatched: the frequency-aware "
            "posterior).</figcaption></figure>"
        )
        rows = [
            [
                _conf(r.confidence),
                f"{r.vp:,} people",
                _pct(r.pvp),
                "—" if r.posterior_vp is None else f"{r.posterior_vp:,} people",
                _pct(r.posterior_pvp),
                _pct(r.alone_pvp),
            ]
            for r in s.pvp
        ]
        inner.append(
            _table(
                "Vulnerable population by confidence level",
                [
                    "C",
                    "VP_C (C_i)",
                    "PVP_C (C_i)",
                    "VP_C (posterior)",
                    "PVP_C (posterior)",
                    "PVP_C of the candidate alone",
                ],
                rows,
                numeric=(1, 2, 3, 4, 5),
            )
        )
    if s.releases:
        inner.append(
            _table(
                "Releases intersected",
                ["Release", "Role", "Records", "Groups"],
                [[e(r.name), e(r.role), _num(r.records), _num(r.groups)] for r in s.releases],
                numeric=(2, 3),
            )
        )
    if s.worst:
        rows = [
            [
                e(w.id),
                _conf(w.confidence),
                _prob(w.posterior),
                _num(w.ea_hat),
                _num(w.anon_drop),
                e(
                    " + ".join(
                        f"{r.release} ({r.ea} value{'s' if r.ea != 1 else ''} left)"
                        if r.ea is not None
                        else r.release
                        for r in w.releases
                    )
                ),
            ]
            for w in s.worst
        ]
        inner.append("<h3>Worst individuals</h3>")
        inner.append(
            "<p>By the pseudonymous row number the audit gives them (their values are not "
            "shown; the confidential per-individual file of <code>airflow-privacy audit "
            "--individuals</code> has them).</p>"
        )
        inner.append(
            _table(
                "Worst individuals: confidence, and the releases whose intersection pins them",
                [
                    "Individual",
                    "Confidence C_i",
                    "Posterior (probability)",
                    "EA-hat (values)",
                    "Anonymity drop (values)",
                    "Releases combined",
                ],
                rows,
                numeric=(1, 2, 3, 4),
            )
        )
    elif s.passed is not None:
        inner.append("<p>No individual is listed as breached.</p>")
    return _section("composition", title, inner)


def _maxent(s: MaxEntSection | None, note: str | None) -> str:
    title = "MaxEnt posteriors"
    if s is None:
        return _section("maxent", title, [_not_run(note, "not run")])
    inner = [f"<p>{_passed(s.passed)} ({e(s.source)}): {e(s.summary)}</p>"]
    facts = [f"largest posterior P*(s | q) = {s.max_posterior:.4f} (probability)"]
    if s.threshold is not None:
        facts.append(f"threshold c = {s.threshold:g}")
    if s.knowledge is not None:
        facts.append(f"{s.knowledge} piece(s) of background knowledge")
    if s.accuracy is not None:
        facts.append(f"estimation accuracy {s.accuracy:.4f} nats (weighted KL; lower = closer)")
    if s.people:
        facts.append(
            f"{s.people} named people in the knowledge (not listed)"
            + (
                f", largest posterior about one of them {s.people_max_posterior:.4f}"
                if s.people_max_posterior is not None
                else ""
            )
        )
    inner.append("<p>" + "; ".join(facts) + ".</p>")
    if s.top:
        labels = [a.label for a in s.top]
        chart = svg.hbar_chart(
            "maxent-top-chart",
            "QI values most at risk: largest MaxEnt posterior",
            "Posterior of the most likely sensitive value for the QI values most at risk: "
            + "; ".join(f"{a.label}: {a.posterior:.3f}" for a in s.top),
            [a.label for a in s.top],
            [a.posterior for a in s.top],
            threshold=(s.threshold, f"c = {s.threshold:g}") if s.threshold is not None else None,
        )
        inner.append(
            f"<figure>{chart}<figcaption>Each bar: a QI value of the release and the posterior "
            "probability of its most likely sensitive value (which value that is, is not "
            "shown: the report may be read where the release is not).</figcaption></figure>"
        )
        inner.append(
            _table(
                "QI values most at risk",
                ["QI value", "Records", "Posterior of its most likely value"],
                [[e(a.label), f"{a.records:,}", f"{a.posterior:.4f}"] for a in s.top],
                numeric=(1, 2),
            )
        )
        del labels
    hm = s.heatmap
    if hm is not None and hm.rows:
        chart = svg.heatmap(
            "maxent-heatmap",
            "P*(s | q) for the riskiest QI values",
            f"Heatmap of {len(hm.rows)} QI values (rows q1 to q{len(hm.rows)}) by their "
            f"{len(hm.values)} most likely sensitive values, most likely first; each cell "
            "holds the probability as text.",
            [r.label for r in hm.rows],
            hm.values,
            [r.posterior for r in hm.rows],
        )
        inner.append("<h3>Posterior heatmap</h3>")
        inner.append(
            f"<figure>{chart}<figcaption>{e(hm.source)}. Columns are ranks: a row's "
            "posteriors from its most likely sensitive value (1st) down, without saying which "
            "values they are. Darker = more likely; every cell states its "
            "probability.</figcaption></figure>"
        )
        rows = [
            [f"q{i + 1}: {e(r.label)}", f"{r.records:,}", *[f"{v:.4f}" for v in r.posterior]]
            for i, r in enumerate(hm.rows)
        ]
        inner.append(
            _details(
                "Heatmap data (probabilities)",
                _table(
                    "P*(s | q): rows are QI values, columns their sensitive values by rank",
                    ["QI value", "Records", *[e(v) for v in hm.values]],
                    rows,
                    numeric=tuple(range(1, len(hm.values) + 2)),
                ),
            )
        )
    else:
        inner.append(
            _not_run(s.heatmap_note, "heatmap: not available (no P*(s | q) rows were given)")
        )
    return _section("maxent", title, inner)


def _utility(u: UtilitySection) -> str:
    title = "Utility of the release"
    inner = [
        "<p>"
        + "; ".join(
            x
            for x in (
                f"method {e(u.method)}" if u.method else "method not recorded (no manifest)",
                f"{u.records_in:,} records in" if u.records_in is not None else "",
                f"{u.records_out:,} records released",
                f"{u.suppressed:,} suppressed" if u.suppressed is not None else "",
                f"{u.groups:,} groups",
                f"columns not released: {e(', '.join(u.dropped_columns))}"
                if u.dropped_columns
                else "",
            )
            if x
        )
        + ".</p>",
        f"<p>Group size (records per group): minimum {u.min_size:,}, median "
        f"{u.median_size:,.1f}, mean {u.mean_size:,.2f}, maximum {u.max_size:,}.</p>",
    ]
    if u.metrics:
        inner.append(
            _table(
                "Information loss (from the manifest)",
                ["Metric", "Value", "Meaning"],
                [[e(m.name), _num(m.value), e(m.meaning)] for m in u.metrics],
                numeric=(1,),
            )
        )
    else:
        inner.append(_not_run(None, "information loss: not recorded (no manifest)"))
    labels = [str(b.low) if b.low == b.high else f"{b.low}-{b.high}" for b in u.histogram]
    chart = svg.bar_chart(
        "sizes-chart",
        "Group sizes: how many groups have each size",
        "Histogram of group sizes (records per group): "
        + "; ".join(f"{a}: {b.groups} groups" for a, b in zip(labels, u.histogram, strict=True)),
        labels,
        [svg.Series("groups", [float(b.groups) for b in u.histogram])],
        x_label="group size (records)",
        y_label="groups",
        unit=" groups",
    )
    inner.append(
        f"<figure>{chart}<figcaption>Number of groups by size (records per group).</figcaption>"
        "</figure>"
    )
    inner.append(
        _table(
            "Group sizes",
            ["Size (records)", "Groups", "Records in them"],
            [
                [lab, f"{b.groups:,}", f"{b.records:,}"]
                for lab, b in zip(labels, u.histogram, strict=True)
            ],
            numeric=(1, 2),
        )
    )
    return _section("utility", title, inner)


def _reading() -> str:
    return _section(
        "reading",
        "How to read this report",
        [
            "<ul>"
            "<li><strong>Maximum disclosure</strong> (Martin et al. 2007): the largest "
            "probability with which an adversary holding k pieces of background knowledge "
            "learns one person's sensitive value. A release is (c,k)-safe when it stays "
            "below c.</li>"
            "<li><strong>Skyline</strong> (Chen et al. 2007): knowledge of l values the "
            "target does not have, the values of k other people, and m people who share the "
            "target's value if anyone does.</li>"
            "<li><strong>PVP_C</strong> (Ganta et al. 2008): the percentage of the people in "
            "this and an earlier release whom intersecting the releases pins to one value "
            "with confidence at least C.</li>"
            "<li><strong>P*(s | q)</strong> (Du et al. 2008): the maximum-entropy estimate of "
            "the probability that a person with QI value q has sensitive value s, given the "
            "adversary's probabilistic knowledge.</li>"
            "</ul>"
        ],
    )
