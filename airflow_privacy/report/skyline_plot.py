"""Draw a privacy skyline as staircases: SVG written by hand, PNG through matplotlib.

One staircase per number ``l`` of values ruled out for the target: for each ``k`` (known
people, x axis) the largest safe ``m`` (implications, y axis). The release is safe at
confidence ``c`` for every ``(l, k, m)`` on or below the staircase of its ``l``; the maximal
points (the skyline) are marked. Chen, LeFevre, Ramakrishnan, "Privacy Skyline: Privacy with
Multidimensional Adversarial Knowledge" (VLDB 2007), the talk's slide "Skyline Exploratory Tool".
"""

from __future__ import annotations

import importlib.util
import io
import itertools
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.skyline import SkylineResult

# colour-blind-safe palette (Okabe-Ito), one colour per l, repeating
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
FORMATS = (".svg", ".png")


def check_plot_path(path: str) -> Path:
    """Validate ``--plot`` before any data is read: a known extension, an existing folder,
    and matplotlib for PNG."""
    out = Path(path)
    suffix = out.suffix.lower()
    if suffix not in FORMATS:
        raise InputError(f"--plot {path!r}: the file name must end in .svg or .png")
    from airflow_privacy.gate.tables import check_output_path

    check_output_path(out, "--plot")
    if suffix == ".png" and importlib.util.find_spec("matplotlib") is None:
        raise InputError(
            f"--plot {path!r}: PNG needs matplotlib, which is not installed "
            "(pip install 'airflow-privacy[plot]'), or write an .svg instead"
        )
    return out


def _series(result: SkylineResult) -> list[tuple[int, list[tuple[int, int]]]]:
    """Per ``l`` with something safe: the staircase ``[(k, max safe m), ...]``."""
    out = []
    for l, row in enumerate(result.staircase):  # noqa: E741
        steps = [(k, m) for k, m in enumerate(row) if m >= 0]
        if steps:
            out.append((l, steps))
    return out


def _path(steps: list[tuple[int, int]], max_k: int) -> list[tuple[int, int]]:
    """The staircase through the lattice: the upper boundary of the union of the boxes
    ``[0, k] x [0, m]`` of the safe points, so every lattice point on or beneath it is safe
    and the skyline points are its outer corners. It drops to the axis after the last safe
    ``k`` unless that is the bound."""
    out = [(steps[0][0], steps[0][1])]
    for (k0, _), (k1, m1) in itertools.pairwise(steps):
        out.append((k0, m1))
        out.append((k1, m1))
    k_last, m_last = steps[-1]
    if k_last < max_k and m_last > 0:
        out.append((k_last, 0))
    return out


def _title(result: SkylineResult, subject: str) -> str:
    return f"Privacy skyline of {subject} at c = {result.c:g}"


def skyline_svg(result: SkylineResult, subject: str = "the release") -> str:
    """The staircases as a standalone SVG document (no dependency)."""
    max_l, max_k, max_m = result.bounds
    width, height = 640, 440
    left, right, top, bottom = 60, 140, 50, 55
    pw, ph = width - left - right, height - top - bottom

    def x(k: float) -> float:
        return left + pw * (k / max(max_k, 1))

    def y(m: float) -> float:
        return top + ph * (1 - m / max(max_m, 1))

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2:.1f}" y="24" text-anchor="middle" font-size="15">'
        f"{escape(_title(result, subject))}</text>",
    ]
    # axes, grid and ticks
    parts.append(
        f'<line x1="{left}" y1="{y(0):.1f}" x2="{left + pw}" y2="{y(0):.1f}" stroke="black"/>'
    )
    parts.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{y(0):.1f}" stroke="black"/>')
    for k in range(max_k + 1):
        parts.append(
            f'<line x1="{x(k):.1f}" y1="{top}" x2="{x(k):.1f}" y2="{y(0):.1f}" stroke="#e5e5e5"/>'
        )
        parts.append(f'<text x="{x(k):.1f}" y="{y(0) + 16:.1f}" text-anchor="middle">{k}</text>')
    for m in range(max_m + 1):
        parts.append(
            f'<line x1="{left}" y1="{y(m):.1f}" x2="{left + pw}" y2="{y(m):.1f}" stroke="#e5e5e5"/>'
        )
        parts.append(f'<text x="{left - 8}" y="{y(m) + 4:.1f}" text-anchor="end">{m}</text>')
    parts.append(
        f'<text x="{left + pw / 2:.1f}" y="{height - 14}" text-anchor="middle">'
        "k: people whose values the adversary knows</text>"
    )
    parts.append(
        f'<text transform="translate(16 {top + ph / 2:.1f}) rotate(-90)" '
        'text-anchor="middle">m: implications (v has s → t has s)</text>'
    )
    series = _series(result)
    if not series:
        parts.append(
            f'<text x="{left + pw / 2:.1f}" y="{top + ph / 2:.1f}" text-anchor="middle" '
            f'fill="#b00000">nothing is safe at c = {result.c:g}, not even (0, 0, 0)</text>'
        )
    maximal = set(result.points)
    for i, (l, steps) in enumerate(series):  # noqa: E741
        colour = PALETTE[i % len(PALETTE)]
        pts = [f"{x(k):.1f},{y(m):.1f}" for k, m in _path(steps, max_k)]
        if len(pts) == 1:
            pts.append(pts[0])
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="2.5" '
            f'points="{" ".join(pts)}"><title>l = {l}</title></polyline>'
        )
        for k, m in steps:
            if (l, k, m) in maximal:
                parts.append(
                    f'<circle cx="{x(k):.1f}" cy="{y(m):.1f}" r="4.5" fill="{colour}">'
                    f"<title>({l}, {k}, {m})</title></circle>"
                )
        ly = top + 16 * i + 8
        parts.append(
            f'<line x1="{left + pw + 16}" y1="{ly}" x2="{left + pw + 40}" y2="{ly}" '
            f'stroke="{colour}" stroke-width="2.5"/>'
        )
        parts.append(f'<text x="{left + pw + 46}" y="{ly + 4}">l = {l}</text>')
    note_y = top + 16 * max(len(series), 1) + 24
    parts.append(
        f'<text x="{left + pw + 16}" y="{note_y}" font-size="11">bounds: l ≤ {max_l}</text>'
    )
    parts.append(
        f'<text x="{left + pw + 16}" y="{note_y + 14}" font-size="11">● skyline point</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _png(result: SkylineResult, subject: str) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    max_l, max_k, max_m = result.bounds
    fig = Figure(figsize=(7.5, 5), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    maximal = set(result.points)
    series = _series(result)
    for i, (l, steps) in enumerate(series):  # noqa: E741
        colour = PALETTE[i % len(PALETTE)]
        line = _path(steps, max_k)
        ax.plot([p[0] for p in line], [p[1] for p in line], color=colour, lw=2.2, label=f"l = {l}")
        pk = [k for k, m in steps if (l, k, m) in maximal]
        pm = [m for k, m in steps if (l, k, m) in maximal]
        ax.plot(pk, pm, "o", color=colour)
    if not series:
        ax.text(0.5, 0.5, f"nothing is safe at c = {result.c:g}", ha="center",
                transform=ax.transAxes, color="#b00000")  # fmt: skip
    ax.set_xlim(-0.2, max(max_k, 1) + 0.2)
    ax.set_ylim(-0.2, max(max_m, 1) + 0.2)
    ax.set_xticks(range(max_k + 1))
    ax.set_yticks(range(max_m + 1))
    ax.grid(True, color="#e5e5e5")
    ax.set_xlabel("k: people whose values the adversary knows")
    ax.set_ylabel("m: implications (v has s → t has s)")
    ax.set_title(_title(result, subject) + f"  (l ≤ {max_l})")
    if series:
        ax.legend(loc="upper right", fontsize=9)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def write_plot(result: SkylineResult, path: Path, subject: str = "the release") -> None:
    """Write the plot to ``path`` (``.svg`` or ``.png``) atomically, through the one writer
    of every output (:func:`airflow_privacy.gate.tables.write_outputs`: a temporary file in
    the same folder, renamed over ``path`` when complete; nothing left behind on error)."""
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.refs import ReleaseRef
    from airflow_privacy.gate.tables import write_outputs

    path = check_plot_path(str(path))
    content: str | bytes = (
        skyline_svg(result, subject) if path.suffix.lower() == ".svg" else _png(result, subject)
    )
    try:
        write_outputs({ReleaseRef(path=str(path)): content}, GateContext())
    except InputError as exc:
        raise InputError(f"--plot: {exc}") from None
