"""`seedbed view`'s latency and throughput plots: operations and faults against virtual time.

The small world of `_viewworld` makes 20 echo requests through a partition
(120-200 ms), a clog (270-330 ms) and a server crash (400-450 ms); requests
caught by them time out. The plots must put each fault where it was, once,
and each operation at its instant with its latency and outcome. How the
page looks in a browser is `test_view_browser`'s.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _viewworld import HOSTILE, world

from seedbed._view import build, write_view
from seedbed._view._perf import MAX_POINTS, render, timed_ops


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("perf") / "world.trace"
    world(3, path)
    return path


def test_each_fault_is_one_interval_at_its_virtual_times(recorded: Path) -> None:
    # Each at the exact time of the step that began and ended it (the
    # trace's position markers): the timer's instant plus a few us of CPU.
    planned = [
        (120, 200, "partition", "cli -> srv"),
        (120, 200, "partition", "srv -> cli"),
        (270, 330, "clog", "cli -> srv"),
        (270, 330, "clog", "srv -> cli"),
        (400, 450, "crash", "srv"),
    ]
    faults = sorted(build(recorded).faults)
    assert [(kind, what) for _a, _b, kind, what in faults] == [p[2:] for p in planned]
    for (start, end, _kind, _what), (a_ms, b_ms, _k, _w) in zip(faults, planned, strict=True):
        assert a_ms * 1e6 <= start < a_ms * 1e6 + 100_000
        assert b_ms * 1e6 <= end < b_ms * 1e6 + 100_000


def test_each_operation_has_its_instants_and_the_faults_explain_the_timeouts(
    recorded: Path,
) -> None:
    ops = timed_ops(build(recorded).ops)
    assert len(ops) == 20 and all(op.end is not None and op.end > op.start for op in ops)
    failed = [op for op in ops if op.outcome != "ok"]
    assert failed and all(op.outcome == "info" for op in failed)
    faulted = [(120e6, 200e6), (270e6, 330e6), (400e6, 450e6)]
    for op in failed:  # each request that timed out was caught in a fault
        assert any(a <= op.start + 30e6 and op.start <= b for a, b in faulted), op
    timeouts = [op.latency_ms for op in failed if op.start < 350e6]
    assert timeouts and all(latency == pytest.approx(30, abs=0.1) for latency in timeouts)


def test_the_plots_draw_every_operation_and_fault_with_its_figures(recorded: Path) -> None:
    d = build(recorded)
    html = render(d.ops, d.faults, d.meta["end_ns"])
    assert html.count('<svg class="perf-plot"') == 2
    assert len(re.findall(r'<circle class="op (ok|info)"', html)) == 20
    assert html.count('<rect class="fault partition"') == 2 * 2  # both plots
    assert re.search(r"<title>crash srv: 400\.\d+ ms to 450\.\d+ ms</title>", html)
    assert "info, 30.00" in html  # a timed-out request's tooltip: its outcome and latency
    outcomes = [op.outcome for op in timed_ops(d.ops)]
    for outcome in ("ok", "info"):  # each line's tooltip counts its completions
        assert f"<title>{outcome}: {outcomes.count(outcome)} completions</title>" in html
    assert outcomes.count("ok") >= 10 and '<polyline class="rate ok"' in html


def test_many_operations_are_drawn_as_ranges_per_window(recorded: Path) -> None:
    d = build(recorded)
    rows = d.ops * (MAX_POINTS // len(d.ops) + 1)  # past the limit: ranges, not dots
    html = render(rows, d.faults, d.meta["end_ns"])
    assert '<circle class="op' not in html and '<g class="op ok">' in html
    assert len(html) < 200_000


def test_a_run_without_recorded_operations_has_no_plots(tmp_path: Path) -> None:
    assert render([], [[0, 10, "crash", "n1"]], 10) == ""


def test_the_page_has_the_plots_and_a_hostile_node_name_is_text(tmp_path: Path) -> None:
    world(3, tmp_path / "hostile.trace", server=HOSTILE, message=HOSTILE)
    write_view(tmp_path / "hostile.trace", tmp_path / "hostile.html")
    page = (tmp_path / "hostile.html").read_text(encoding="utf-8")
    assert '<section id="perf">' in page and 'id="to-perf"' in page
    shown = HOSTILE.replace("\u202e", "<U+202E>")
    title = f"<title>crash {re.escape(_escaped(shown))}: 400\\.\\d+ ms to 450\\.\\d+ ms</title>"
    assert re.search(title, page)
    assert "<img" not in page and "\u202e" not in page


def _escaped(text: str) -> str:
    from html import escape

    return escape(text, quote=True)
