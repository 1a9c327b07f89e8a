"""HTML of the report's re-identification risk section (:mod:`airflow_privacy.report.risk`):
the measures with their sentences, an inline SVG of the class-size distribution (records in
groups of each size, at prosecutor risk or not) and of SUDA's attribute contributions.
Everything is escaped."""

from __future__ import annotations

from airflow_privacy.report import svg
from airflow_privacy.report.risk import RiskSection
from airflow_privacy.report.svg import e

TITLE = "Re-identification risk"


def _value(v: float | int | str | None) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, int):
        return f"{v:,}"
    return e(v)


def _risk_of(low: int, high: int) -> str:
    """The prosecutor risk ``1/size`` of a size bin (a range for a bin of several sizes)."""
    if low == high:
        return f"{1 / low:.4g}"
    return f"{1 / high:.4g}–{1 / low:.4g}"


def render_risk(s: RiskSection) -> str:
    """The section (the report shows it only when a risk analysis is among its checks)."""
    head = '<section id="risk" aria-labelledby="risk-h">\n<h2 id="risk-h">' + TITLE + "</h2>\n"
    inner = [
        f"<p>{e(s.summary[:1].upper() + s.summary[1:])} (analysis {e(s.source)}).</p>",
        f"<p>Quasi-identifiers: {e(', '.join(s.qis))}; threshold {s.threshold:g} (a record is "
        f"at risk when its re-identification probability is above it); population: "
        f"{e(s.population)}.</p>",
    ]
    labels = [str(b.low) if b.low == b.high else f"{b.low}-{b.high}" for b in s.bins]
    if s.bins:
        chart = svg.bar_chart(
            "risk-sizes-chart",
            "Records by group size: at prosecutor risk or not",
            "Records in groups of each size; a group of size f gives each of its records a "
            f"prosecutor risk of 1/f, at risk when above {s.threshold:g}: "
            + "; ".join(
                f"{lab}: {b.records_at_risk} at risk, {b.records - b.records_at_risk} not"
                for lab, b in zip(labels, s.bins, strict=True)
            ),
            labels,
            [
                svg.Series("at risk", [float(b.records_at_risk) for b in s.bins]),
                svg.Series("not at risk", [float(b.records - b.records_at_risk) for b in s.bins]),
            ],
            x_label="group size (records); prosecutor risk = 1 / size",
            y_label="records",
            unit=" records",
        )
        inner.append(
            f"<figure>{chart}<figcaption>Records by the size of their group. A record in a "
            "group of f records is picked out with probability 1/f by an attacker who knows it "
            f"is in the release; it is at risk when 1/f is above {s.threshold:g}."
            "</figcaption></figure>"
        )
        rows = "".join(
            f'<tr><th scope="row">{e(lab)}</th><td class="num">{_risk_of(b.low, b.high)}</td>'
            f'<td class="num">{b.groups:,}</td><td class="num">{b.records:,}</td>'
            f'<td class="num">{b.records_at_risk:,}</td></tr>'
            for lab, b in zip(labels, s.bins, strict=True)
        )
        inner.append(
            "<table><caption>Group sizes and prosecutor risk</caption><thead><tr>"
            '<th scope="col">Size (records)</th><th scope="col" class="num">Prosecutor risk</th>'
            '<th scope="col" class="num">Groups</th><th scope="col" class="num">Records</th>'
            '<th scope="col" class="num">Records at risk</th></tr></thead><tbody>'
            + rows
            + "</tbody></table>"
        )
    if s.contributions and not any(c.percent > 0 for c in s.contributions):
        inner.append(
            "<p>No record has a special unique (SUDA2), so no attribute drives a SUDA score.</p>"
        )
    elif s.contributions:
        chart = svg.hbar_chart(
            "risk-suda-chart",
            "Which attribute drives the risk (SUDA2 contributions)",
            "Share of the total SUDA score from special uniques containing each attribute: "
            + "; ".join(f"{c.attribute}: {c.percent:.1f}%" for c in s.contributions),
            [c.attribute for c in s.contributions],
            [c.percent for c in s.contributions],
            x_max=100.0,
            value_format=".1f",
        )
        inner.append(
            f"<figure>{chart}<figcaption>Percent of the total SUDA score that comes from "
            "special uniques (value combinations no other record shares) containing each "
            "attribute; the shares add up to more than 100% because a special unique can hold "
            "several attributes.</figcaption></figure>"
        )
    measure_rows = "".join(
        f'<tr><th scope="row">{e(m.label)}</th><td class="num">{_value(m.value)}</td>'
        f"<td>{e(m.explanation)}</td></tr>"
        for m in s.measures
    )
    inner.append(
        "<table><caption>Risk measures, each in one sentence</caption><thead><tr>"
        '<th scope="col">Measure</th><th scope="col" class="num">Value</th>'
        '<th scope="col">What it means</th></tr></thead><tbody>' + measure_rows + "</tbody></table>"
    )
    return head + "\n".join(inner) + "\n</section>"
