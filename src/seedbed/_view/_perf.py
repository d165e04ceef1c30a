"""What the faults did to availability: latency and throughput against virtual time.

Two plots of a run's client operations (those a `Recorder` noted in the
trace), drawn here as inline SVG (no script, so the page's policy stays
as tight), with every fault's interval shaded across both and labelled:

- **latency**: each operation's latency (invocation to completion, on a log
  axis) at the instant it was invoked, green ok, red fail, grey unknown
  (``info``: the client gave up); one that never completed is a mark on
  the top edge. Past `MAX_POINTS` operations, each window shows, per
  outcome, the range of latencies and a dot at the median instead;
- **throughput**: completions per second in each window, one line each
  for ok, fail and info.

So a partition shows as a shaded band in which the dots turn grey and climb
to the timeout while the ok line drops to zero, and the time the system took
to recover after the band ends is there to read. Windows are a round number
of milliseconds or seconds, at most `WINDOWS` over the run. Every mark and
band has a tooltip (``<title>``) with its exact figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

WIDTH, PLOT_HEIGHT = 1100, 200
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 26, 36
MAX_POINTS = 3000  # dots drawn one per operation up to this many
MAX_FAULTS = 400  # fault bands drawn
WINDOWS = 100
OUTCOMES = ("ok", "fail", "info")
_BIDI = {code: f"<U+{code:04X}>" for code in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                                              *range(0x2066, 0x206A))}  # fmt: skip


def _e(value: Any) -> str:
    """Text from the run, safe in the page and shown in order (bidi controls made visible)."""
    return escape(str(value).translate(_BIDI), quote=True)


@dataclass(frozen=True)
class Timed:
    """One operation: invoked at ``start`` and completed at ``end`` (ns; None: never)."""

    start: int
    end: int | None
    outcome: str  # ok, fail, info, open
    f: str

    @property
    def latency_ms(self) -> float | None:
        return None if self.end is None else (self.end - self.start) / 1e6


def timed_ops(ops: Sequence[Sequence[Any]]) -> list[Timed]:
    """The diagram's operation rows as `Timed` (rows from traces without times are left out)."""
    out = []
    for row in ops:
        if len(row) >= 9 and isinstance(row[7], int):
            end = row[8] if isinstance(row[8], int) else None
            outcome = str(row[5]) if end is not None else "open"
            out.append(Timed(row[7], end, outcome, str(row[3])))
    return out


@dataclass(frozen=True)
class Axis:
    """Virtual time on the x axis: 0 to ``end_ns``, cut in windows of ``window_ns``."""

    end_ns: int
    window_ns: int

    def x(self, ns: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * ns / self.end_ns

    @property
    def windows(self) -> int:
        return max(1, math.ceil(self.end_ns / self.window_ns))


def _axis(ops: list[Timed], faults: Sequence[Sequence[Any]], end_ns: int) -> Axis:
    last = max([end_ns, *(op.end or op.start for op in ops), *(f[1] for f in faults), 1])
    # A few operations per window on average (rates of one or none are noise), at
    # most WINDOWS: 1 ms, then 2, 5, 10, 20, 50 ... until that many fit.
    wanted = min(WINDOWS, max(10, len(ops) // 4))
    window = 1_000_000
    while last / window > wanted:
        window = _next_round(window)
    return Axis(last, window)


def _next_round(value: int) -> int:
    """The next of 1, 2, 5 times a power of ten after ``value`` (one of them)."""
    return value * 5 // 2 if str(value)[0] == "2" else value * 2


def _round_up(window: int) -> int:
    """The next of 1, 2, 5 times a power of ten at or above ``window``."""
    power = int(10 ** (len(str(window)) - 1))
    for step in (1, 2, 5, 10):
        if window <= step * power:
            return step * power
    return 10 * power


def render(ops: Sequence[Sequence[Any]], faults: Sequence[Sequence[Any]], end_ns: int) -> str:
    """The two plots as one ``<section>``, or "" when no operation was recorded with times."""
    timed = timed_ops(ops)
    if not timed:
        return ""
    axis = _axis(timed, faults, end_ns)
    shown = list(faults)[:MAX_FAULTS]
    more = len(faults) - len(shown)
    note = f" ({more} more faults not shaded)" if more > 0 else ""
    window = _seconds(axis.window_ns)
    return (
        '<section id="perf"><h2>Latency and throughput</h2>'
        f'<p class="hint">{len(timed)} client operations against virtual time; '
        f"{len(faults)} fault intervals shaded{_e(note)}; windows of {window}. "
        "Hover a mark or a band for its figures.</p>"
        f"{_latency_plot(timed, shown, axis)}{_rate_plot(timed, shown, axis)}</section>"
    )


def _seconds(ns: float) -> str:
    seconds = ns / 1e9
    if seconds >= 1:
        return f"{seconds:g} s"
    return f"{seconds * 1000:g} ms"


# --- the frame: bands, axes -------------------------------------------------------


def _svg(title: str, body: str, axis: Axis, y_ticks: str, y_label: str) -> str:
    bottom = TOP + PLOT_HEIGHT
    ticks = []
    step = _tick_ns(axis.end_ns)
    t = 0
    while t <= axis.end_ns:
        x = axis.x(t)
        ticks.append(
            f'<line class="tick" x1="{x:.1f}" x2="{x:.1f}" y1="{bottom}" y2="{bottom + 4}"/>'
            f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">{_seconds(t)}</text>'
        )
        t += step
    height = TOP + PLOT_HEIGHT + BOTTOM
    return (
        f'<svg class="perf-plot" role="img" aria-label="{_e(title)}" '
        f'xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
        f'height="{height}"><text class="plot-title" x="{LEFT}" y="14">{_e(title)}</text>'
        f"{body}"
        f'<line class="axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{bottom}" y2="{bottom}"/>'
        f'<line class="axis" x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}"/>'
        f"{''.join(ticks)}{y_ticks}"
        f'<text x="{(LEFT + WIDTH) / 2:.0f}" y="{height - 4}" text-anchor="middle">'
        f"virtual time</text>"
        f'<text x="12" y="{TOP + PLOT_HEIGHT / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {TOP + PLOT_HEIGHT / 2:.0f})">{_e(y_label)}</text></svg>'
    )


def _tick_ns(end_ns: int) -> int:
    step = _round_up(max(1, end_ns // 10))
    while end_ns / step > 12:
        step = _next_round(step)
    return step


def _bands(faults: Sequence[Sequence[Any]], axis: Axis, labelled: bool) -> str:
    """Each fault's interval shaded over the plot, with its kind and what it hit."""
    out = []
    free_from = float(LEFT)  # labels never overlap: one where the last one ended
    for start, end, kind, label in faults:
        x0, x1 = axis.x(start), axis.x(max(end, start))
        width = max(x1 - x0, 1.5)
        tip = f"{kind} {label}: {_seconds(start)} to {_seconds(end)}"
        out.append(
            f'<rect class="fault {_e(_kind_class(kind))}" x="{x0:.1f}" y="{TOP}" '
            f'width="{width:.1f}" height="{PLOT_HEIGHT}"><title>{_e(tip)}</title></rect>'
        )
        text = f"{kind} {label}"
        if labelled and x0 >= free_from:
            out.append(
                f'<text class="fault-label" x="{x0 + 2:.1f}" y="{TOP + 10}">{_e(text[:40])}</text>'
            )
            free_from = x0 + 6.5 * min(len(text), 40) + 6
    return "".join(out)


def _kind_class(kind: str) -> str:
    known = ("crash", "partition", "clog", "disk_fault")
    return kind if kind in known else "other"


# --- latency ------------------------------------------------------------------------


def _latency_plot(ops: list[Timed], faults: Sequence[Sequence[Any]], axis: Axis) -> str:
    done = [op.latency_ms for op in ops if op.latency_ms is not None]
    low = max(min(done, default=1.0), 0.001)
    high = max(max(done, default=1.0), low * 10)
    span = math.log10(high) - math.log10(low)

    def y(ms: float) -> float:
        share = (math.log10(max(ms, low)) - math.log10(low)) / span
        return TOP + PLOT_HEIGHT * (1 - share)

    marks = _dots(ops, axis, y) if len(ops) <= MAX_POINTS else _ranges(ops, axis, y)
    ticks = []
    steps = (1, 2, 5) if span < 2.5 else (1,)  # a short axis gets 2 and 5 as well
    decade = 10 ** math.floor(math.log10(low))
    while decade <= high * 1.0001:
        for step in steps:
            value = decade * step
            if low * 0.9999 <= value <= high * 1.0001:
                yy = y(value)
                ticks.append(
                    f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{yy:.1f}" '
                    f'y2="{yy:.1f}"/><text x="{LEFT - 6}" y="{yy + 4:.1f}" '
                    f'text-anchor="end">{value:g} ms</text>'
                )
        decade *= 10
    body = _bands(faults, axis, labelled=True) + marks + _legend(("ok", "fail", "info", "open"))
    return _svg("latency of each operation, by the instant it was invoked", body, axis,
                "".join(ticks), "latency (log)")  # fmt: skip


def _dots(ops: list[Timed], axis: Axis, y: Any) -> str:
    out = []
    for op in ops:
        x = axis.x(op.start)
        latency = op.latency_ms
        if latency is None:
            tip = f"{op.f}: no response (invoked at {_seconds(op.start)})"
            out.append(_no_response(x, tip))
            continue
        tip = f"{op.f}: {op.outcome}, {latency:.3f} ms (invoked at {_seconds(op.start)})"
        out.append(
            f'<circle class="op {_e(op.outcome)}" cx="{x:.1f}" cy="{y(latency):.1f}" r="2.2">'
            f"<title>{_e(tip)}</title></circle>"
        )
    return "".join(out)


def _ranges(ops: list[Timed], axis: Axis, y: Any) -> str:
    """Per window and outcome: a bar over the latencies' range, a dot at the median."""
    cells: dict[tuple[int, str], list[float]] = {}
    unanswered: dict[int, int] = {}
    for op in ops:
        window = min(op.start // axis.window_ns, axis.windows - 1)
        if op.latency_ms is None:
            unanswered[window] = unanswered.get(window, 0) + 1
        else:
            cells.setdefault((window, op.outcome), []).append(op.latency_ms)
    out = []
    for (window, outcome), latencies in sorted(cells.items()):
        latencies.sort()
        middle = latencies[len(latencies) // 2]
        x = axis.x((window + 0.5) * axis.window_ns) + OUTCOMES.index(outcome) * 2 - 2
        tip = (
            f"{_seconds(window * axis.window_ns)}: {len(latencies)} {outcome}, latency "
            f"{latencies[0]:.3f} to {latencies[-1]:.3f} ms, median {middle:.3f} ms"
        )
        out.append(
            f'<g class="op {_e(outcome)}"><title>{_e(tip)}</title>'
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y(latencies[0]):.1f}" '
            f'y2="{y(latencies[-1]):.1f}"/><circle cx="{x:.1f}" cy="{y(middle):.1f}" r="2.2"/></g>'
        )
    for window, count in sorted(unanswered.items()):
        x = axis.x((window + 0.5) * axis.window_ns)
        tip = f"{_seconds(window * axis.window_ns)}: {count} with no response"
        out.append(_no_response(x, tip))
    return "".join(out)


def _no_response(x: float, tip: str) -> str:
    """A mark on the plot's top edge: an operation that never completed."""
    mark = f'<path class="op open" d="M{x - 3:.1f},{TOP - 6} h6 l-3,5 z">'
    return f"{mark}<title>{_e(tip)}</title></path>"


def _legend(outcomes: Sequence[str]) -> str:
    names = {"ok": "ok", "fail": "fail", "info": "unknown (info)", "open": "no response"}
    out, x = [], WIDTH - RIGHT - 330
    for outcome in outcomes:
        out.append(
            f'<g class="legend op {outcome}"><circle cx="{x}" cy="10" r="4"/>'
            f'<text x="{x + 8}" y="14">{names[outcome]}</text></g>'
        )
        x += 20 + 7 * len(names[outcome])
    return "".join(out)


# --- throughput -----------------------------------------------------------------------


def _rate_plot(ops: list[Timed], faults: Sequence[Sequence[Any]], axis: Axis) -> str:
    counts = {outcome: [0] * axis.windows for outcome in OUTCOMES}
    for op in ops:
        if op.end is not None and op.outcome in counts:
            counts[op.outcome][min(op.end // axis.window_ns, axis.windows - 1)] += 1
    per_second = 1e9 / axis.window_ns
    top = max(1.0, *(c * per_second for row in counts.values() for c in row))
    bottom = TOP + PLOT_HEIGHT

    def y(rate: float) -> float:
        return bottom - PLOT_HEIGHT * rate / top

    lines = []
    for outcome, row in counts.items():
        points = " ".join(  # a step per window: the rate held over the whole window
            f"{axis.x(min(w + edge, axis.end_ns / axis.window_ns) * axis.window_ns):.1f},"
            f"{y(c * per_second):.1f}"
            for w, c in enumerate(row)
            for edge in (0, 1)
        )
        total = sum(row)
        lines.append(
            f'<polyline class="rate {outcome}" points="{points}">'
            f"<title>{outcome}: {total} completions</title></polyline>"
        )
    ticks = "".join(
        f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>'
        f'<text x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}/s</text>'
        for v in _rate_ticks(top)
    )
    body = _bands(faults, axis, labelled=False) + "".join(lines) + _legend(OUTCOMES)
    title = f"completions per second, by outcome (windows of {_seconds(axis.window_ns)})"
    return _svg(title, body, axis, ticks, "rate")


def _rate_ticks(top: float) -> list[float]:
    step = float(_round_up(max(1, math.ceil(top / 4))))
    return [step * i for i in range(int(top // step) + 1)]
