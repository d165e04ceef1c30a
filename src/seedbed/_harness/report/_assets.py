"""The report page's style and its one script, inlined into every page.

The page loads nothing: its Content-Security-Policy forbids every fetch, so it
opens the same offline, from an attachment or a CI artifact. The script only
copies replay commands; every plot is SVG drawn on the server.
"""

from __future__ import annotations

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

CSS = """
:root {
  --bg: #f6f7f9; --card: #ffffff; --ink: #1d2330; --muted: #5d6677; --line: #e3e6ec;
  --pass: #2f9e6e; --fail: #d64545; --crash: #8e44ad; --timeout: #e08a1e;
  --accent: #3461c1; --warn-bg: #fff6e0; --warn-ink: #8a5a00; --bad-bg: #fdecec;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 28px 24px 48px; }
header.top { display: flex; align-items: baseline; gap: 14px; flex-wrap: wrap; }
h1 { font-size: 22px; margin: 0; letter-spacing: -0.01em; }
h1 .target { font-family: var(--mono); font-size: 19px; color: var(--accent); }
.meta { color: var(--muted); margin: 6px 0 20px; }
.meta span + span::before { content: "\\00b7"; margin: 0 8px; }
h2 { font-size: 16px; margin: 34px 0 12px; display: flex; align-items: center; gap: 8px; }
h2 .count { font-weight: 500; color: var(--muted); }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(140px, 1fr)); gap: 12px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 14px 16px; box-shadow: 0 1px 2px rgba(20, 30, 50, 0.04); }
.stat .value { font-size: 26px; font-weight: 650; font-variant-numeric: tabular-nums; }
.stat .name { color: var(--muted); font-size: 12px; text-transform: uppercase;
  letter-spacing: 0.05em; }
.stat.pass .value { color: var(--pass); } .stat.fail .value { color: var(--fail); }
.stat.crash .value { color: var(--crash); } .stat.timeout .value { color: var(--timeout); }
.stat.zero .value { color: var(--muted); }
.ratio { display: flex; height: 10px; border-radius: 5px; overflow: hidden; margin: 14px 0 4px;
  background: var(--line); }
.ratio div { height: 100%; }
.ratio .pass, .dot.pass { background: var(--pass); }
.ratio .fail, .dot.fail { background: var(--fail); }
.ratio .crash, .dot.crash { background: var(--crash); }
.ratio .timeout, .dot.timeout { background: var(--timeout); }
.legend { color: var(--muted); font-size: 12px; display: flex; gap: 14px; flex-wrap: wrap; }
.key { margin-left: 10px; white-space: nowrap; }
.dot { display: inline-block; width: 9px; height: 9px; border-radius: 50%; margin-right: 5px; }
.bucket { margin-bottom: 12px; border-left: 4px solid var(--fail); }
.bucket.crash { border-left-color: var(--crash); }
.bucket.timeout { border-left-color: var(--timeout); }
.bucket-head { display: flex; gap: 12px; align-items: baseline; flex-wrap: wrap; }
.bucket-count { font-size: 20px; font-weight: 650; font-variant-numeric: tabular-nums;
  min-width: 3ch; }
.bucket-name { font-family: var(--mono); font-size: 13.5px; word-break: break-word; flex: 1; }
.pill { font-size: 11.5px; padding: 1px 8px; border-radius: 999px; background: var(--bg);
  border: 1px solid var(--line); color: var(--muted); white-space: nowrap; }
.facts { color: var(--muted); margin: 6px 0 8px; font-size: 13px; }
.facts code, td code { font-family: var(--mono); font-size: 12.5px; color: var(--ink); }
.cmd { display: flex; align-items: stretch; border: 1px solid var(--line); border-radius: 8px;
  overflow: hidden; background: #f9fafc; }
.cmd code { flex: 1; padding: 7px 10px; font-family: var(--mono); font-size: 12.5px;
  white-space: pre-wrap; word-break: break-all; }
.cmd.view { margin-top: 6px; }
.cmd-label { padding: 7px 0 7px 10px; color: var(--muted); font-size: 12px; white-space: nowrap; }
button.copy { border: 0; border-left: 1px solid var(--line); background: var(--card);
  color: var(--accent); font: inherit; font-weight: 600; padding: 0 14px; cursor: pointer; }
button.copy:hover { background: #eef2fb; } button.copy.done { color: var(--pass); }
details { margin-top: 8px; } summary { cursor: pointer; color: var(--accent); font-size: 13px; }
pre.tb { background: #1e2230; color: #e6e8ee; padding: 12px; border-radius: 8px; overflow: auto;
  font-size: 12px; max-height: 360px; }
.plots { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 12px; }
.plots figure.wide { grid-column: 1 / -1; }
.plots figure { margin: 0; }
.plots figcaption { font-weight: 600; margin-bottom: 4px; }
.plots .note { color: var(--muted); font-size: 12.5px; margin: 0 0 6px; }
svg.plot { width: 100%; height: auto; display: block; }
svg.plot .grid { stroke: var(--line); stroke-width: 1; }
svg.plot .tick { fill: var(--muted); font-size: 12px; }
svg.plot .label { fill: var(--muted); font-size: 13px; }
svg.plot rect.bin { fill: var(--accent); } svg.plot rect.fail { fill: var(--fail); }
svg.plot rect.crash { fill: var(--crash); } svg.plot rect.timeout { fill: var(--timeout); }
svg.plot rect.hit { fill: transparent; }
svg.plot g:hover rect.hit { fill: rgba(52, 97, 193, 0.08); }
table { width: 100%; border-collapse: collapse; background: var(--card); font-size: 13px; }
.table-card { padding: 0; overflow: auto; }
th, td { text-align: left; padding: 8px 12px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { font-size: 11.5px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted);
  font-weight: 600; background: #fafbfc; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr:last-child td { border-bottom: 0; }
tr.warn td { background: var(--warn-bg); } tr.bad td { background: var(--bad-bg); }
.badge { font-size: 11.5px; font-weight: 600; padding: 1px 8px; border-radius: 999px;
  white-space: nowrap; }
.badge.ok { background: #e5f5ee; color: #1f7a52; } .badge.warn { background: #ffe9b8;
  color: var(--warn-ink); } .badge.bad { background: #f9d3d3; color: #a32626; }
.meter { width: 90px; height: 6px; background: var(--line); border-radius: 3px;
  display: inline-block; vertical-align: middle; margin-left: 8px; overflow: hidden; }
.meter div { height: 100%; background: var(--accent); }
.muted { color: var(--muted); } .empty { color: var(--muted); padding: 14px 16px; }
.lead { color: var(--muted); margin: -6px 0 10px; font-size: 13px; max-width: 860px; }
.more { color: var(--muted); font-size: 13px; margin-top: 6px; }
footer { color: var(--muted); font-size: 12px; margin-top: 40px; }
"""

SCRIPT = """
(function () {
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return fallback(text); });
    }
    return Promise.resolve(fallback(text));
  }
  function fallback(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); } catch (e) { /* nothing more to try */ }
    document.body.removeChild(area);
  }
  document.querySelectorAll("button.copy").forEach(function (button) {
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-target"));
      if (!source) { return; }
      copyText(source.textContent).then(function () {
        button.textContent = "Copied";
        button.classList.add("done");
        setTimeout(function () { button.textContent = "Copy"; button.classList.remove("done"); },
                   1600);
      });
    });
  });
})();
"""
