"""Writing the page: to a temporary file beside the target, then renamed over it."""

from __future__ import annotations

import os
from pathlib import Path

from seedbed._core.version import VERSION
from seedbed._view._model import Diagram, build
from seedbed._view._page import render
from seedbed.errors import UsageError


def write_view(trace: str | Path, html: str | Path) -> Diagram:
    """Read the trace file `trace` and write its diagram page to `html`."""
    diagram = build(trace)
    page = render(diagram, generated_by=f"seedbed {VERSION} view")
    target = Path(html)
    temporary = target.with_name(f".{target.name}.partial")
    try:
        temporary.write_text(page, encoding="utf-8")
        os.replace(temporary, target)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise UsageError(f"{target}: cannot write the page ({exc.strerror or exc})") from None
    return diagram
