"""Checksummed, length-prefixed JSON frames: the one encoding for the wire and the disk.

A frame is `length (4 bytes, big-endian) | crc32 of the body (4 bytes) | body`,
where the body is UTF-8 JSON. The same format carries messages between
replicas and clients over TCP and records in the log and snapshot files, so
one decoder guards both against garbage: a length above `MAX_FRAME`, a
checksum that does not match, a body that is not a JSON object. Nothing read
from the network or the disk is ever unpickled or evaluated.
"""

from __future__ import annotations

import asyncio
import json
import struct
import zlib
from typing import Any

from examples.kvstore import bugs

MAX_FRAME = 1 << 20  # 1 MiB: larger than any batch or snapshot this store sends
HEADER = struct.Struct(">II")

Message = dict[str, Any]


class FrameError(ValueError):
    """A frame that cannot be trusted: too large, truncated, bad checksum or not JSON."""


def encode(message: Message) -> bytes:
    """One frame holding `message` (a JSON-able dict)."""
    body = json.dumps(message, separators=(",", ":")).encode()
    if len(body) > MAX_FRAME:
        raise FrameError(f"frame of {len(body)} bytes exceeds the maximum of {MAX_FRAME}")
    return HEADER.pack(len(body), zlib.crc32(body)) + body


def decode_body(body: bytes, crc: int) -> Message:
    """The message in `body`, after checking it against its checksum."""
    if zlib.crc32(body) != crc and not bugs.planted("trust_without_checksum"):
        raise FrameError(f"checksum mismatch in a {len(body)}-byte frame")
    try:
        message = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise FrameError(f"frame body is not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise FrameError(f"frame body is a {type(message).__name__}, not a JSON object")
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
        message = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return None
    return (message, start + length) if isinstance(message, dict) else None
