"""The report's plots as inline SVG: drawn here, so the page needs no script or library.

Each plot is a bar chart of bins computed from the aggregate's per-seed
arrays: failures by seed range (stacked by status), run time per seed and
virtual seconds per wall second (histograms, on a log axis when the values
span more than two decades). Every bar carries a <title>, so hovering shows
its exact range and count.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from seedbed._harness.report._aggregate import Aggregate

WIDTH, HEIGHT = 640, 240
WIDE = 1120  # the seed-range plot spans the page
LEFT, RIGHT, TOP, BOTTOM = 56, 14, 14, 48
STATUS_CLASSES = ("pass", "fail", "crash", "timeout")


@dataclass(frozen=True)
class Bar:
    """One bin: its label for the tooltip and its stacked segments (count, css class)."""

    tooltip: str
    segments: tuple[tuple[int, str], ...]

    @property
    def height(self) -> int:
        return sum(count for count, _ in self.segments)


def failures_by_seed_range(aggregate: Aggregate, bins: int = 100) -> str:
    """Failing seeds per seed range, stacked by status: where in the sweep failures cluster."""
    seeds, codes = aggregate.seeds, aggregate.status_codes
    if not seeds:
        return _empty("no seeds")
    low, high = min(seeds), max(seeds)
    width = max(1, math.ceil((high - low + 1) / bins))
    count = min(bins, int((high - low) // width) + 1)
    tallies = [[0, 0, 0, 0] for _ in range(count)]
    for seed, code in zip(seeds, codes, strict=True):
        tallies[int((seed - low) // width)][code] += 1
    bars = []
    for index, tally in enumerate(tallies):
        first = int(low) + index * width
        failed = tally[1] + tally[2] + tally[3]
        tooltip = f"seeds {first:,}-{first + width - 1:,}: {failed:,} failed of {sum(tally):,}"
        segments = tuple((tally[code], STATUS_CLASSES[code]) for code in (1, 2, 3))
        bars.append(Bar(tooltip, segments))
    span = count * width
    labels = [f"{int(low + span * q):,}" for q in (0, 0.25, 0.5, 0.75)] + [f"{int(high):,}"]
    return _chart(bars, labels, "failing seeds", "seed", width=WIDE)


def run_time_histogram(aggregate: Aggregate, bins: int = 40) -> str:
    """How long each seed took on the wall clock: the slow tail is where budgets go."""
    return _histogram(aggregate.wall_times, bins, "seeds", "wall seconds per seed", "s")


def speed_histogram(aggregate: Aggregate, bins: int = 40) -> str:
    """Virtual seconds simulated per wall second, per seed: how far each run compressed time."""
    rates = array("d")
    for virtual, wall in zip(aggregate.virtual_times, aggregate.wall_times, strict=True):
        if wall > 0 and virtual == virtual:  # NaN: a crashed or timed-out seed
            rates.append(virtual / wall)
    return _histogram(rates, bins, "seeds", "virtual seconds per wall second", "x")


def _histogram(values: Sequence[float], bins: int, y_label: str, x_label: str, unit: str) -> str:
    if not values:
        return _empty("no data")
    low, high = min(values), max(values)
    logarithmic = low > 0 and high / low > 100
    edges = _edges(low, high, bins, logarithmic=logarithmic)
    counts = [0] * (len(edges) - 1)
    last = len(counts) - 1
    if logarithmic:
        base, step = math.log(edges[0]), math.log(edges[-1] / edges[0]) / len(counts)
        for value in values:
            counts[min(last, int((math.log(value) - base) / step))] += 1
    else:
        base, step = edges[0], (edges[-1] - edges[0]) / len(counts)
        for value in values:
            counts[min(last, int((value - base) / step))] += 1
    bars = [
        Bar(f"{_number(edges[i])}{unit}-{_number(edges[i + 1])}{unit}: {n:,} seeds", ((n, "bin"),))
        for i, n in enumerate(counts)
    ]
    quarters = [edges[round(q * (len(edges) - 1))] for q in (0, 0.25, 0.5, 0.75, 1)]
    labels = [f"{_number(edge)}{unit}" for edge in quarters]
    scale = " (log scale)" if logarithmic else ""
    return _chart(bars, labels, y_label, x_label + scale)


def _edges(low: float, high: float, bins: int, *, logarithmic: bool) -> list[float]:
    if high <= low:  # one value: one bin around it
        return [low, low + (abs(low) or 1.0)]
    if logarithmic:
        ratio = (high / low) ** (1 / bins)
        return [low * ratio**i for i in range(bins)] + [high]
    step = (high - low) / bins
    return [low + step * i for i in range(bins)] + [high]


def _chart(
    bars: list[Bar], labels: list[str], y_label: str, x_label: str, *, width: int = WIDTH
) -> str:
    """A bar chart with a y axis of round ticks; bars fill the plot area's width."""
    tallest = max((bar.height for bar in bars), default=0)
    top = _nice_ceiling(tallest)
    plot_w, plot_h = width - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / len(bars)
    parts = [_axes(top, plot_w, plot_h, y_label, x_label, labels)]
    for index, bar in enumerate(bars):
        x, base = LEFT + index * slot + slot * 0.08, float(TOP + plot_h)
        parts.append(f"<g><title>{escape(bar.tooltip)}</title>")
        for count, css in bar.segments:
            if not count:
                continue
            h = max(plot_h * count / top, 1.0)
            base -= h
            parts.append(
                f'<rect class="{css}" x="{x:.1f}" y="{base:.1f}" '
                f'width="{slot * 0.84:.1f}" height="{h:.1f}" rx="1.5"/>'
            )
        parts.append(f'<rect class="hit" x="{x:.1f}" y="{TOP}" width="{slot * 0.84:.1f}" '
                     f'height="{plot_h}"/></g>')  # fmt: skip
    return _svg("".join(parts), width)


def _axes(
    top: int, plot_w: float, plot_h: float, y_label: str, x_label: str, labels: list[str]
) -> str:
    parts = []
    for i in range(5):
        value = top * i / 4
        y = TOP + plot_h - plot_h * i / 4
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}"/>'
        )
        parts.append(f'<text class="tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
                     f"{_number(value)}</text>")  # fmt: skip
    base = TOP + plot_h
    last = len(labels) - 1
    for index, label in enumerate(labels):  # evenly spaced along the axis, ends flush
        anchor = "start" if index == 0 else "end" if index == last else "middle"
        x = LEFT + plot_w * index / max(last, 1)
        parts.append(f'<text class="tick" x="{x:.1f}" y="{base + 16}" text-anchor="{anchor}">'
                     f"{escape(label)}</text>")  # fmt: skip
    parts.append(f'<text class="label" x="{LEFT + plot_w / 2}" y="{base + 37}" '
                 f'text-anchor="middle">{escape(x_label)}</text>')  # fmt: skip
    parts.append(f'<text class="label" transform="translate(13 {TOP + plot_h / 2}) rotate(-90)" '
                 f'text-anchor="middle">{escape(y_label)}</text>')  # fmt: skip
    return "".join(parts)


def _svg(body: str, width: int = WIDTH) -> str:
    return (
        f'<svg class="plot" viewBox="0 0 {width} {HEIGHT}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg" preserveAspectRatio="xMidYMid meet">{body}</svg>'
    )


def _empty(text: str) -> str:
    return _svg(
        f'<text class="label" x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">{text}</text>'
    )


def _nice_ceiling(value: int) -> int:
    """The top of the y axis: four whole ticks of 1, 2, 3 or 5 times a power of ten."""
    quarter, magnitude = max(value, 1) / 4, 1
    while True:
        for step in (1, 2, 3, 5):
            if step * magnitude >= quarter:
                return 4 * step * magnitude
        magnitude *= 10


def _number(value: float) -> str:
    """Compact numbers for ticks and tooltips: 1,200 / 3.5 / 0.012 / 2.1e-05."""
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:.0f}" if value == int(value) else f"{value:.1f}"
    if magnitude >= 0.01:
        return f"{value:.3g}"
    return f"{value:.2g}"
