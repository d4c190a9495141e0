"""Stacked bar charts as plain shapes for an SVG template (issue 33 item 3): no charting
library, no script. Each bar segment carries its link (the sessions behind it), its
series' colour class and a title (what a pointer or a screen reader is told).

The SVG is drawn in a fixed ``WIDTH`` x ``HEIGHT`` box scaled to the page's width; text is
left to the HTML around it (the highest value, the first and last period), so it stays
readable on a phone when the bars shrink.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date

#: The drawing box (SVG user units).
WIDTH, HEIGHT = 600, 160
#: Series drawn in their own colour; the others are summed as "other".
MAX_SERIES = 6
OTHER = "other"


@dataclass(frozen=True, slots=True)
class Segment:
    """One rectangle: position and size in SVG units, colour class, link and title."""

    x: float
    y: float
    width: float
    height: float
    css: str
    href: str
    title: str


@dataclass(frozen=True, slots=True)
class Chart:
    """A chart ready to draw: its segments, the legend (series name, colour class), the top of
    the scale as text, and the first and last period shown."""

    segments: list[Segment]
    legend: list[tuple[str, str]]
    top: str
    first: str
    last: str


def series_order(totals: dict[str, float]) -> list[str]:
    """The series with their own colour: the :data:`MAX_SERIES` largest, largest first."""
    ranked = sorted(totals, key=lambda s: (-totals[s], s))
    return ranked[:MAX_SERIES]


def colour_of(series: str, kept: list[str]) -> str:
    """The CSS class of a series (``s0``… for kept ones, ``s-other`` for the rest)."""
    return f"s{kept.index(series)}" if series in kept else "s-other"


def stacked(
    periods: Sequence[date],
    values: dict[tuple[date, str], float],
    kept: list[str],
    href: Callable[[date, str], str],
    label: Callable[[float], str],
) -> Chart:
    """Bars for ``periods`` (in order, every one drawn, empty ones too), each a stack of the
    ``kept`` series' values then the rest as "other" (``href(period, series)`` links a
    segment; "other" links to the whole period, ``href(period, "")``)."""
    by_period: dict[date, list[tuple[str, float]]] = {p: [] for p in periods}
    for (period, series), value in values.items():
        if period in by_period and value > 0:
            by_period[period].append((series, value))
    top = max((sum(v for _, v in parts) for parts in by_period.values()), default=0.0)
    step = WIDTH / max(len(periods), 1)
    gap = min(2.0, step * 0.2)
    segments: list[Segment] = []
    for i, period in enumerate(periods):
        merged: dict[str, float] = {}
        for series, value in by_period[period]:
            key = series if series in kept else OTHER
            merged[key] = merged.get(key, 0.0) + value
        y = float(HEIGHT)
        for series in [*kept, OTHER]:
            value = merged.get(series, 0.0)
            if value <= 0 or top <= 0:
                continue
            height = value / top * HEIGHT
            y -= height
            name = series or "(not recorded)"
            segments.append(
                Segment(
                    x=round(i * step + gap / 2, 2),
                    y=round(y, 2),
                    width=round(max(step - gap, 0.5), 2),
                    height=round(max(height, 0.5), 2),
                    css=colour_of(series, kept) if series != OTHER else "s-other",
                    href=href(period, "" if series == OTHER else series),
                    title=f"{period.isoformat()} · {name}: {label(value)}",
                )
            )
    legend = [(s or "(not recorded)", colour_of(s, kept)) for s in kept]
    if any(series not in kept for (_, series) in values):
        legend.append((OTHER, "s-other"))
    return Chart(
        segments=segments,
        legend=legend,
        top=label(top),
        first=periods[0].isoformat() if periods else "",
        last=periods[-1].isoformat() if periods else "",
    )


__all__ = ["HEIGHT", "MAX_SERIES", "WIDTH", "Chart", "Segment", "series_order", "stacked"]
