"""Inline SVG plots drawn by hand (no plotting library, no scripts): a weight heatmap and line plots."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import numpy as np

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
"""Series colours, in order."""


def _diverging(value: float) -> str:
    """Colour of a value in [-1, 1]: blue for negative, white at 0, red for positive."""
    v = max(-1.0, min(1.0, value))
    a = abs(v)
    target = (214, 39, 40) if v > 0 else (31, 119, 180)
    r, g, b = (round(255 + (c - 255) * a) for c in target)
    return f"rgb({r},{g},{b})"


def heatmap_svg(rows: Sequence[str], columns: Sequence[str], values: np.ndarray, *, title: str) -> str:
    """A heatmap of values [R, C] (NaN = absent), each row scaled by its largest |value|, numbers printed.

    Used for term weights (rows) across iterations (columns): the sign and the relative change of each
    weight read at a glance, as in MoVLR's weight-evolution figures.
    """
    cell_w, cell_h, left, top = 64, 22, 12 + 7 * max((len(r) for r in rows), default=4), 40
    width = max(left + cell_w * len(columns) + 10, 8 + 7 * len(title))
    height = top + cell_h * len(rows) + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot heatmap" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
             f'<text x="4" y="14" font-size="13" font-weight="bold">{escape(title)}</text>']
    for j, column in enumerate(columns):
        parts.append(f'<text x="{left + cell_w * j + cell_w / 2}" y="{top - 6}" font-size="11" '
                     f'text-anchor="middle">{escape(column)}</text>')
    for i, row in enumerate(rows):
        y = top + cell_h * i
        parts.append(f'<text x="{left - 6}" y="{y + 15}" font-size="11" text-anchor="end">{escape(row)}</text>')
        finite = values[i][np.isfinite(values[i])]
        scale = float(np.abs(finite).max()) if finite.size else 1.0
        for j in range(len(columns)):
            parts.append(_cell(left + cell_w * j, y, cell_w, cell_h, float(values[i, j]), scale or 1.0))
    parts.append("</svg>")
    return "".join(parts)


def _cell(x: float, y: float, w: float, h: float, value: float, scale: float) -> str:
    if not math.isfinite(value):
        return (f'<rect x="{x}" y="{y}" width="{w - 2}" height="{h - 2}" fill="#eee"/>'
                f'<text x="{x + w / 2}" y="{y + 15}" font-size="10" text-anchor="middle" fill="#999">–</text>')
    return (f'<rect x="{x}" y="{y}" width="{w - 2}" height="{h - 2}" fill="{_diverging(value / scale)}">'
            f'<title>{value:.4g}</title></rect>'
            f'<text x="{x + w / 2}" y="{y + 15}" font-size="10" text-anchor="middle">{value:.3g}</text>')


def line_plot_svg(series: dict[str, Sequence[tuple[float, float]]], *, title: str, x_label: str, y_label: str,
                  markers_only: Sequence[str] = ()) -> str:
    """A line plot of named (x, y) series; series named in `markers_only` are drawn as dots only."""
    width, height, left, right, top, bottom = 420, 240, 54, 12, 28, 40
    points = [p for values in series.values() for p in values if math.isfinite(p[1])]
    xs = [p[0] for p in points] or [0.0, 1.0]
    ys = [p[1] for p in points] or [0.0, 1.0]
    x0, x1 = min(xs), max(max(xs), min(xs) + 1)
    y0, y1 = _padded(min(ys), max(ys))

    def sx(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * (width - left - right)

    def sy(y: float) -> float:
        return height - bottom - (y - y0) / (y1 - y0) * (height - top - bottom)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot line" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
             f'<text x="4" y="16" font-size="13" font-weight="bold">{escape(title)}</text>',
             _axes(sx, sy, x0, x1, y0, y1, width, height, left, bottom, x_label, y_label)]
    for k, (name, values) in enumerate(series.items()):
        color = PALETTE[k % len(PALETTE)]
        finite = [(sx(x), sy(y)) for x, y in values if math.isfinite(y)]
        if name not in markers_only and len(finite) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in finite)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        parts.extend(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{color}"/>' for x, y in finite)
        parts.append(f'<text x="{width - right - 4}" y="{top + 14 * k + 6}" font-size="11" text-anchor="end" '
                     f'fill="{color}">{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _padded(low: float, high: float) -> tuple[float, float]:
    """An axis range around [low, high] with 8 % margins (a unit range around a single value)."""
    if high - low < 1e-9:
        return low - 0.5, high + 0.5
    margin = 0.08 * (high - low)
    return low - margin, high + margin


def _axes(sx, sy, x0: float, x1: float, y0: float, y1: float, width: int, height: int, left: int, bottom: int,
          x_label: str, y_label: str) -> str:
    """Axis lines, x ticks (`x_ticks`), five y ticks and the labels."""
    base = height - bottom
    parts = [f'<line x1="{left}" y1="{base}" x2="{width - 12}" y2="{base}" stroke="#333"/>',
             f'<line x1="{left}" y1="{base}" x2="{left}" y2="28" stroke="#333"/>']
    for x in x_ticks(x0, x1):
        parts.append(f'<text x="{sx(x):.1f}" y="{base + 14}" font-size="10" text-anchor="middle">'
                     f'{_tick_label(x)}</text>')
    for y in np.linspace(y0, y1, 5):
        parts.append(f'<line x1="{left - 3}" y1="{sy(y):.1f}" x2="{width - 12}" y2="{sy(y):.1f}" stroke="#ddd"/>'
                     f'<text x="{left - 5}" y="{sy(y) + 3:.1f}" font-size="10" text-anchor="end">{y:.3g}</text>')
    parts.append(f'<text x="{(left + width) / 2}" y="{height - 6}" font-size="11" '
                 f'text-anchor="middle">{escape(x_label)}</text>')
    parts.append(f'<text x="12" y="{(height - bottom) / 2 + 20}" font-size="11" text-anchor="middle" '
                 f'transform="rotate(-90 12 {(height - bottom) / 2 + 20})">{escape(y_label)}</text>')
    return "".join(parts)


def x_ticks(x0: float, x1: float, most: int = 8) -> list[float]:
    """Every integer from x0 to x1 where there are at most `most` (iterations), else at most `most` round values
    (1, 2 or 5 × a power of ten apart: a learning curve's env steps run to hundreds of thousands)."""
    step = 1.0
    if x1 - x0 > most:
        least = (x1 - x0) / most
        power = 10.0 ** math.floor(math.log10(least))
        step = next(m * power for m in (1, 2, 5, 10) if m * power >= least)
    first = math.ceil(x0 / step) * step
    return [first + k * step for k in range(int((x1 - first) / step + 1e-9) + 1)]


def _tick_label(x: float) -> str:
    """'3' for an iteration, '150k' for 150 000 env steps."""
    return f"{x / 1000:g}k" if abs(x) >= 10_000 else f"{x:g}"

