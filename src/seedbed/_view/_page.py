"""The view page: one self-contained HTML file holding the diagram's data and its script.

The data goes in as JSON inside a `<script type="application/json">` block,
with `<`, `>` and `&` written as `\\u` escapes (and every non-ASCII character,
by `ensure_ascii`), so no run-derived string can close the block or open a
comment; the script reads it with `JSON.parse` and puts every string on the
page through `textContent`. The Content-Security-Policy allows exactly this
page's one script and one style, by hash, and no fetch of any kind.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape
from pathlib import Path
from typing import IO

from seedbed._core.contract import require
from seedbed._view._embed import embed_json
from seedbed._view._model import Diagram
from seedbed._view._perf import render as render_perf
from seedbed._view._spool import PointCodec, Spool

SCRIPT = (Path(__file__).parent / "_script.js").read_text(encoding="utf-8")

CSS = """
:root { --ink: #1d2330; --muted: #5d6677; --line: #d5d9e0; --bg: #f6f7f9;
  --mono: ui-monospace, Menlo, Consolas, "DejaVu Sans Mono", monospace; }
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.45 system-ui, "DejaVu Sans", sans-serif; color: var(--ink);
  background: var(--bg); }
header { padding: 10px 16px; border-bottom: 1px solid var(--line); background: #fff; }
h1 { font-size: 17px; margin: 0 0 4px; }
#summary, #window { color: var(--muted); unicode-bidi: isolate; }
.controls button { margin-right: 4px; }
.filter-row { margin: 3px 0; display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
.filter-row label { display: inline-flex; gap: 3px; align-items: center; }
.filter-row span { unicode-bidi: isolate; direction: ltr; }
.layout { display: flex; height: calc(100vh - 150px); min-height: 420px; }
.board { flex: 1; overflow: auto; background: #fff; }
#lanes { display: flex; width: max-content; min-width: 100%; position: sticky; top: 0;
  background: #fff; z-index: 1; border-bottom: 1px solid var(--line); }
.lane-name { flex: none; display: inline-block; text-align: center; overflow: hidden;
  white-space: nowrap; text-overflow: ellipsis; font-family: var(--mono); padding: 4px;
  unicode-bidi: isolate; direction: ltr; }
.lane-name.off { color: #bbb; }
#diagram { display: block; height: calc(100% - 30px); min-height: 380px; }
aside { width: 340px; padding: 10px 14px; border-left: 1px solid var(--line); overflow: auto;
  background: #fff; }
dl#details { display: grid; grid-template-columns: auto 1fr; gap: 2px 10px; margin: 0; }
dl#details dt { color: var(--muted); }
dl#details dd { margin: 0; font-family: var(--mono); word-break: break-all;
  unicode-bidi: isolate; direction: ltr; }
line.lane { stroke: #c9ced8; stroke-width: 2; }
text { font: 11px var(--mono); fill: var(--muted); direction: ltr; unicode-bidi: isolate; }
.hit { cursor: pointer; }
.point { fill: #3461c1; stroke: #fff; stroke-width: 1; }
.point.draw { fill: #9aa3b2; }
.point.crash, .point.netcrash { fill: #8e44ad; }
.point.start, .point.netstart { fill: #2f9e6e; }
.point.failure { fill: #d64545; }
.point.fault, .point.netlink { fill: #e08a1e; }
.point.upgrade, .point.stop { fill: #0f8b8d; }
.arrow line { stroke: #3461c1; stroke-width: 1.3; fill: none; }
.arrow line.wide { stroke: transparent; stroke-width: 9; }
.arrow.held line:first-child { stroke: #e08a1e; stroke-dasharray: 5 3; }
.arrow.dropped line:first-child, .arrow.lost line:first-child { stroke: #d64545;
  stroke-dasharray: 2 2; }
.arrow .cross { stroke: #d64545; stroke-width: 2.5; }
marker path { fill: #3461c1; }
.span { fill: #e08a1e; opacity: 0.18; }
.span.crash { fill: #8e44ad; opacity: 0.22; }
.span.partition { fill: #d64545; opacity: 0.16; }
.span.clog { fill: #e08a1e; opacity: 0.22; }
.span.disk_fault { fill: #6b4f2a; opacity: 0.2; }
.span.link_stall { fill: #2a7ab0; opacity: 0.16; }
.op { fill: #2f9e6e; opacity: 0.55; }
.op.fail { fill: #d64545; } .op.info, .op.open { fill: #9aa3b2; }
.op.blamed { fill: #d64545; opacity: 0.9; stroke: #7a1010; stroke-width: 2; }
#checks h3 { font-size: 13px; color: #d64545; margin: 10px 0 4px; unicode-bidi: isolate; }
pre.explanation { font: 11px/1.35 var(--mono); white-space: pre-wrap; word-break: break-all;
  background: #fbeaea; padding: 6px; margin: 4px 0 10px; unicode-bidi: isolate; direction: ltr;
  max-height: 260px; overflow: auto; }
.density { fill: #3461c1; opacity: 0.35; }
.failure rect { fill: #d64545; }
.failure text { fill: #d64545; font-weight: 700; }
#perf { background: #fff; padding: 8px 16px 16px; border-top: 1px solid var(--line); }
#perf h2 { font-size: 15px; margin: 4px 0; }
.perf-plot { display: block; margin: 8px 0 16px; max-width: 100%; height: auto; }
.perf-plot .axis, .perf-plot .tick { stroke: #5d6677; }
.perf-plot .grid { stroke: #eceef2; }
.perf-plot .plot-title { fill: var(--ink); font-weight: 600; }
.perf-plot .fault { fill: #e08a1e; opacity: 0.16; }
.perf-plot .fault.crash { fill: #8e44ad; opacity: 0.2; }
.perf-plot .fault.partition { fill: #d64545; opacity: 0.14; }
.perf-plot .fault.disk_fault { fill: #6b4f2a; opacity: 0.18; }
.perf-plot .fault-label { fill: #7a4a10; font-size: 10px; }
.perf-plot .rate { fill: none; stroke-width: 1.6; }
.perf-plot .rate.ok, .perf-plot g.op.ok line { stroke: #2f9e6e; }
.perf-plot .rate.fail, .perf-plot g.op.fail line { stroke: #d64545; }
.perf-plot .rate.info, .perf-plot g.op.info line { stroke: #9aa3b2; }
.perf-plot g.op line { stroke-width: 2; }
"""


def _digest(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


CSP = (
    f"default-src 'none'; script-src 'sha256-{_digest(SCRIPT)}'; "
    f"style-src 'sha256-{_digest(CSS)}'; base-uri 'none'; form-action 'none'"
)


def write_page(diagram: Diagram, out: IO[str], *, generated_by: str) -> None:
    """Write the whole page to `out`, the long columns copied in as they are."""
    seed = diagram.meta.get("header", {}).get("seed")
    title = escape(f"seedbed view: seed {seed}", quote=True)
    perf = render_perf(diagram.ops, diagram.faults, int(diagram.meta.get("end_ns") or 0))
    to_perf = '<button id="to-perf" type="button">latency and throughput</button>' if perf else ""
    out.write(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{CSS}</style></head><body>"
        f'<header><h1>{title}</h1><div id="summary"></div>'
        '<div class="controls"><button id="zoom-in" type="button">zoom in (+)</button>'
        '<button id="zoom-out" type="button">zoom out (-)</button>'
        '<button id="zoom-reset" type="button">whole run</button>'
        f'<button id="to-failure" type="button">go to the failure</button>{to_perf} '
        '<span id="window"></span></div><div id="filters"></div></header>'
        '<div class="layout"><div class="board"><div id="lanes"></div>'
        '<svg id="diagram" xmlns="http://www.w3.org/2000/svg"></svg></div>'
        '<aside><div id="checks"></div><h2>Details</h2>'
        '<p class="hint">Click an event, arrow or shaded span. '
        'Wheel zooms, drag or shift+wheel pans.</p><dl id="details"></dl>'
        f'<p class="hint">{escape(generated_by)}</p></aside></div>{perf}'
        '<script type="application/json" id="trace-data">'
    )
    out.write(embed_json(diagram.small_parts())[:-1])  # the object, left open
    columns = (("dtimes", diagram.times), ("points", diagram.points), ("arrows", diagram.arrows))
    for key, column in columns:
        require(isinstance(column, Spool), "the page is written from spooled columns")
        assert isinstance(column, Spool)  # for mypy: require does not narrow
        out.write(f',"{key}":[')
        column.copy_to(out)
        out.write("]")
    codec = diagram.points.encode if isinstance(diagram.points, Spool) else None
    if isinstance(codec, PointCodec):  # the tables the points refer to
        out.write(
            f',"kinds":{embed_json(list(codec.kinds))},"texts":{embed_json(list(codec.texts))}'
        )
    out.write(f"}}</script><script>{SCRIPT}</script></body></html>\n")
