"""A column of the diagram spooled to a temporary file, so `seedbed view` keeps
memory bounded however many events the trace holds.

Each row is written as the page will hold it (`embed_json`, comma-separated,
after its column's encoding), so writing the page copies the file into it
without reading rows back. The encodings shrink what a big run's page must
parse and hold:

- `times` as differences from the row before: most positions share their
  instant, so most rows are `0`;
- points as `[pos - previous pos, lane, kind number, text or text number]`:
  kinds are a handful of names, and many texts repeat (the scheduler's
  draws), so the first `TEXTS` distinct texts go into a table once.

The page's script undoes both as it loads.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from typing import IO, Any

from seedbed._view._embed import embed_json

TEXTS = 65536  # distinct point texts kept in the table (bounded memory)


class Deltas:
    """Numbers as differences from the one before."""

    def __init__(self) -> None:
        self.last = 0

    def __call__(self, value: Any) -> Any:
        delta, self.last = value - self.last, value
        return delta


class PointCodec:
    """Points as the page holds them (see the module doc); `kinds` and `texts`
    are the tables, in number order."""

    def __init__(self) -> None:
        self.kinds: dict[str, int] = {}
        self.texts: dict[str, int] = {}
        self.last = 0

    def __call__(self, row: Any) -> Any:
        pos, lane, kind, text = row
        number = self.kinds.setdefault(kind, len(self.kinds))
        shared = self.texts.get(text)
        if shared is None and len(self.texts) < TEXTS and len(text) > 4:
            shared = self.texts[text] = len(self.texts)
        encoded = [pos - self.last, lane, number, text if shared is None else shared]
        self.last = pos
        return encoded


class Spool:
    """An append-only column on disk, each row put through `encode`; `len`
    counts its rows."""

    def __init__(self, encode: Callable[[Any], Any] | None = None) -> None:
        # Deleted on close, or by the OS if the process dies first.
        self._file: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
        self._count = 0
        self.encode = encode

    def append(self, row: Any, /) -> None:
        if self.encode is not None:
            row = self.encode(row)
        self._file.write(("," if self._count else "") + embed_json(row))
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def copy_to(self, out: IO[str]) -> None:
        """Write the rows, comma-separated, to `out`."""
        self._file.flush()
        self._file.seek(0)
        shutil.copyfileobj(self._file, out, 1 << 20)

    def close(self) -> None:
        self._file.close()
