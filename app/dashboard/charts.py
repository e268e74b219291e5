"""Inline SVG charts drawn on the server: bar charts and a line chart, styled only through CSS classes.

No chart library and no script: every chart is a `<svg role="img">` with a title and a description, and the
dashboard shows the same numbers in a table beside it for screen readers and copy-paste.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

WIDTH = 640
"""ViewBox width of every chart; the CSS scales it to the container."""
HEIGHT = 240
"""ViewBox height of the vertical charts."""
_PAD_LEFT, _PAD_RIGHT, _PAD_TOP, _PAD_BOTTOM = 44, 12, 14, 46


@dataclass(frozen=True)
class Bar:
    """One bar: its label on the axis and its value."""

    label: str
    """Axis label."""
    value: float
    """Height of the bar."""
    css: str = ""
    """Extra CSS class (e.g. a stop reason) for colour."""


@dataclass(frozen=True)
class Point:
    """One point of a line chart."""

    label: str
    """X-axis label (a date)."""
    value: float
    """Y value."""
    note: str = ""
    """Tooltip text, e.g. the sample size."""


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000):
        if value <= step:
            return float(step)
    return float(value)


def _fmt(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.2f}"


def _frame(chart_id: str, title: str, desc: str, body: str, height: int = HEIGHT) -> Markup:
    return Markup(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-labelledby="{chart_id}-title {chart_id}-desc" preserveAspectRatio="xMidYMid meet">'
        f'<title id="{chart_id}-title">{escape(title)}</title><desc id="{chart_id}-desc">{escape(desc)}</desc>'
        f"{body}</svg>"
    )


def _y_axis(max_value: float, *, fmt=_fmt, ticks: int = 4) -> str:
    parts = []
    plot_h = HEIGHT - _PAD_TOP - _PAD_BOTTOM
    for k in range(ticks + 1):
        value = max_value * k / ticks
        y = HEIGHT - _PAD_BOTTOM - plot_h * k / ticks
        parts.append(f'<line class="grid" x1="{_PAD_LEFT}" x2="{WIDTH - _PAD_RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text class="tick" x="{_PAD_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(fmt(value))}</text>')
    return "".join(parts)


def bar_chart(chart_id: str, title: str, bars: Sequence[Bar], *, unit: str = "") -> Markup:
    """A vertical bar chart; an empty sequence draws a labelled empty frame."""
    if not bars:
        body = f'<text class="empty" x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">No data yet</text>'
        return _frame(chart_id, title, "No data yet.", body)
    max_value = _nice_max(max(b.value for b in bars))
    plot_w = WIDTH - _PAD_LEFT - _PAD_RIGHT
    plot_h = HEIGHT - _PAD_TOP - _PAD_BOTTOM
    slot = plot_w / len(bars)
    bar_w = min(64.0, max(2.0, slot * 0.72))
    whole = all(float(b.value).is_integer() for b in bars)
    ticks = int(max_value) if whole and max_value <= 4 else 4  # no "0.25 investigations" on small counts
    parts = [_y_axis(max_value, ticks=ticks)]
    label_every = max(1, len(bars) // 12)
    for i, bar in enumerate(bars):
        h = plot_h * bar.value / max_value
        x = _PAD_LEFT + slot * i + (slot - bar_w) / 2
        y = HEIGHT - _PAD_BOTTOM - h
        css = f"bar {escape(bar.css)}".strip()
        parts.append(
            f'<rect class="{css}" x="{x:.1f}" y="{y:.1f}" width="{bar_w:.1f}" height="{h:.1f}">'
            f"<title>{escape(bar.label)}: {escape(_fmt(bar.value))}{escape(unit)}</title></rect>"
        )
        if bar.value:
            parts.append(
                f'<text class="value" x="{x + bar_w / 2:.1f}" y="{y - 3:.1f}" text-anchor="middle">{escape(_fmt(bar.value))}</text>'
            )
        if i % label_every == 0:
            parts.append(
                f'<text class="label" x="{x + bar_w / 2:.1f}" y="{HEIGHT - _PAD_BOTTOM + 16}" text-anchor="middle">'
                f"{escape(bar.label)}</text>"
            )
    desc = "; ".join(f"{b.label}: {_fmt(b.value)}{unit}" for b in bars)
    return _frame(chart_id, title, desc, "".join(parts))


def line_chart(chart_id: str, title: str, points: Sequence[Point], *, max_value: float = 1.0, percent: bool = True) -> Markup:
    """A line chart with dots (e.g. a share over time); values are plotted from 0 to `max_value`."""
    if not points:
        body = f'<text class="empty" x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">No data yet</text>'
        return _frame(chart_id, title, "No data yet.", body)

    def fmt(v: float) -> str:
        return f"{v * 100:.0f}%" if percent else _fmt(v)

    plot_w = WIDTH - _PAD_LEFT - _PAD_RIGHT
    plot_h = HEIGHT - _PAD_TOP - _PAD_BOTTOM
    step = plot_w / max(1, len(points) - 1) if len(points) > 1 else 0
    coords = []
    for i, p in enumerate(points):
        x = _PAD_LEFT + (step * i if len(points) > 1 else plot_w / 2)
        y = HEIGHT - _PAD_BOTTOM - plot_h * min(p.value, max_value) / max_value
        coords.append((x, y))
    parts = [_y_axis(max_value, fmt=fmt)]
    if len(coords) > 1:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
        parts.append(f'<polyline class="line" points="{path}"/>')
    label_every = max(1, len(points) // 8)
    for i, ((x, y), p) in enumerate(zip(coords, points, strict=True)):
        note = f" ({p.note})" if p.note else ""
        parts.append(
            f'<circle class="dot" cx="{x:.1f}" cy="{y:.1f}" r="4"><title>{escape(p.label)}: {escape(fmt(p.value))}'
            f"{escape(note)}</title></circle>"
        )
        if i % label_every == 0:
            parts.append(
                f'<text class="label" x="{x:.1f}" y="{HEIGHT - _PAD_BOTTOM + 16}" text-anchor="middle">{escape(p.label)}</text>'
            )
    desc = "; ".join(f"{p.label}: {fmt(p.value)}" for p in points)
    return _frame(chart_id, title, desc, "".join(parts))


def histogram(values: Sequence[float], *, bins: int = 10, integer: bool = False) -> list[Bar]:
    """Bucket values into at most `bins` equal-width bars labelled by their range."""
    if not values:
        return []
    lo, hi = min(values), max(values)
    if integer:
        lo, hi = int(lo), int(hi)
        width = max(1, -(-(hi - lo + 1) // bins))
        edges = list(range(lo, hi + 1, width))
        bars = []
        for start in edges:
            end = start + width - 1
            count = sum(1 for v in values if start <= v <= end)
            label = str(start) if width == 1 else f"{start}–{end}"
            bars.append(Bar(label, count))
        return bars
    if hi == lo:
        return [Bar(_fmt(round(lo, 1)), len(values))]
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / width))] += 1
    return [Bar(f"{lo + width * k:.0f}–{lo + width * (k + 1):.0f}", c) for k, c in enumerate(counts)]
