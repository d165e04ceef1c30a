"""JSON Lines files seedbed wrote, read back one bounded line at a time.

Results files, explore logs and their reports all read the same way: a
line is at most `MAX_LINE` bytes (a longer one is damage, read on in bounded
pieces and reported, never held whole), a last line with no newline is one
a killed writer was cutting short (its readers drop it, or say so), and a
line is one JSON object in UTF-8 or it is refused with a short reason
(`safejson.BadJSON`). Each reader then checks the fields it knows. Nothing is
ever unpickled; standard library only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from seedbed._core import safejson
from seedbed._core.files import MAX_LINE


@dataclass(frozen=True)
class Line:
    """One line of a file: its number, its bytes (no newline) and where it ends."""

    number: int
    raw: bytes  # at most MAX_LINE bytes: a longer line is cut here (`too_long`)
    end: int  # the offset just past the line (and its newline)
    whole: bool  # it ends with a newline (else it is the file's last, cut short)
    too_long: bool = False


def lines(stream: BinaryIO) -> Iterator[Line]:
    """Every line of `stream`, in order, each read in pieces of at most MAX_LINE bytes."""
    number = offset = 0
    while raw := stream.readline(MAX_LINE + 1):
        number += 1
        offset += len(raw)
        if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
            while (rest := stream.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                offset += len(rest)  # the rest of the long line, read and dropped in pieces
            offset += len(rest)
            yield Line(number, raw[:MAX_LINE], offset, rest.endswith(b"\n"), too_long=True)
            continue
        whole = raw.endswith(b"\n")
        yield Line(number, raw[:-1] if whole else raw, offset, whole)


def parse_object(raw: bytes) -> dict[str, Any]:
    """One line as a JSON object; anything else is a `safejson.BadJSON` with the reason."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise safejson.BadJSON(f"not UTF-8 text (byte {exc.start + 1})") from None
    value = safejson.loads(text)
    if not isinstance(value, dict):
        raise safejson.BadJSON("not a JSON object")
    return value
