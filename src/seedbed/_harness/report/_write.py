"""Writing the page: to a temporary file beside the target, then renamed over it.

An interrupted write never leaves half a page where a whole one was.
"""

from __future__ import annotations

import os
from pathlib import Path

from seedbed._core.version import VERSION
from seedbed._harness.report._aggregate import Aggregate, ResultsError, read_results
from seedbed._harness.report._page import render


def write_report(results: str | Path, html: str | Path) -> Aggregate:
    """Read `results` (a results.jsonl or a sweep directory) and write the page to `html`."""
    aggregate = read_results(results)
    page = render(aggregate, generated_by=f"seedbed {VERSION} report")
    target = Path(html)
    temporary = target.with_name(f".{target.name}.partial")
    try:
        temporary.write_text(page, encoding="utf-8")
        os.replace(temporary, target)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise ResultsError(f"{target}: cannot write the report ({exc.strerror or exc})") from None
    return aggregate
