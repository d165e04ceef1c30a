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
from seedbed._harness.report._search import SearchLog, read_search, render_search


def write_report(results: str | Path, html: str | Path) -> Aggregate:
    """Read `results` (a results.jsonl or a sweep directory) and write the page to `html`."""
    aggregate = read_results(results)
    _write(render(aggregate, generated_by=f"seedbed {VERSION} report"), html)
    return aggregate


def write_search_report(folder: str | Path, html: str | Path) -> SearchLog:
    """Read a search's folder (`seedbed explore --out`) and write its page to `html`."""
    path = Path(folder)
    try:
        page = render_search(path, generated_by=f"seedbed {VERSION} report")
        search = read_search(path / "explore.jsonl" if path.is_dir() else path)
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read the search ({exc.strerror or exc})") from None
    _write(page, html)
    return search


def _write(page: str, html: str | Path) -> None:
    target = Path(html)
    try:
        replace_file(target, page.encode("utf-8"))
    except NotRegular as exc:
        raise ResultsError(f"{exc}; pass --html a path to a new or regular file") from None
    except OSError as exc:
        raise ResultsError(f"{target}: cannot write the report ({exc.strerror or exc})") from None
