"""The report of a search (`seedbed explore`'s folder): coverage over runs, the corpus,
what was never reached, and its failures, as one self-contained page.

It reads only the folder's logs (`explore.jsonl`, and `sweep/explore.jsonl`
when `--versus-sweep` ran a plain sweep of as many runs), never runs
anything and never writes them. Each is read as the search reads it on
`--resume` (`search._log`: a regular file, bounded lines, every known field
of its type) and folded as it is read: a run adds a point to the curve and
counts, never a kept line. A line that fails the checks is counted and
skipped (the page says how many and the command exits 2, as the sweep
report does); a last line with no newline is a run being written (a search
still going, or killed) and is skipped without a word; a log with no sound
header is not reported on. The plot is inline SVG like the sweep report's;
the page's style, policy, copy script and escaping are the sweep report's.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seedbed._core import jsonl, safejson
from seedbed._core.files import NotRegular, open_regular
from seedbed._harness.report._aggregate import ResultsError
from seedbed._harness.report._assets import CSP, CSS, SCRIPT
from seedbed._harness.report._page import _e
from seedbed._harness.report._plots import BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDE, _axes, _svg
from seedbed._harness.search._log import KIND, LOG, LogFile

SWEEP = "sweep"
SHOWN = 200  # corpus entries and never-reached features listed at most
_CORPUS_SHOWS = ("index", "plan", "new", "improved", "entry")
_FAILURE_SHOWS = ("index", "bucket", "replay")
_EXTRA_CSS = """
svg.plot polyline { fill: none; stroke-width: 2.2; }
svg.plot polyline.explore { stroke: var(--accent); }
svg.plot polyline.sweep { stroke: var(--timeout); stroke-dasharray: 6 4; }
.legend .explore { background: var(--accent); } .legend .sweep { background: var(--timeout); }
"""


@dataclass
class SearchLog:
    """One search's log, folded: what the page shows, a few numbers per run at most."""

    path: str
    header: dict[str, Any] = field(default_factory=dict)
    runs: int = 0
    failed: int = 0
    reached: array[int] = field(default_factory=lambda: array("q"))  # features in n+1 runs
    seen: set[str] = field(default_factory=set)
    declared: dict[str, None] = field(default_factory=dict)
    kinds: dict[str, list[int]] = field(default_factory=dict)  # runs, found, failed
    kept: int = 0
    corpus: list[dict[str, Any]] = field(default_factory=list)  # the first SHOWN kept
    firsts: list[dict[str, Any]] = field(default_factory=list)  # each failure's first run
    counts: dict[str, int] = field(default_factory=dict)  # runs failed per bucket
    stop: dict[str, Any] | None = None
    bad_lines: int = 0
    first_bad: tuple[int, str] | None = None  # (line number, what was wrong)
    torn: bool = False  # the last line has no newline: a run being written

    def curve(self) -> list[int]:
        """Features reached within the first n runs, for n = 1 .. runs."""
        return list(self.reached)

    def never_reached(self) -> list[str]:
        return sorted(feature for feature in self.declared if feature not in self.seen)

    def add(self, line: dict[str, Any]) -> None:
        """Fold one run's line in."""
        new, improved, bucket = line.get("new") or [], line.get("improved"), line.get("bucket")
        self.runs += 1
        self.failed += bool(bucket)
        self.seen.update(new)
        self.reached.append(len(self.seen))
        self.declared.update(dict.fromkeys(line.get("declared") or ()))
        kind = str((line.get("plan") or {}).get("kind", "?"))
        row = self.kinds.setdefault(kind, [0, 0, 0])
        row[0] += 1
        row[1] += bool(new or improved)
        row[2] += bool(bucket)
        if line.get("entry"):
            self.kept += 1
            if len(self.corpus) < SHOWN:
                self.corpus.append({key: line.get(key) for key in _CORPUS_SHOWS})
        if bucket:
            self.counts[bucket] = self.counts.get(bucket, 0) + 1
            if line.get("failure_file"):
                self.firsts.append({key: line.get(key) for key in _FAILURE_SHOWS})

    def bad(self, number: int, problem: str) -> None:
        self.bad_lines += 1
        if self.first_bad is None:
            self.first_bad = (number, problem)


def is_search(path: Path) -> bool:
    """Whether `path` is a search's folder (it holds a log, of any kind: the reader
    judges it) or a search's log (else: a sweep's results)."""
    if path.is_dir():
        return (path / LOG).exists() or (path / LOG).is_symlink()
    try:
        with open_regular(path) as stream:
            first = next(jsonl.lines(stream), None)
        return first is not None and jsonl.parse_object(first.raw).get("kind") == KIND
    except (OSError, safejson.BadJSON):
        return False


def read_search(path: Path) -> SearchLog:
    """Fold a search's log; a log that cannot be read, or has no sound header, is a
    `ResultsError` (a damaged line after the header is counted: `bad_lines`)."""
    log = SearchLog(str(path))
    try:
        with LogFile(path) as lines:
            for checked in lines:
                if checked.line is None:
                    log.bad(checked.number, str(checked.problem))
                elif checked.line.get("kind") == "run":
                    log.add(checked.line)
                elif checked.line.get("kind") == "stop":
                    log.stop = checked.line
            header, log.torn = lines.header, lines.torn
    except NotRegular as exc:
        raise ResultsError(str(exc)) from None
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file (pass a search's --out folder)") from None
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read the search ({exc.strerror or exc})") from None
    if header is None:
        where = f" (line {log.first_bad[0]}: {log.first_bad[1]})" if log.first_bad else ""
        raise ResultsError(f"{path}: not a seedbed explore log, no sound header{where}")
    log.header = header
    return log


def render_search(search: SearchLog, sweep: SearchLog | None, generated_by: str) -> str:
    """The page of a search (and of the plain sweep beside it, if any)."""
    log_path = Path(search.path)
    sweep_path = Path(sweep.path) if sweep is not None else None
    target = str(search.header.get("target", "unknown target"))
    body = "".join([_heading(search, target), _totals(search), _plot(search, sweep),
                    _kinds(search), _corpus(search), _never(search), _failures(search),
                    f"<footer>Generated by {_e(generated_by)} from <code>{_e(log_path)}</code>"
                    + (f" and <code>{_e(sweep_path)}</code>" if sweep else "")
                    + ". Nothing here was fetched.</footer>"])  # fmt: skip
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>seedbed explore: {_e(target)}</title><style>{CSS}{_EXTRA_CSS}</style></head>"
        f"<body><main>{body}</main><script>{SCRIPT}</script></body></html>\n"
    )


def read_searches(folder: Path) -> tuple[SearchLog, SearchLog | None]:
    """The search in `folder` (or whose log `folder` is), and its plain sweep if any."""
    log_path = folder / LOG if folder.is_dir() else folder
    sweep_path = log_path.parent / SWEEP / LOG
    sweep = read_search(sweep_path) if sweep_path.exists() or sweep_path.is_symlink() else None
    return read_search(log_path), sweep


def _heading(search: SearchLog, target: str) -> str:
    stop = search.stop or {}
    facts = [f"explorer seed {_e(search.header.get('seed', '?'))}", f"{search.runs:,} runs"]
    if stop:
        facts.append(f"stopped: {_e(stop.get('stopped', ''))}")
        facts.append(f"{float(stop.get('seconds') or 0):.1f} s in its last session")
    if search.bad_lines:
        line, reason = search.first_bad or (0, "")
        facts.append(f"{search.bad_lines:,} lines unreadable (skipped; the first, line "
                     f"{line:,}: {_e(reason)})")  # fmt: skip
    if search.torn:
        facts.append("last line cut short (a run being written): skipped")
    spans = "".join(f"<span>{fact}</span>" for fact in facts)
    return (f'<header class="top"><h1>seedbed explore <span class="target">{_e(target)}</span>'
            f'</h1></header><div class="meta">{spans}</div>')  # fmt: skip


def _totals(search: SearchLog) -> str:
    failed = search.failed
    cards = [
        ("runs", "", search.runs),
        ("features reached", "pass", len(search.seen)),
        ("kept in the corpus", "", search.kept),
        ("failing runs", "fail" if failed else "zero", failed),
        ("never reached", "timeout", len(search.never_reached())),
    ]
    html = "".join(
        f'<div class="card stat {css}"><div class="value">{value:,}</div>'
        f'<div class="name">{name}</div></div>'
        for name, css, value in cards
    )
    return f'<section id="totals"><div class="cards">{html}</div></section>'


def _plot(search: SearchLog, sweep: SearchLog | None) -> str:
    explored = search.curve()
    plain = sweep.curve()[: len(explored)] if sweep is not None else []
    if sweep is None:
        note = ("No plain sweep to compare: <code>seedbed explore ... --versus-sweep</code> "
                "runs one of as many runs beside the search.")  # fmt: skip
    else:
        note = (
            f"The plain sweep ran seeds 0 to {sweep.runs - 1:,} "
            f"({len(plain):,} of them shown: the search's runs)."
        )
    legend = '<span class="key"><span class="dot explore"></span>explore</span>'
    if plain:
        legend += '<span class="key"><span class="dot sweep"></span>plain sweep</span>'
    return (
        '<section id="coverage"><h2>Coverage over runs</h2><div class="plots">'
        '<figure class="card wide"><figcaption>Features reached against runs</figcaption>'
        f'<p class="note">{note}</p><div class="legend">{legend}</div>'
        f"{coverage_plot(explored, plain)}</figure></div></section>"
    )


def coverage_plot(explored: list[int], plain: list[int]) -> str:
    """Features reached (y) within the first n runs (x): one line per series."""
    runs = max(len(explored), len(plain))
    if not runs:
        return _svg('<text class="label" x="50%" y="50%" text-anchor="middle">no runs</text>')
    top = max(4, *explored, *(plain or [0]))
    top = top + (-top) % 4  # four whole ticks
    plot_w, plot_h = WIDE - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    labels = [f"{round(runs * q):,}" for q in (0, 0.25, 0.5, 0.75, 1)]
    parts = [_axes(top, plot_w, plot_h, "features reached", "runs", labels)]
    for css, series in (("sweep", plain), ("explore", explored)):
        if not series:
            continue
        points = " ".join(
            f"{LEFT + plot_w * (n + 1) / runs:.1f},{TOP + plot_h * (1 - count / top):.1f}"
            for n, count in enumerate(series)
        )
        name = "explore" if css == "explore" else "plain sweep"
        title = f"{name}: {series[-1]:,} features in {len(series):,} runs"
        start = f"{LEFT},{TOP + plot_h}"
        parts.append(f'<g><title>{title}</title><polyline class="{css}" '
                     f'points="{start} {points}"/></g>')  # fmt: skip
    return _svg("".join(parts), WIDE)


def _table(head: list[str], rows: list[list[str]]) -> str:
    cells = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return (f'<div class="card table-card"><table><thead><tr>{cells}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")  # fmt: skip


def _kinds(search: SearchLog) -> str:
    tally = search.kinds
    rows = [[_e(kind), f"{a:,}", f"{b:,}", f"{c:,}"] for kind, (a, b, c) in sorted(tally.items())]
    table = _table(["Kind", "Runs", "Found something", "Failed"], rows)
    return f'<section id="kinds"><h2>Kinds of run</h2>{table}</section>'


def _corpus(search: SearchLog) -> str:
    rows = []
    for line in search.corpus:
        plan = line.get("plan") or {}
        found = [*(line.get("new") or ()), *(f"{k} {v:g}" for k, v in
                                             (line.get("improved") or {}).items())]  # fmt: skip
        parent = plan.get("parent")
        how = _e(plan.get("kind", "?")) + ("" if parent is None else f" of entry {parent}")
        rows.append([f"{line.get('index', '?')}", how, "<br>".join(_e(f) for f in found),
                     f"<code>{_e(line['entry'])}</code>"])  # fmt: skip
    more = (
        f'<p class="note">... and {search.kept - SHOWN:,} more.</p>' if search.kept > SHOWN else ""
    )
    return (f'<section id="corpus"><h2>Corpus <span class="count">{search.kept:,}</span></h2>'
            + _table(["Run", "Made by", "Reached first", "Choice file"], rows) + more
            + "</section>")  # fmt: skip


def _never(search: SearchLog) -> str:
    never = search.never_reached()
    title = f'<h2>Never reached <span class="count">{len(never):,}</span></h2>'
    if not never:
        text = "Every feature some run could reach was reached."
        return f'<section id="never">{title}<div class="card empty">{text}</div></section>'
    items = "".join(f"<li><code>{_e(feature)}</code></li>" for feature in never[:SHOWN])
    return (f'<section id="never">{title}<div class="card"><p class="note">What a run could '
            "have reached and none did: a <code>sometimes</code> never true, a buggify site or "
            f"failpoint that never fired, a fault class never effective.</p><ul>{items}</ul>"
            "</div></section>")  # fmt: skip


def _failures(search: SearchLog) -> str:
    firsts = search.firsts
    title = f'<h2>Failures <span class="count">{len(firsts):,}</span></h2>'
    if not firsts:
        return (
            f'<section id="failures">{title}<div class="card empty">No run failed.</div></section>'
        )
    cards = []
    for number, line in enumerate(firsts):
        count = search.counts.get(line["bucket"], 0)
        cards.append(
            f'<div class="card bucket"><div><strong>{_e(line["bucket"])}</strong></div>'
            f'<p class="note">first at run {line["index"]:,}; {count:,} runs failed so</p>'
            f'<div class="cmd"><code id="replay-{number}">{_e(line["replay"] or "")}</code>'
            f'<button class="copy" type="button" data-target="replay-{number}">Copy</button>'
            "</div></div>"
        )
    return f'<section id="failures">{title}{"".join(cards)}</section>'
