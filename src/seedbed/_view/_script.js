"use strict";
// seedbed view: draws the embedded diagram data as SVG. Every string from the
// run reaches the page through textContent (never markup), after `clean`.
(function () {
  const NS = "http://www.w3.org/2000/svg";
  const data = document.getElementById("trace-data");
  const D = JSON.parse(data.textContent);
  data.remove();  // its text (the largest thing on a big run's page) can be freed now
  D.times = new Float64Array(D.dtimes.length);  // spooled as differences: add them up
  for (let i = 0, t = 0; i < D.dtimes.length; i++) { t += D.dtimes[i]; D.times[i] = t; }
  delete D.dtimes;
  for (let i = 0, pos = 0; i < D.points.length; i++) {  // [dpos, lane, kind number, text (number)]
    const point = D.points[i];
    pos += point[0];
    point[0] = pos;
    point[2] = D.kinds[point[2]];
    if (typeof point[3] === "number") point[3] = D.texts[point[3]];
  }
  delete D.texts;
  const LEFT = 90, TOP = 8, BOTTOM = 26, LIMIT = 3000;
  // Lanes share the board's width (every lane in view), between 80 and 150 pixels each.
  const board = document.querySelector(".board");
  const LANE_W = Math.floor(Math.max(80, Math.min(150,
    ((board.clientWidth || 1000) - LEFT - 20) / D.lanes.length)));
  const svg = document.getElementById("diagram");
  const details = document.getElementById("details");
  const last = Math.max(D.times.length - 1, 1);
  let v0 = 0, v1 = last;  // the visible window of positions
  const hiddenLanes = new Set(), hiddenKinds = new Set();

  function clean(text) {
    // Controls and bidirectional overrides shown as escapes: text reads in order.
    return String(text).replace(/[\u0000-\u001f\u007f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
      (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
  }
  function el(name, attrs, parent) {
    const node = document.createElementNS(NS, name);
    for (const key in attrs) node.setAttribute(key, attrs[key]);
    (parent || svg).appendChild(node);
    return node;
  }
  // Measured once per render: reading clientHeight between appends forces a layout each time.
  let drawHeight = 600;
  function height() { return drawHeight; }
  function y(pos) { return TOP + (pos - v0) / Math.max(v1 - v0, 1) * height(); }
  function x(lane) { return LEFT + lane * LANE_W + LANE_W / 2; }
  function visible(pos) { return pos >= v0 && pos <= v1; }
  function seconds(pos) {
    const t = D.times[Math.max(0, Math.min(pos, D.times.length - 1))] || 0;
    return (t / 1e9).toFixed(6) + " s";
  }
  function show(kind, lane, pos, text, extra) {
    details.replaceChildren();
    const rows = [["kind", kind], ["node", D.lanes[lane]], ["event", "#" + pos],
      ["virtual time", seconds(pos)], ["what", text]].concat(extra || []);
    for (const [key, value] of rows) {
      const dt = document.createElement("dt");
      dt.textContent = key;
      const dd = document.createElement("dd");
      dd.textContent = clean(value);
      details.append(dt, dd);
    }
  }
  function clickable(node, handler) {
    node.addEventListener("click", (e) => { e.stopPropagation(); handler(); });
    node.classList.add("hit");
  }

  function drawLanes(group) {
    D.lanes.forEach((name, lane) => {
      if (hiddenLanes.has(lane)) return;
      el("line", {x1: x(lane), x2: x(lane), y1: TOP, y2: TOP + height(), class: "lane"}, group);
    });
    for (let i = 0; i <= 8; i++) {
      const pos = Math.round(v0 + (v1 - v0) * i / 8);
      const label = el("text", {x: 4, y: y(pos) + 4, class: "tick"}, group);
      label.textContent = seconds(pos);
    }
  }
  function drawSpans(group) {
    if (hiddenKinds.has("faults")) return;
    for (const [lane, a, b, kind, text] of D.spans) {
      if (hiddenLanes.has(lane) || b < v0 || a > v1) continue;
      const top = y(Math.max(a, v0)), bottom = y(Math.min(b, v1));
      const rect = el("rect", {x: x(lane) - LANE_W / 2 + 6, width: LANE_W - 12, y: top,
        height: Math.max(bottom - top, 3), class: "span " + (kind === "crash" ? "crash" : kind)}, group);
      clickable(rect, () => show("fault: " + kind, lane, a, text,
        [["until", "#" + b + " (" + seconds(b) + ")"]]));
    }
  }
  function drawOps(group) {
    if (hiddenKinds.has("operations")) return;
    for (const [lane, a, b, f, text, outcome, check] of D.ops) {
      if (hiddenLanes.has(lane) || b < v0 || a > v1) continue;
      const top = y(Math.max(a, v0)), bottom = y(Math.min(b, v1));
      const blamed = check >= 0 ? D.checks[check] : null;
      const rect = el("rect", {x: x(lane) + 10, width: blamed ? 18 : 14, y: top,
        height: Math.max(bottom - top, 4), class: "op " + outcome + (blamed ? " blamed" : "")}, group);
      const extra = [["responded", "#" + b + " (" + seconds(b) + ")"]];
      if (blamed) extra.push(["refused by", blamed.checker + " check"], ["why", blamed.text.split("\n")[0] + " (the whole explanation: above)"]);
      clickable(rect, () => show("operation " + f, lane, a, text, extra));
    }
  }
  function drawArrows(group) {
    if (hiddenKinds.has("messages")) return 0;
    const shown = D.arrows.filter(([a, la, b, lb]) => b >= v0 && a <= v1 &&
      !hiddenLanes.has(la) && !hiddenLanes.has(lb));
    if (shown.length > LIMIT) return shown.length;
    for (const [a, la, b, lb, label, status] of shown) {
      const x1 = x(la), y1 = y(a), x2 = status === "lost" ? x(la) + 30 : x(lb);
      const y2 = status === "lost" ? y(a) + 10 : y(b);
      const g = el("g", {class: "arrow " + status}, group);
      el("line", {x1, y1, x2, y2, "marker-end": status === "ok" || status === "held" ? "url(#head)" : ""}, g);
      el("line", {x1, y1, x2, y2, class: "wide"}, g);  // the area a click lands on
      if (status === "dropped" || status === "lost") {
        el("path", {d: `M${x2 - 5},${y2 - 5}L${x2 + 5},${y2 + 5}M${x2 + 5},${y2 - 5}L${x2 - 5},${y2 + 5}`,
          class: "cross"}, g);
      }
      clickable(g, () => show("message (" + status + ")", la, a, label,
        [["to", D.lanes[lb]], ["arrived", "#" + b + " (" + seconds(b) + ")"]]));
    }
    return 0;
  }
  function firstAt(pos) {  // points are in position order
    let lo = 0, hi = D.points.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (D.points[mid][0] < pos) lo = mid + 1; else hi = mid; }
    return lo;
  }
  function drawPoints(group) {
    const start = firstAt(v0), end = firstAt(v1 + 1);
    if (end - start > LIMIT) return drawDensity(group, start, end);
    for (let i = start; i < end; i++) {
      const [pos, lane, kind, text] = D.points[i];
      if (hiddenLanes.has(lane) || hiddenKinds.has(kind)) continue;
      const dot = el("circle", {cx: x(lane), cy: y(pos), r: kind === "draw" ? 3 : 5,
        class: "point " + kind.replace(/[^a-z]/g, "")}, group);
      clickable(dot, () => show(kind, lane, pos, text));
    }
    return 0;
  }
  function drawDensity(group, start, end) {
    // Too many to draw one by one: counts per lane and band; a click zooms in.
    const bands = 120, counts = new Map();
    for (let i = start; i < end; i++) {
      const [pos, lane, kind] = D.points[i];
      if (hiddenLanes.has(lane) || hiddenKinds.has(kind)) continue;
      const band = Math.floor((pos - v0) / (v1 - v0 + 1) * bands);
      const key = lane * bands + band;
      counts.set(key, (counts.get(key) || 0) + 1);
    }
    let most = 1;
    for (const c of counts.values()) most = Math.max(most, c);
    for (const [key, count] of counts) {
      const lane = Math.floor(key / bands), band = key % bands;
      const a = v0 + (v1 - v0 + 1) * band / bands, b = v0 + (v1 - v0 + 1) * (band + 1) / bands;
      const w = 8 + 40 * count / most;
      const rect = el("rect", {x: x(lane) - w / 2, width: w, y: y(a), height: Math.max(y(b) - y(a), 2),
        class: "density"}, group);
      clickable(rect, () => { v0 = Math.floor(a); v1 = Math.ceil(b); render(); });
    }
    return end - start;
  }
  function drawFailure(group) {
    const f = D.failure;
    if (!f || !visible(f.pos)) return;
    const g = el("g", {class: "failure", id: "failure"}, group);
    el("rect", {x: LEFT, width: D.lanes.length * LANE_W, y: y(f.pos) - 3, height: 6}, g);
    const label = el("text", {x: LEFT + 4, y: y(f.pos) - 6}, g);
    label.textContent = clean("failure: " + brief(f.text));
    clickable(g, () => show("failure", 0, f.pos, f.text));
  }
  function drawHeader() {
    const header = document.getElementById("lanes");
    header.replaceChildren();
    header.style.paddingLeft = LEFT + "px";
    D.lanes.forEach((name, lane) => {
      const cell = document.createElement("span");
      cell.className = "lane-name" + (hiddenLanes.has(lane) ? " off" : "");
      cell.style.width = LANE_W + "px";
      cell.textContent = clean(name);
      cell.title = clean(name);
      header.append(cell);
    });
  }

  function render() {
    drawHeight = Math.max(svg.clientHeight || 700, 200) - TOP - BOTTOM;
    svg.replaceChildren();
    svg.setAttribute("width", LEFT + D.lanes.length * LANE_W + 20);
    const defs = el("defs", {});
    const marker = el("marker", {id: "head", viewBox: "0 0 10 10", refX: 10, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse"}, defs);
    el("path", {d: "M0,0L10,5L0,10z"}, marker);
    const group = el("g", {});
    drawLanes(group);
    drawSpans(group);
    drawOps(group);
    const many = drawArrows(group) + drawPoints(group);
    drawFailure(group);
    drawHeader();
    document.getElementById("window").textContent =
      `events #${v0} to #${v1} of ${last} (${seconds(v0)} to ${seconds(v1)})` +
      (many ? `: ${many} items here, shown as counts; zoom in (wheel, +) for each one` : "");
  }

  function zoom(factor, around) {
    const span = Math.max((v1 - v0) * factor, 10);
    const centre = around === undefined ? (v0 + v1) / 2 : around;
    const share = (centre - v0) / Math.max(v1 - v0, 1);
    v0 = Math.round(centre - span * share);
    v1 = Math.round(v0 + span);
    clampWindow();
    render();
  }
  function clampWindow() {
    const span = Math.min(v1 - v0, last);
    if (v0 < 0) v0 = 0;
    v1 = v0 + span;
    if (v1 > last) { v1 = last; v0 = Math.max(0, last - span); }
  }
  function pan(by) { v0 += by; v1 += by; clampWindow(); render(); }

  svg.addEventListener("wheel", (e) => {
    e.preventDefault();
    const rect = svg.getBoundingClientRect();
    const at = v0 + (e.clientY - rect.top - TOP) / height() * (v1 - v0);
    if (e.shiftKey) pan(Math.round((v1 - v0) * Math.sign(e.deltaY) / 10));
    else zoom(e.deltaY > 0 ? 1.25 : 0.8, at);
  }, {passive: false});
  let drag = null;
  svg.addEventListener("mousedown", (e) => { drag = {y: e.clientY, v0, v1}; });
  window.addEventListener("mouseup", () => { drag = null; });
  window.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const by = Math.round((drag.y - e.clientY) / height() * (drag.v1 - drag.v0));
    v0 = drag.v0 + by; v1 = drag.v1 + by; clampWindow(); render();
  });
  document.getElementById("zoom-in").addEventListener("click", () => zoom(0.5));
  document.getElementById("zoom-out").addEventListener("click", () => zoom(2));
  document.getElementById("zoom-reset").addEventListener("click", () => { v0 = 0; v1 = last; render(); });
  document.getElementById("to-failure").addEventListener("click", () => {
    if (!D.failure) return;
    const span = Math.min(200, last);
    v0 = D.failure.pos - span / 2; v1 = v0 + span; clampWindow(); render();
  });
  const toPerf = document.getElementById("to-perf");  // only when operations were recorded
  if (toPerf) toPerf.addEventListener("click", () => document.getElementById("perf").scrollIntoView());
  window.addEventListener("keydown", (e) => {
    if (e.key === "+" || e.key === "=") zoom(0.5);
    else if (e.key === "-") zoom(2);
    else if (e.key === "ArrowDown") pan(Math.round((v1 - v0) / 10));
    else if (e.key === "ArrowUp") pan(-Math.round((v1 - v0) / 10));
  });

  function checks() {
    // Each history checker's refusal: its explanation, and a button that
    // brings the operations it blames (highlighted on the client lanes) into view.
    const box = document.getElementById("checks");
    D.checks.forEach((check, number) => {
      const blamed = D.ops.filter((op) => op[6] === number);
      const title = document.createElement("h3");
      title.textContent = clean(`the ${check.checker} check refused the history: ` +
        `${blamed.length} operations blamed`);
      const button = document.createElement("button");
      button.type = "button";
      button.className = "show-check";
      button.textContent = "show them on the lanes";
      button.addEventListener("click", () => {
        if (!blamed.length) return;
        const a = blamed.reduce((m, op) => Math.min(m, op[1]), last);
        const b = blamed.reduce((m, op) => Math.max(m, op[2]), 0);
        const pad = Math.max(Math.round((b - a) / 10), 5);
        v0 = a - pad; v1 = b + pad; clampWindow(); render();
      });
      const why = document.createElement("pre");
      why.className = "explanation";
      why.textContent = check.text.split("\n").map(clean).join("\n");
      box.append(title, button, why);
    });
  }

  function filters() {
    const box = document.getElementById("filters");
    const kinds = ["messages", "faults", "operations"];
    for (const point of D.points) if (!kinds.includes(point[2])) kinds.push(point[2]);
    function toggle(label, set, key) {
      const wrap = document.createElement("label");
      const input = document.createElement("input");
      input.type = "checkbox";
      input.checked = true;
      input.addEventListener("change", () => { if (input.checked) set.delete(key); else set.add(key); render(); });
      const text = document.createElement("span");
      text.textContent = clean(label);
      wrap.append(input, text);
      return wrap;
    }
    const nodes = document.createElement("div");
    nodes.className = "filter-row";
    nodes.append("nodes:");
    D.lanes.forEach((name, lane) => nodes.append(toggle(name, hiddenLanes, lane)));
    const kindRow = document.createElement("div");
    kindRow.className = "filter-row";
    kindRow.append("kinds:");
    for (const kind of kinds.slice(0, 60)) kindRow.append(toggle(kind, hiddenKinds, kind));
    box.append(nodes, kindRow);
  }

  const summary = document.getElementById("summary");
  const end = D.meta.end || {};
  function brief(text) {  // the summary line stays a line: the whole text is in the details
    const first = String(text).split("\n")[0];
    return first.length > 220 ? first.slice(0, 217) + "..." : first;
  }
  summary.textContent = clean(`seed ${D.meta.header.seed} · ${last} events · ` +
    (D.failure ? "failed: " + brief(D.failure.text) : end.failure ? "failed: " + brief(end.failure)
      : "passed") + (D.meta.defect ? " · " + D.meta.defect : ""));
  filters();
  checks();
  render();
  window.addEventListener("resize", render);
  document.body.dataset.ready = "1";
})();
