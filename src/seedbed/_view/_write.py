"""Writing the page: streamed to a temporary file beside the target, then renamed over it.

The trace is read as a stream and the long columns are spooled to disk
(`_spool`), so memory stays bounded by what is in flight at one instant
(open connections, spans, client operations), not by the trace's length.
"""

from __future__ import annotations

from pathlib import Path

from seedbed._core.files import NotRegular, Replacement
from seedbed._core.version import VERSION
from seedbed._view._model import Diagram, build
from seedbed._view._page import write_page
from seedbed._view._spool import Deltas, PointCodec, Spool
from seedbed.errors import UsageError


def write_view(trace: str | Path, html: str | Path) -> Diagram:
    """Read the trace file `trace` and write its diagram page to `html`."""
    spools: list[Spool] = []

    def spool(name: str) -> Spool:
        codec = Deltas() if name == "times" else PointCodec() if name == "points" else None
        spools.append(Spool(codec))
        return spools[-1]

    try:
        diagram = build(trace, spool)
        _write(diagram, Path(html))
    finally:
        for column in spools:
            column.close()
    return diagram


def _write(diagram: Diagram, target: Path) -> None:
    try:
        page = Replacement(target, text=True)  # never renames over a symlink, FIFO or device
    except NotRegular as exc:
        raise UsageError(f"{exc}; pass -o a path to a new or regular file") from None
    except OSError as exc:
        raise UsageError(_cannot_write(target, exc)) from None
    try:
        write_page(diagram, page.file, generated_by=f"seedbed {VERSION} view")
        page.commit()
    except OSError as exc:
        page.discard()
        raise UsageError(_cannot_write(target, exc)) from None
    except BaseException:
        page.discard()
        raise


def _cannot_write(target: Path, exc: OSError) -> str:
    return (
        f"cannot write the page {target} ({exc.strerror or exc}); nothing was written there: "
        "make room, or pass -o a path in a folder you can write"
    )
