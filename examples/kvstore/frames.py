"""Checksummed, length-prefixed JSON frames: the one encoding for the wire and the disk.

A frame is `length (4 bytes, big-endian) | crc32 of the body (4 bytes) | body`,
where the body is UTF-8 JSON. The same format carries messages between
replicas and clients over TCP and records in the log and snapshot files, so
one decoder guards both against garbage: a length above `MAX_FRAME`, a
checksum that does not match, a body that is not a JSON object. Nothing read
from the network or the disk is ever unpickled or evaluated.

A message's log entries travel as lines after the message's own object
(`{..., "entries": 2}\n{entry}\n{entry}`; compact JSON never holds a raw
newline), so each entry's bytes are known on both sides: a log entry is
encoded once, by the leader, and the same bytes go to the leader's disk, to
every follower, and from each follower's wire to its disk (`encode_entry`).
Encoding was most of the store's CPU in simulation: every entry re-encoded
per message and per replica's disk (issue 30).
"""

from __future__ import annotations

import asyncio
import json
import struct
import zlib
from collections.abc import Callable, Sequence
from typing import Any

from examples.kvstore import bugs

MAX_FRAME = 1 << 20  # 1 MiB: larger than any batch or snapshot this store sends
HEADER = struct.Struct(">II")

Message = dict[str, Any]


# One encoder for every frame: `json.dumps` with any option builds a new one per call.
_ENCODER = json.JSONEncoder(separators=(",", ":"))
_DECODER = json.JSONDecoder()


def _c_encoder() -> Callable[[Any, int], Sequence[str]]:
    """`_ENCODER`'s C encoder, built once: the text of `value` is `"".join(encoder(value, 0))`.

    `JSONEncoder.encode` builds a C encoder (and a closure) per call through
    two Python frames: about half of what encoding a small message costs.
    This one has the same options, so it makes the same text; it skips only
    the circular-reference check (`markers=None`), which no message of this
    store needs (a cycle would raise `RecursionError`, not `ValueError`).
    Without the C accelerator: the encoder itself, as one chunk.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return lambda value, _: (_ENCODER.encode(value),)
    return make(  # type: ignore[no-any-return]
        None, _ENCODER.default, json.encoder.encode_basestring_ascii, None,
        ":", ",", False, False, True,
    )  # fmt: skip


_chunks = _c_encoder()
_join = "".join
# (object, end) of the JSON value at an index: `JSONDecoder.decode` without
# its two Python frames and two whitespace matches (see `_object`).
_scan: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]

# The encoded body (and, once asked for, the disk frame) of recent log entries,
# by the entry's identity. An entry is never changed once made, and the table
# holds the entry itself, so its id cannot be reused while it is here; the
# oldest are dropped first (insertion order: no address decides anything).
_ENTRIES: dict[int, tuple[Message, bytes, bytes | None]] = {}
_ENTRIES_KEPT = 4096


class FrameError(ValueError):
    """A frame that cannot be trusted: too large, truncated, bad checksum or not JSON."""


def _frame(body: bytes) -> bytes:
    if len(body) > MAX_FRAME:
        raise FrameError(f"frame of {len(body)} bytes exceeds the maximum of {MAX_FRAME}")
    return HEADER.pack(len(body), zlib.crc32(body)) + body


def _remember(entry: Message, body: bytes, frame: bytes | None) -> None:
    _ENTRIES[id(entry)] = (entry, body, frame)
    if len(_ENTRIES) > _ENTRIES_KEPT:  # the older half goes at once: O(1) per entry
        newer = list(_ENTRIES.items())[_ENTRIES_KEPT // 2 :]
        _ENTRIES.clear()
        _ENTRIES.update(newer)


def _entry_body(entry: Message) -> bytes:
    known = _ENTRIES.get(id(entry))
    if known is not None and known[0] is entry:
        return known[1]
    body = _join(_chunks(entry, 0)).encode()
    _remember(entry, body, None)
    return body


def encode(message: Message) -> bytes:
    """One frame holding `message` (a JSON-able dict); its `entries`, if a list, as lines."""
    entries = message.get("entries")
    if type(entries) is not list:
        return _frame(_join(_chunks(message, 0)).encode())
    head = _join(_chunks({**message, "entries": len(entries)}, 0)).encode()
    return _frame(b"\n".join([head, *map(_entry_body, entries)]))


def encode_entry(entry: Message) -> bytes:
    """The disk frame of a log entry: its bytes as first encoded or received."""
    known = _ENTRIES.get(id(entry))
    if known is not None and known[0] is entry:
        if known[2] is not None:
            return known[2]
        frame = _frame(known[1])
    else:
        frame = _frame(_join(_chunks(entry, 0)).encode())
    _remember(entry, frame[HEADER.size :], frame)
    return frame


def _object(body: bytes) -> Message:
    """The JSON object in `body`.

    What the scanner does not take whole (not JSON, whitespace around it,
    extra data) goes through `JSONDecoder.decode`, so the result and every
    error are what `decode` alone gives.
    """
    try:
        text = body.decode()
        try:
            message, end = _scan(text, 0)
        except StopIteration:
            end = -1
        if end != len(text):
            message = _DECODER.decode(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise FrameError(f"frame body is not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise FrameError(f"frame body is a {type(message).__name__}, not a JSON object")
    return message


def decode_body(body: bytes, crc: int) -> Message:
    """The message in `body`, after checking it against its checksum."""
    if zlib.crc32(body) != crc and not bugs.planted("trust_without_checksum"):
        raise FrameError(f"checksum mismatch in a {len(body)}-byte frame")
    head, *lines = body.split(b"\n") if b"\n" in body else (body,)
    message = _object(head)
    count = message.get("entries")
    if type(count) is not int:
        if lines:
            raise FrameError(f"frame has {len(lines)} entry lines and no entry count")
        return message
    if count != len(lines):
        raise FrameError(f"frame has {len(lines)} entry lines, its message says {count}")
    entries = [_object(line) for line in lines]
    for entry, line in zip(entries, lines, strict=True):
        _remember(entry, line, None)
    message["entries"] = entries
    return message


def parse_header(header: bytes) -> tuple[int, int]:
    """(length, crc) of a frame header, refusing lengths above `MAX_FRAME`."""
    length, crc = HEADER.unpack(header)
    if length > MAX_FRAME:
        raise FrameError(f"frame length {length} exceeds the maximum of {MAX_FRAME}")
    return length, crc


async def read_frame(reader: asyncio.StreamReader) -> Message | None:
    """The next frame's message, or None at a clean end of stream.

    Raises `FrameError` for an oversized, truncated or damaged frame.
    """
    try:
        header = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise FrameError(f"stream ended inside a frame header ({len(exc.partial)} bytes)") from None
    length, crc = parse_header(header)
    try:
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise FrameError(
            f"stream ended inside a frame ({len(exc.partial)} of {length} bytes)"
        ) from None
    return decode_body(body, crc)


def decode_records(data: bytes) -> tuple[list[Message], int, bool]:
    """Decode a file of back-to-back frames.

    Returns the messages of the longest valid prefix, the byte length of that
    prefix, and whether the damage (if any) is only a torn tail: a final frame
    cut short or failing its checksum with nothing after it, what a crash
    during an unsynced append leaves. Damage followed by more bytes is
    corruption of data that may have been acknowledged.
    """
    messages: list[Message] = []
    offset = 0
    while offset < len(data):
        end = offset + HEADER.size
        if end > len(data):
            return messages, offset, True
        try:
            length, crc = parse_header(data[offset:end])
        except FrameError:
            return messages, offset, False
        if end + length > len(data):
            return messages, offset, True
        try:
            messages.append(decode_body(data[end : end + length], crc))
        except FrameError:
            return messages, offset, end + length == len(data)
        offset = end + length
    return messages, offset, True


def salvage_records(data: bytes, damage: int) -> list[Message]:
    """The intact frames after damage at offset `damage`, found by scanning forward.

    A damaged record (a flipped bit, a misdirected write over it) hides where
    the next one starts, but every frame carries its own length and checksum,
    so a scan for the next position where a whole frame checks out finds the
    records after it.
    """
    found: list[Message] = []
    position = damage + 1
    while position + HEADER.size <= len(data):
        frame = _checked_frame(data, position)
        if frame is None:
            position += 1
            continue
        found.append(frame[0])
        position = frame[1]
    return found


def _checked_frame(data: bytes, position: int) -> tuple[Message, int] | None:
    """The message of a whole, checksummed frame at `position` and where it ends, or None."""
    length, crc = HEADER.unpack_from(data, position)
    start = position + HEADER.size
    if length > MAX_FRAME or start + length > len(data) or length < 2:
        return None
    body = data[start : start + length]
    if body[0] != 0x7B or body[-1] != 0x7D or zlib.crc32(body) != crc:  # {...}: cheap tests first
        return None
    try:
        return decode_body(body, crc), start + length
    except FrameError:
        return None
