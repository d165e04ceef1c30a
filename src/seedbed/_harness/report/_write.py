"""Writing the page: to a temporary file beside the target, then renamed over it.

An interrupted write never leaves half a page where a whole one was, and a
symlink, FIFO or device at the path is refused, never replaced.
"""

from __future__ import annotations

from pathlib import Path

from seedbed._core.files import NotRegular, replace_file
from seedbed._core.version import VERSION
from seedbed._harness.report._aggregate import Aggregate, ResultsError, read_results
from seedbed._harness.report._page import render
from seedbed._harness.report._search import SearchLog, read_searches, render_search


def write_report(results: str | Path, html: str | Path) -> Aggregate:
    """Read `results` (a results.jsonl or a sweep directory) and write the page to `html`."""
    aggregate = read_results(results)
    _write(render(aggregate, generated_by=f"seedbed {VERSION} report"), html)
    return aggregate


def write_search_report(folder: str | Path, html: str | Path) -> list[SearchLog]:
    """Read a search's folder (`seedbed explore --out`) and write its page to `html`;
    the logs read (the search's, then its plain sweep's if it has one)."""
    search, sweep = read_searches(Path(folder))
    _write(render_search(search, sweep, generated_by=f"seedbed {VERSION} report"), html)
    return [search] if sweep is None else [search, sweep]


def _write(page: str, html: str | Path) -> None:
    target = Path(html)
    try:
        replace_file(target, page.encode("utf-8"))
    except NotRegular as exc:
        raise ResultsError(f"{exc}; pass --html a path to a new or regular file") from None
    except OSError as exc:
        raise ResultsError(
            f"cannot write the report {target} ({exc.strerror or exc}); nothing was written "
            "there: make room, or pass --html a path in a folder you can write"
        ) from None
