"""The report of a differentially private release (:mod:`airflow_privacy.gate.steps.
dp_release`): what a privacy officer needs instead of a partition's sections.

* the mechanism, its scale and the spread of its noise per cell (standard deviation, the
  95% interval's half-width);
* the dataset's budget: its cap, what each DP release spent (a plot over the releases:
  spent so far, against the cap; a budget never resets) and what is left;
* what the total spend means (its (epsilon, delta) and the semantic-privacy bound of Ganta,
  Kasiviswanathan and Smith, KDD 2008, Theorem 15 / Proposition 17), in words;
* whether the marginals were made consistent, and each one's standard deviation after it;
* the released cells (the first :data:`CELLS_SHOWN`): each consistent estimate, noisy count
  and 95% interval. The cells are the release itself: nothing in them is not published.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CELLS_SHOWN = 200


@dataclass(frozen=True)
class SpendPoint:
    """One DP release of the dataset: its version and the budget spent up to it."""

    version: str
    spent: float
    total: float
    created_at: str


@dataclass(frozen=True)
class DPCell:
    marginal: str
    cell: str
    count: int
    low: int
    high: int
    #: the consistent estimate (None in a file written before consistency was made)
    estimate: float | None = None


@dataclass(frozen=True)
class DPSection:
    mechanism: str
    scale: float
    stddev: float
    half_width: int
    bound: int
    marginals: list[str]
    cells: int
    unit: str
    cost: float | None
    cap: float | None
    spent: float | None
    left: float
    meaning: str
    history: list[SpendPoint] = field(default_factory=list)
    shown: list[DPCell] = field(default_factory=list)
    #: each marginal's standard deviation after the consistency step (empty: not made)
    consistent_sd: dict[str, float] = field(default_factory=dict)
    #: each summed column, its noise's standard deviation and 95% half-width
    sums: list[tuple[str, float, int]] = field(default_factory=list)


def dp_section(
    envelope: Mapping[str, Any],
    spends: Sequence[Any],
    unit: str,
    cap: float | None,
    cells: Sequence[Mapping[str, Any]],
) -> DPSection:
    """The section from the release's ``dp-release`` record, the dataset's spends (oldest
    first) and the released cells (rows of the file)."""
    d = envelope.get("details") or {}
    m = d.get("mechanism") or {}
    budget = d.get("budget") or {}
    total = 0.0
    history = []
    for s in spends:
        cost = s.rho if unit == "rho" else (s.epsilon if s.epsilon is not None else float("inf"))
        total += cost
        when = str(s.created_at).split(".")[0].replace("T", " ")  # to the second
        history.append(SpendPoint(str(s.version), float(cost), total, when))
    shown = []
    released = {"marginal", "count", "estimate", "noisy_count", "low95", "high95"}
    for x in d.get("sums") or []:
        released |= set(x.get("columns") or [])
    for row in list(cells)[:CELLS_SHOWN]:
        named = [f"{k}={v}" for k, v in row.items() if k not in released
                 and v not in (None, "")]  # fmt: skip
        est = row.get("estimate")
        shown.append(DPCell(str(row.get("marginal")), ", ".join(named), int(row["noisy_count"]),
                            int(row["low95"]), int(row["high95"]),
                            float(est) if est not in (None, "") else None))  # fmt: skip
    consistency = d.get("consistency") or {}
    consistent_sd = (
        {str(k): float(v) for k, v in (consistency.get("stddev") or {}).items()}
        if consistency.get("applied") else {}
    )  # fmt: skip
    spent = total if history else float(budget.get("spent") or 0.0)
    return DPSection(
        mechanism=str(m.get("mechanism")), scale=float(m.get("scale") or 0.0),
        stddev=float(m.get("stddev") or 0.0), half_width=int(m.get("half_width") or 0),
        bound=int(m.get("bound") or 1),
        marginals=[str(x.get("name")) for x in d.get("marginals") or []],
        cells=int(d.get("cells") or 0), unit=unit, cost=d.get("cost"), cap=cap,
        spent=spent if spent != float("inf") else None,
        left=max((cap or 0.0) - spent, 0.0) if spent != float("inf") else 0.0,
        meaning=str((d.get("loss") or {}).get("text") or ""), history=history, shown=shown,
        consistent_sd=consistent_sd,
        sums=[(str(x.get("column")), float(x.get("stddev") or 0.0),
               int(x.get("half_width") or 0)) for x in m.get("sums") or []],
    )  # fmt: skip


def render_dp(s: DPSection) -> str:
    """The section as HTML (everything escaped); the budget plot as inline SVG."""
    from airflow_privacy.report import svg
    from airflow_privacy.report.svg import e

    head = '<section id="dp" aria-labelledby="dp-h">\n<h2 id="dp-h">Differential privacy</h2>\n'
    cap = "no cap" if s.cap is None else f"{s.cap:g}"
    spent = "unbounded" if s.spent is None else f"{s.spent:.6g}"
    inner = [
        f"<p>{len(s.marginals)} marginal(s) ({e(', '.join(s.marginals))}), {s.cells:,} cells, "
        f"{e(s.mechanism)} noise of scale {s.scale:.4g}: each cell's standard deviation is "
        f"{s.stddev:.4g} and 95% of cells are within ±{s.half_width} of the true count "
        f"(each person counted at most {s.bound} time(s) per marginal)."
        + "".join(
            f" The sums of {e(c)} in each cell (columns {e(c)}_sum...) have a standard "
            f"deviation of {sd:,.4g} (95% within ±{hw:,})."
            for c, sd, hw in s.sums
        )
        + "</p>",
        f"<p>Budget of the dataset ({e(s.unit)}, never reset): cap {e(cap)}, spent "
        f"{e(spent)} over {len(s.history)} DP release(s), {s.left:.6g} left.</p>",
        f"<p>{e(s.meaning[:1].upper() + s.meaning[1:])}.</p>",
    ]
    if s.consistent_sd:
        sds = ", ".join(f"{e(k)} {v:.3g}" for k, v in s.consistent_sd.items())
        inner.insert(1, (
            "<p>The marginals were made consistent with each other (the least-squares "
            "estimate, free of privacy loss): the estimate's standard deviation per cell is "
            f"{sds}; the count shown is the estimate rounded, never below zero.</p>"
        ))  # fmt: skip
    if s.history:
        xs = list(range(1, len(s.history) + 1))
        finite = [p.total for p in s.history if p.total != float("inf")]
        whole = s.cap or max(finite or [1.0]) or 1.0
        inner.append(
            svg.line_chart(
                "dp-budget", "Privacy budget spent", "The share of the dataset's budget "
                "spent after each of its DP releases; at 1 the budget is spent for good",
                xs, [svg.Series("spent so far", [min(p.total / whole, 1.0) for p in s.history])],
                x_label="DP release (in order)", y_label=f"share of the cap ({s.unit})",
                y_max=1.0, threshold=(1.0, "cap") if s.cap is not None else None, step=True,
            )
        )  # fmt: skip
        rows = "".join(
            f"<tr><td>{i}</td><td>{e(p.version)}</td><td>{p.spent:.6g}</td>"
            f"<td>{p.total:.6g}</td><td>{e(p.created_at)}</td></tr>"
            for i, p in enumerate(s.history, 1)
        )
        inner.append(
            "<table><caption>Each DP release's spend</caption><thead><tr><th>#</th>"
            "<th>Version</th><th>Spent</th><th>Spent so far</th><th>When</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )
    if s.shown:
        with_est = any(c.estimate is not None for c in s.shown)
        rows = "".join(
            f"<tr><td>{e(c.marginal)}</td><td>{e(c.cell)}</td>"
            + (f"<td>{c.estimate:,.1f}</td>" if c.estimate is not None else
               ("<td></td>" if with_est else ""))
            + f"<td>{c.count:,}</td><td>{c.low:,} – {c.high:,}</td></tr>"
            for c in s.shown
        )  # fmt: skip
        more = f" (the first {len(s.shown):,} of {s.cells:,})" if s.cells > len(s.shown) else ""
        inner.append(
            f"<table><caption>The released cells{more}: the noisy count and its 95% interval"
            "</caption><thead><tr><th>Marginal</th><th>Cell</th>"
            + ("<th>Estimate</th>" if with_est else "")
            + "<th>Noisy count</th><th>95% interval</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )
    return head + "\n".join(inner) + "\n</section>"
