"""Benchmark: `seedbed view` on a trace of a million events, and its page in Chromium.

Writes a synthetic trace through the real `TraceWriter` (the mix of a store
run's trace: virtual-time jumps, scheduler and latency draws, task starts,
connections whose segments are noted and delivered in chunks, FINs, a crash
and restart now and then, partitions, client operations, one failed
assertion at the end), then:

1. runs `seedbed view TRACE -o PAGE` in a child process: wall seconds and its
   peak RSS (`wait4`'s ru_maxrss), so streaming is measured, not assumed;
2. opens the page in headless Chromium (Playwright, Debian's
   /usr/bin/chromium): seconds from navigation to the page's `data-ready`,
   the JS heap (CDP `Performance.getMetrics`) and the RSS of the renderer
   process(es) that appeared for it; then the time to redraw zoomed in to
   the failure (each event drawn) and zoomed out again (aggregated counts).

Targets (issue 29): the page ready in under 10 s and under 500 MB. It
reports; it never gates (exit 0).

    PYTHONHASHSEED=0 python bench/view.py [--events 1000000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from seedbed._core.tracefile import TraceWriter

CHROMIUM = "/usr/bin/chromium"
NODES = ("n1", "n2", "n3", "n4", "n5")
CLIENTS = ("c1", "c2", "t1", "t2")


def synthetic_trace(path: Path, events: int, seed: int = 0) -> int:
    """Write a trace of at least `events` events to `path`; how many it holds."""
    rng = random.Random(seed)
    header = {"seedbed": "bench", "python": "3", "seed": seed, "options": {}}
    out = TraceWriter(path, header)
    now, number, task = 0, 0, 0
    pending: list[tuple[int, int, str, str]] = []  # (number, offset, src, dst) in flight
    everyone = NODES + CLIENTS
    for name in everyone:
        out.append(("net.start", name))
        out.append(("start", name, 1))
    down: str | None = None
    while out.count < events:
        now += rng.randrange(1_000, 2_000_000)
        out.append(("time", now))
        out.append(("draw", "loop", "which node runs next", rng.randrange(8)))
        if rng.random() < 0.15:
            task += 1
            out.append(("task", task, f"Task-{task}", "Connection.serve"))
        if rng.random() < 0.5 or not pending:  # a send: a segment noted, delivered later
            src, dst = rng.sample(everyone, 2)
            number += 1
            out.append(("net.connect", src, dst, 7000))
            out.append(("draw", "net", f"latency {src}->{dst}", rng.getrandbits(64)))
            out.note("seg", number, 0, 0, src, dst)
            pending.append((number, 0, src, dst))
        else:  # a delivery of the oldest in flight, then its FIN
            conn, offset, src, dst = pending.pop(0)
            size = rng.randrange(20, 400)
            payload = f'b\'{{"op": "append", "key": "k{conn % 9}"}}\''
            out.note("chunk", conn, offset, size, payload)
            out.append(("net.fin", conn))
            out.note("arrive", conn, 1)
        if rng.random() < 0.02:
            client = rng.choice(CLIENTS)
            value = f"('k{number % 9}', 'v')"
            out.note("op", "invoke", f"'{client}'", "append", value, client, 0, 0)
            out.note("op", "ok", f"'{client}'", "append", "None", client, 0, 1)
        if rng.random() < 0.0005:
            if down is None:
                down = rng.choice(NODES)
                out.append(("net.crash", down))
                out.append(("crash", down, 1))
            else:
                out.append(("net.start", down))
                out.append(("start", down, 2))
                down = None
        if rng.random() < 0.0003:
            a, b = rng.sample(NODES, 2)
            out.append(("net.link", a, b, rng.choice(("dropped", "open"))))
    out.append(("assertion failed", "kvstore: the clients' histories check out"))
    count = out.count
    failure = "InvariantViolation: kvstore: the clients' histories check out"
    end = {"end": count, "hash": "0" * 16, "steps": count, "virtual_time_ns": now}
    out.finish({**end, "failure": failure})
    return count


def run_view(trace: Path, page: Path) -> tuple[float, float, str]:
    """`seedbed view TRACE -o PAGE` in a child: wall seconds, peak RSS (MB), its output."""
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "seedbed", "view", str(trace), "-o", str(page)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert child.stdout is not None
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if child.returncode != 0:
        raise SystemExit(f"seedbed view failed ({child.returncode}): {output}")
    return wall, usage.ru_maxrss / 1024, output.strip()


def _page_rss_kb(before: set[int], field: str = "VmRSS") -> int:
    """The page's renderer's RSS (`VmHWM`: its peak so far): the largest renderer
    process started since `before` (Chromium also starts a spare one, about
    70 MB, holding no page)."""
    return max((kb for pid, kb in _renderers(field).items() if pid not in before), default=0)


def _renderers(field: str = "VmRSS") -> dict[int, int]:
    """Chromium renderer processes now running: pid -> `field` (kB) of /proc/PID/status."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            if b"chromium" not in cmdline or b"--type=renderer" not in cmdline:
                continue
            status = (entry / "status").read_text()
        except OSError:
            continue
        rss = next((line.split()[1] for line in status.splitlines() if line.startswith(field)), 0)
        found[int(entry.name)] = int(rss)
    return found


def in_browser(page: Path) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    before = set(_renderers())
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        cdp = tab.context.new_cdp_session(tab)
        cdp.send("Performance.enable")
        started = time.perf_counter()
        tab.goto(page.as_uri(), timeout=120_000)
        tab.wait_for_selector("body[data-ready='1']", timeout=120_000)
        ready = time.perf_counter() - started
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        renderer_kb = _page_rss_kb(before)
        window = tab.locator("#window").inner_text()
        started = time.perf_counter()
        tab.click("#to-failure")
        zoomed_in = time.perf_counter() - started
        exact = tab.locator("circle.point").count()
        started = time.perf_counter()
        tab.click("#zoom-reset")
        zoomed_out = time.perf_counter() - started
        counts = tab.locator("rect.density").count()
        peak_kb = _page_rss_kb(before, "VmHWM")
        cdp.send("HeapProfiler.enable")
        cdp.send("HeapProfiler.collectGarbage")
        settled_kb = _page_rss_kb(before)
        browser.close()
    return {
        "ready_s": ready,
        "js_heap_mb": metrics.get("JSHeapUsedSize", 0) / 1e6,
        "renderer_mb": renderer_kb / 1024,
        "renderer_peak_mb": peak_kb / 1024,
        "renderer_after_gc_mb": settled_kb / 1024,
        "window": window,
        "zoom_in_s": zoomed_in,
        "points_drawn_zoomed_in": exact,
        "zoom_out_s": zoomed_out,
        "density_bands_zoomed_out": counts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    parser.add_argument("--no-browser", action="store_true", help="measure seedbed view only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="seedbed-bench-view-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        trace, page = folder / "big.trace", folder / "big.html"
        started = time.perf_counter()
        count = synthetic_trace(trace, args.events)
        made = time.perf_counter() - started
        print(f"trace:   {count:,} events, {trace.stat().st_size / 1e6:,.0f} MB ({made:.1f} s)")
        wall, peak, said = run_view(trace, page)
        print(f"view:    {wall:.1f} s wall, peak RSS {peak:,.0f} MB; {said}")
        print(f"page:    {page.stat().st_size / 1e6:,.1f} MB")
        if args.no_browser or not Path(CHROMIUM).exists():
            return
        got = in_browser(page)
        print(
            f"browser: ready in {got['ready_s']:.1f} s (target < 10 s); JS heap "
            f"{got['js_heap_mb']:,.0f} MB, renderer RSS {got['renderer_mb']:,.0f} MB "
            f"(peak {got['renderer_peak_mb']:,.0f} MB, after a GC "
            f"{got['renderer_after_gc_mb']:,.0f} MB; target < 500 MB)"
        )
        print(f"         zoomed out: {got['window']}")
        print(
            f"         to the failure: {got['zoom_in_s']:.2f} s, "
            f"{got['points_drawn_zoomed_in']} events drawn one by one; whole run again: "
            f"{got['zoom_out_s']:.2f} s, {got['density_bands_zoomed_out']} count bands"
        )


if __name__ == "__main__":
    main()
