"""The `seedbed report RESULTS --html out.html` command.

Exit codes as everywhere in the CLI: 0 the page was written from a clean
file; 2 bad input, with one line on stderr: the file is missing or is not a
results file (no page), or some lines were malformed (the page is written,
counts them and lists the first ones, and the exit code says the file needs
a look).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from seedbed._harness.report._aggregate import ResultsError
from seedbed._harness.report._search import is_search
from seedbed._harness.report._write import write_report, write_search_report
from seedbed.cli._guard import echo


@click.command("report")
@click.argument("results", type=click.Path(dir_okay=True))
@click.option("--html", "html_path", type=click.Path(dir_okay=False), required=True,
              help="where to write the page (one self-contained HTML file)")  # fmt: skip
def report(results: str, html_path: str) -> None:
    """Write a sweep's RESULTS (results.jsonl or its directory), or a search's
    folder (`seedbed explore --out`), as an HTML page."""
    if is_search(Path(results)):
        _search_report(results, html_path)
        return
    try:
        aggregate = write_report(results, html_path)
    except ResultsError as exc:
        echo(f"error: {exc}", err=True)
        sys.exit(2)
    echo(
        f"wrote {html_path}: {aggregate.total:,} seeds, {aggregate.failed:,} failed "
        f"in {len(aggregate.buckets):,} buckets"
    )
    if aggregate.malformed:
        first = aggregate.malformed_shown[0]
        echo(
            f"error: {aggregate.path}: {aggregate.malformed:,} malformed line(s), the first at "
            f"line {first.line} ({first.reason}); the report counts and lists them",
            err=True,
        )
        sys.exit(2)


def _search_report(results: str, html_path: str) -> None:
    """A search's page; exit 2 when a log had lines the page had to skip."""
    try:
        search, *sweep = write_search_report(results, html_path)
    except ResultsError as exc:
        echo(f"error: {exc}", err=True)
        sys.exit(2)
    echo(f"wrote {html_path}: a search of {search.runs:,} runs, {search.failed:,} failed")
    for log in (search, *sweep):
        if log.first_bad is not None:
            line, reason = log.first_bad
            echo(
                f"error: {log.path}: {log.bad_lines:,} malformed line(s), the first at line "
                f"{line} ({reason}); the report counts and skips them",
                err=True,
            )
            sys.exit(2)
