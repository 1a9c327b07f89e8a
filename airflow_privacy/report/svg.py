"""Hand-written inline SVG charts for the release report: no library, no script, no font.

Every chart is ``role="img"`` with a ``<title>`` and a ``<desc>`` (named by
``aria-labelledby``), draws its series with distinct line dashes, marker shapes and fill
patterns (never colour alone), writes its numbers as text, and escapes every label.
Markers carry their data as ``data-*`` attributes so tests can compare them with the
engines. Geometry: ``y = TOP + (1 - p / y_max) * plot_height`` for values ``p``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 640, 320
LEFT, RIGHT, TOP, BOTTOM = 64, 120, 20, 52
INK = "#1a1a1a"
DASHES = ("", "7 4", "2 3", "10 3 2 3", "1 2", "12 6")
MARKERS = ("circle", "square", "triangle", "diamond", "cross", "plus")


def e(text: object) -> str:
    """Escape for HTML text and attribute values (SVG inline in HTML5 included)."""
    return escape(str(text), quote=True)


def n(x: float) -> str:
    """A coordinate."""
    return f"{x:.2f}"


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float | None]


def _open(
    chart_id: str, title: str, desc: str, width: int = WIDTH, height: int = HEIGHT
) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{e(chart_id)}" class="chart" '
        f'role="img" aria-labelledby="{e(chart_id)}-title {e(chart_id)}-desc" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">',
        f'<title id="{e(chart_id)}-title">{e(title)}</title>',
        f'<desc id="{e(chart_id)}-desc">{e(desc)}</desc>',
    ]


def marker(shape: str, x: float, y: float, size: float = 4.5, attrs: str = "") -> str:
    """A filled marker of ``shape`` centred on (x, y) (``attrs`` appended verbatim)."""
    s = size
    if shape == "circle":
        return f'<circle cx="{n(x)}" cy="{n(y)}" r="{n(s)}" fill="{INK}"{attrs}>'
    if shape == "square":
        return (
            f'<rect x="{n(x - s)}" y="{n(y - s)}" width="{n(2 * s)}" height="{n(2 * s)}" '
            f'fill="white" stroke="{INK}" stroke-width="1.5"{attrs}>'
        )
    if shape == "triangle":
        pts = f"{n(x)},{n(y - s)} {n(x + s)},{n(y + s)} {n(x - s)},{n(y + s)}"
    elif shape == "diamond":
        pts = f"{n(x)},{n(y - s)} {n(x + s)},{n(y)} {n(x)},{n(y + s)} {n(x - s)},{n(y)}"
    elif shape == "cross":
        t = s / 2.5
        pts = " ".join(
            f"{n(x + dx)},{n(y + dy)}"
            for dx, dy in (
                (-s, -s + t), (-s + t, -s), (0, -t), (s - t, -s), (s, -s + t), (t, 0),
                (s, s - t), (s - t, s), (0, t), (-s + t, s), (-s, s - t), (-t, 0),
            )
        )  # fmt: skip
    else:  # plus
        t = s / 3
        pts = " ".join(
            f"{n(x + dx)},{n(y + dy)}"
            for dx, dy in (
                (-t, -s), (t, -s), (t, -t), (s, -t), (s, t), (t, t),
                (t, s), (-t, s), (-t, t), (-s, t), (-s, -t), (-t, -t),
            )
        )  # fmt: skip
    return f'<polygon points="{pts}" fill="{INK}"{attrs}>'


def _close_marker(shape: str) -> str:
    return {"circle": "</circle>", "square": "</rect>"}.get(shape, "</polygon>")


def _y_axis(parts: list[str], y_max: float, ticks: Sequence[float], fmt: str, label: str) -> None:
    ph = HEIGHT - TOP - BOTTOM
    for t in ticks:
        y = TOP + (1 - t / y_max) * ph if y_max else TOP + ph
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{n(y)}" y2="{n(y)}" '
            f'stroke="#bbbbbb" stroke-width="0.5"/>'
        )
        parts.append(
            f'<text x="{LEFT - 6}" y="{n(y + 4)}" text-anchor="end">{e(format(t, fmt))}</text>'
        )
    parts.append(
        f'<text x="14" y="{n(TOP + ph / 2)}" text-anchor="middle" '
        f'transform="rotate(-90 14 {n(TOP + ph / 2)})">{e(label)}</text>'
    )
    parts.append(
        f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{TOP + ph}" stroke="{INK}"/>'
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{TOP + ph}" y2="{TOP + ph}" '
        f'stroke="{INK}"/>'
    )


def line_chart(
    chart_id: str,
    title: str,
    desc: str,
    xs: Sequence[int],
    series: Sequence[Series],
    *,
    x_label: str,
    y_label: str,
    y_max: float = 1.0,
    threshold: tuple[float, str] | None = None,
    step: bool = False,
) -> str:
    """Lines over integer ``xs``, one dash pattern and marker shape per series; markers
    carry ``data-series``, ``data-x`` and ``data-value`` (the exact float)."""
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    x0, x1 = (min(xs), max(xs)) if xs else (0, 1)
    span = (x1 - x0) or 1

    def px(x: float) -> float:
        return LEFT + (x - x0) / span * pw if x1 > x0 else LEFT + pw / 2

    def py(v: float) -> float:
        return TOP + (1 - v / y_max) * ph

    parts = _open(chart_id, title, desc)
    ticks = [y_max * i / 5 for i in range(6)]
    _y_axis(parts, y_max, ticks, ".2f" if y_max <= 1 else ".0f", y_label)
    stride = max(1, len(xs) // 12)
    for i, x in enumerate(xs):
        if i % stride == 0 or i == len(xs) - 1:
            parts.append(
                f'<text x="{n(px(x))}" y="{TOP + ph + 18}" text-anchor="middle">{x}</text>'
            )
    parts.append(
        f'<text x="{n(LEFT + pw / 2)}" y="{HEIGHT - 8}" text-anchor="middle">{e(x_label)}</text>'
    )
    if threshold is not None:
        tv, tl = threshold
        y = py(min(max(tv, 0.0), y_max))
        parts.append(
            f'<line class="threshold" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{n(y)}" y2="{n(y)}" '
            f'stroke="{INK}" stroke-width="1.5" stroke-dasharray="1 4" data-value="{tv!r}"/>'
        )
        parts.append(f'<text x="{WIDTH - RIGHT + 6}" y="{n(y + 4)}">{e(tl)}</text>')
    # later series first, so the first one's (smaller) markers stay visible on top
    sizes = (3.5, 5.5, 5.0, 5.0, 5.0, 5.0)
    for si in reversed(range(len(series))):
        s = series[si]
        dash = DASHES[si % len(DASHES)]
        shape = MARKERS[si % len(MARKERS)]
        # step charts (staircases) often coincide: shift each series by a few pixels
        dy = (si - (len(series) - 1) / 2) * 2.5 if step else 0.0
        pts = [(x, v) for x, v in zip(xs, s.values, strict=True) if v is not None]
        if not pts:
            continue
        d: list[str] = []
        for j, (x, v) in enumerate(pts):
            if j == 0:
                d.append(f"M{n(px(x))},{n(py(v) + dy)}")
            elif step:
                d.append(f"H{n(px(x))}V{n(py(v) + dy)}")
            else:
                d.append(f"L{n(px(x))},{n(py(v))}")
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<path d="{"".join(d)}" fill="none" stroke="{INK}" stroke-width="2"{dash_attr}/>'
        )
        for x, v in pts:
            attrs = f' class="point" data-series="{e(s.name)}" data-x="{x}" data-value="{v!r}"'
            parts.append(
                marker(shape, px(x), py(v) + dy, sizes[si % len(sizes)], attrs=attrs)
                + f"<title>{e(s.name)}: {x} → {v:.4g}</title>"
                + _close_marker(shape)
            )
    # legend (shape + dash + name), top right outside the plot
    for si, s in enumerate(series):
        y = TOP + 14 + 20 * si
        x = WIDTH - RIGHT + 8
        dash = DASHES[si % len(DASHES)]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<line x1="{x}" x2="{x + 24}" y1="{y}" y2="{y}" stroke="{INK}" '
            f'stroke-width="2"{dash_attr}/>'
        )
        shape = MARKERS[si % len(MARKERS)]
        parts.append(marker(shape, x + 12, y, 4) + _close_marker(shape))
        parts.append(f'<text x="{x + 30}" y="{y + 4}">{e(_short(s.name, 12))}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _hatch(chart_id: str, k: int) -> str:
    """Fill pattern ``k`` (0 solid dark, 1 diagonal hatch, 2 dots) for bars."""
    if k % 3 == 0:
        return INK
    return f"url(#{e(chart_id)}-pat{k % 3})"


def _patterns(chart_id: str) -> str:
    cid = e(chart_id)
    return (
        "<defs>"
        f'<pattern id="{cid}-pat1" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)">'
        f'<rect width="6" height="6" fill="white"/><line x1="0" y1="0" x2="0" y2="6" '
        f'stroke="{INK}" stroke-width="3"/></pattern>'
        f'<pattern id="{cid}-pat2" width="5" height="5" patternUnits="userSpaceOnUse">'
        f'<rect width="5" height="5" fill="white"/><circle cx="2.5" cy="2.5" r="1.3" '
        f'fill="{INK}"/></pattern>'
        "</defs>"
    )


def bar_chart(
    chart_id: str,
    title: str,
    desc: str,
    labels: Sequence[str],
    series: Sequence[Series],
    *,
    x_label: str,
    y_label: str,
    y_max: float | None = None,
    value_format: str = ",.0f",
    unit: str = "",
) -> str:
    """Vertical (grouped) bars, one fill pattern per series, each bar labelled with its
    value; bars carry ``data-series``, ``data-label`` and ``data-value``."""
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    top = y_max
    if top is None:
        top = max((v or 0.0 for s in series for v in s.values), default=0.0) or 1.0
        top = _nice(top)
    slot = pw / max(1, len(labels))
    # labels wider than their slot are slanted (and the chart grows to hold them)
    slant = max((len(_short(lab, 10)) for lab in labels), default=0) * 6.0 > slot
    height = HEIGHT + 44 if slant else HEIGHT
    parts = _open(chart_id, title, desc, height=height)
    parts.append(_patterns(chart_id))
    ticks = [top * i / 5 for i in range(6)]
    _y_axis(parts, top, ticks, ".2f" if top < 5 else ",.0f", y_label)
    width = slot * 0.8 / max(1, len(series))
    stride = max(1, len(labels) // 16) if not slant else 1
    for i, lab in enumerate(labels):
        cx = LEFT + slot * (i + 0.5)
        if slant:
            ly = TOP + ph + 12
            parts.append(
                f'<text x="{n(cx)}" y="{ly}" text-anchor="end" class="small" '
                f'transform="rotate(-45 {n(cx)} {ly})">{e(_short(lab, 12))}</text>'
            )
        elif i % stride == 0:
            parts.append(
                f'<text x="{n(cx)}" y="{TOP + ph + 16}" text-anchor="middle" '
                f'class="small">{e(_short(lab, 10))}</text>'
            )
        for si, s in enumerate(series):
            v = s.values[i]
            if v is None:
                continue
            h = max(0.0, min(v, top)) / top * ph
            x = LEFT + slot * i + slot * 0.1 + width * si
            y = TOP + ph - h
            parts.append(
                f'<rect class="bar" x="{n(x)}" y="{n(y)}" width="{n(width)}" height="{n(h)}" '
                f'fill="{_hatch(chart_id, si)}" stroke="{INK}" stroke-width="1" '
                f'data-series="{e(s.name)}" data-label="{e(lab)}" data-value="{v!r}">'
                f"<title>{e(s.name)}, {e(lab)}: {format(v, value_format)}{e(unit)}</title></rect>"
            )
            if len(labels) * len(series) <= 24:
                parts.append(
                    f'<text x="{n(x + width / 2)}" y="{n(y - 4)}" text-anchor="middle" '
                    f'class="small">{e(format(v, value_format))}</text>'
                )
    parts.append(
        f'<text x="{n(LEFT + pw / 2)}" y="{height - 8}" text-anchor="middle">{e(x_label)}</text>'
    )
    for si, s in enumerate(series):
        y = TOP + 8 + 22 * si
        x = WIDTH - RIGHT + 8
        parts.append(
            f'<rect x="{x}" y="{y}" width="16" height="14" fill="{_hatch(chart_id, si)}" '
            f'stroke="{INK}"/><text x="{x + 22}" y="{y + 12}">{e(_short(s.name, 13))}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


def _nice(x: float) -> float:
    """The next round number at or above ``x`` (1, 2, 2.5, 5 x 10^n)."""
    import math

    if x <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(x))
    for f in (1, 2, 2.5, 5, 10):
        if f * mag >= x - 1e-12:
            return float(f * mag)
    return float(10 * mag)


def hbar_chart(
    chart_id: str, title: str, desc: str, labels: Sequence[str], values: Sequence[float],
    *, x_max: float = 1.0, value_format: str = ".4f", threshold: tuple[float, str] | None = None,
) -> str:  # fmt: skip
    """Horizontal bars (label above each bar, value at its end), for ranked lists."""
    row_h = 36
    height = TOP + row_h * max(1, len(labels)) + 30
    bar_w = WIDTH - 40 - 90
    parts = _open(chart_id, title, desc, height=height)
    for i, (lab, v) in enumerate(zip(labels, values, strict=True)):
        y = TOP + row_h * i
        w = max(0.0, min(v, x_max)) / x_max * bar_w
        parts.append(
            f'<text x="20" y="{y + 10}" class="small">{i + 1}. {e(_short(lab, 90))}</text>'
        )
        parts.append(
            f'<rect class="bar" x="20" y="{y + 14}" width="{n(w)}" height="14" fill="{INK}" '
            f'data-label="{e(lab)}" data-value="{v!r}"><title>{e(lab)}: '
            f"{format(v, value_format)}</title></rect>"
        )
        parts.append(
            f'<text x="{n(20 + w + 6)}" y="{y + 26}" class="small">{format(v, value_format)}</text>'
        )
    if threshold is not None:
        tv, tl = threshold
        x = 20 + max(0.0, min(tv, x_max)) / x_max * bar_w
        bottom = TOP + row_h * max(1, len(labels))
        parts.append(
            f'<line class="threshold" x1="{n(x)}" x2="{n(x)}" y1="{TOP}" y2="{bottom}" '
            f'stroke="{INK}" stroke-dasharray="2 3" data-value="{tv!r}"/>'
            f'<text x="{n(x)}" y="{bottom + 16}" text-anchor="middle" class="small">'
            f"{e(tl)}</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts)


def heatmap(
    chart_id: str,
    title: str,
    desc: str,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    cells: Sequence[Sequence[float]],
) -> str:
    """A grid of probabilities: shade from white (0) to dark (1) and the number written in
    every cell; rows are named ``q1, q2, ...`` (the adjacent table spells them out)."""
    cell_w, cell_h, head, left = 38, 24, 110, 44
    width = max(WIDTH, left + cell_w * len(col_labels) + 20)
    height = head + cell_h * len(row_labels) + 16
    parts = _open(chart_id, title, desc, width=width, height=height)
    for j, col in enumerate(col_labels):
        x = left + cell_w * (j + 0.5)
        parts.append(
            f'<text x="{n(x)}" y="{head - 6}" class="small" '
            f'transform="rotate(-55 {n(x)} {head - 6})">{e(_short(col, 18))}</text>'
        )
    for i, lab in enumerate(row_labels):
        y = head + cell_h * i
        parts.append(
            f'<text x="{left - 6}" y="{y + 16}" text-anchor="end" class="small">q{i + 1}</text>'
        )
        for j, v in enumerate(cells[i]):
            level = max(0.0, min(1.0, v))
            shade = round(255 - 215 * level)
            fill = f"rgb({shade},{shade},{min(255, shade + 20)})"
            ink = "white" if level > 0.55 else INK
            x = left + cell_w * j
            parts.append(
                f'<rect class="cell" x="{x}" y="{y}" width="{cell_w}" height="{cell_h}" '
                f'fill="{fill}" stroke="#888888" stroke-width="0.5" data-row="{i}" '
                f'data-col="{j}" data-value="{v!r}"><title>q{i + 1} ({e(lab)}), '
                f"{e(col_labels[j])}: {v:.4f}</title></rect>"
            )
            parts.append(
                f'<text x="{x + cell_w / 2}" y="{y + 16}" text-anchor="middle" class="tiny" '
                f'fill="{ink}">{_cell(v)}</text>'
            )
    parts.append("</svg>")
    return "\n".join(parts)


def _cell(v: float) -> str:
    if v <= 0:
        return "0"
    if v >= 1:
        return "1"
    return f"{v:.2f}".lstrip("0")
