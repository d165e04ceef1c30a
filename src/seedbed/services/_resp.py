"""RESP2 and RESP3 replies, written as a Redis server writes them.

fakeredis produces a reply as Python values already shaped for the
client's protocol (a RESP2 client gets a map flattened to an array); what
differs between the two protocols is how the types RESP2 lacks are written:
null, double, boolean, big number, map, set and push. Errors stay
fakeredis's `SimpleError`, whose text already starts with the error code
("WRONGTYPE ...", "ERR ..."), so a client reads the exact error real Redis
sends.
"""

from __future__ import annotations

from typing import Any

from fakeredis._helpers import SimpleError, SimpleString

_INT64 = 2**63


class Raw(bytes):
    """Bytes sent as they are, not as a reply (the replication stream)."""


def encode(value: Any, protocol: int, *, push: bool = False) -> bytes:
    """One reply in `protocol` (2 or 3); `push` marks an out-of-band message (pub/sub)."""
    out: list[bytes] = []
    _encode(value, protocol, out, top=True, push=push)
    return b"".join(out)


def _bulk(data: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(data), data)


def _encode(value: Any, protocol: int, out: list[bytes], *, top: bool, push: bool) -> None:
    if type(value) is Raw:
        out.append(value)
    elif isinstance(value, bytes):
        out.append(_bulk(value))
    elif isinstance(value, bool):  # before int, which bool subclasses
        out.append((b"#t\r\n" if value else b"#f\r\n") if protocol == 3 else b":%d\r\n" % value)
    elif isinstance(value, int):
        if -_INT64 <= value < _INT64:
            out.append(b":%d\r\n" % value)
        else:
            out.append(b"(%d\r\n" % value if protocol == 3 else _bulk(b"%d" % value))
    elif isinstance(value, list | tuple):
        header = b">" if push and protocol == 3 else b"*"
        _sequence(header, value, protocol, out)
    else:
        _encode_other(value, protocol, out, top=top)


def _encode_other(value: Any, protocol: int, out: list[bytes], *, top: bool) -> None:
    if value is None:
        out.append(b"_\r\n" if protocol == 3 else b"$-1\r\n")
    elif isinstance(value, SimpleString):
        out.append(b"+%s\r\n" % value.value)
    elif isinstance(value, SimpleError):
        out.append(b"-%s\r\n" % _one_line(value.value))
    elif isinstance(value, str):  # a status reply fakeredis gives as text ("OK", "PONG")
        data = value.encode()
        out.append(b"+%s\r\n" % data if top and b"\r" not in data and b"\n" not in data
                   else _bulk(data))  # fmt: skip
    elif isinstance(value, float):
        text = repr(value).encode()  # shortest round-trip form; inf, -inf and nan as Redis
        out.append(b",%s\r\n" % text if protocol == 3 else _bulk(text))
    elif isinstance(value, dict):
        if protocol == 3:
            out.append(b"%%%d\r\n" % len(value))
            for key, item in value.items():
                _encode(key, protocol, out, top=False, push=False)
                _encode(item, protocol, out, top=False, push=False)
        else:
            _sequence(b"*", [x for pair in value.items() for x in pair], protocol, out)
    elif isinstance(value, set | frozenset):
        _sequence(b"~" if protocol == 3 else b"*", list(value), protocol, out)
    else:
        raise TypeError(f"no RESP encoding for a reply of type {type(value).__name__}")


def _sequence(header: bytes, items: Any, protocol: int, out: list[bytes]) -> None:
    out.append(b"%s%d\r\n" % (header, len(items)))
    for item in items:
        _encode(item, protocol, out, top=False, push=False)


def _one_line(text: str) -> bytes:
    """An error's text on one line, as Redis sends it (it maps CR and LF to spaces)."""
    return text.replace("\r", " ").replace("\n", " ").encode()
