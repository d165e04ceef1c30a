"""The append-only file's records: written from the keys a command changed, replayed at start.

A record is one command's effect (a transaction or a script included), as
Redis commands that rebuild each key it changed: `DEL key`, then the
commands that set its whole value (`SET`, `RPUSH`, `HSET`, `SADD`, `ZADD`)
and its expiry as an absolute time (`PEXPIREAT`, `HPEXPIREAT`), as Redis
itself writes relative expiries. The commands are RESP arrays, as in a
Redis AOF, framed by a header line with their length and CRC-32:

    #seedbed 97 5e1f0c2a\\r\\n*2\\r\\n$6\\r\\nSELECT\\r\\n...

Replaying stops at the first frame that is incomplete or whose checksum
does not match: a crash can leave the unsynced tail of the file cut short,
zeroed or as garbage (a torn write), and Redis with `aof-load-truncated yes`
(its default) loads what precedes and truncates the rest. The checksum
makes that cut exact where Redis's own format could load a torn value.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from typing import Any

_HEADER = re.compile(rb"#seedbed (\d{1,10}) ([0-9a-f]{8})\r\n")
_CHUNK = 512  # values per rebuilding command, as Redis's AOF rewrite batches them


def command(*args: bytes) -> bytes:
    """One command as a RESP array of bulk strings."""
    parts = [b"*%d\r\n" % len(args)]
    parts.extend(b"$%d\r\n%s\r\n" % (len(arg), arg) for arg in args)
    return b"".join(parts)


def frame(payload: bytes) -> bytes:
    """A record: its header line, then its commands."""
    return b"#seedbed %d %08x\r\n" % (len(payload), zlib.crc32(payload)) + payload


def frames(data: bytes) -> tuple[list[bytes], int]:
    """The payloads of the whole records at the start of `data`, and where they end."""
    payloads: list[bytes] = []
    offset = 0
    while True:
        header = _HEADER.match(data, offset, offset + 40)
        if header is None:
            break
        start = header.end()
        end = start + int(header.group(1))
        payload = data[start:end]
        if len(payload) < end - start or zlib.crc32(payload) != int(header.group(2), 16):
            break
        payloads.append(payload)
        offset = end
    return payloads, offset


class Reader:
    """Reads a key's whole state through fakeredis's own read commands."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket  # a `Session` that serves no client

    def rebuild(self, db: Any, key: bytes) -> Iterator[bytes]:
        """The commands that set `key` of `db` to its state now (after a `DEL key`)."""
        item = db.get(key)
        if item is None:
            return
        value = item.value
        if isinstance(value, bytes):
            yield command(b"SET", key, value)
        elif isinstance(value, list):
            yield from _chunked(b"RPUSH", key, value)
        else:
            yield from self._collection(db, key, value.model_type())
        if item.expireat is not None:
            yield command(b"PEXPIREAT", key, b"%d" % round(item.expireat * 1000))

    def _collection(self, db: Any, key: bytes, kind: bytes) -> Iterator[bytes]:
        if kind == b"hash":
            flat = self._read(db, "hgetall", key)
            yield from _chunked(b"HSET", key, flat)
            yield from self._field_expiries(db, key, flat[::2])
        elif kind == b"set":
            yield from _chunked(b"SADD", key, self._read(db, "smembers", key))
        elif kind == b"zset":
            flat = self._read(db, "zrange", key, b"0", b"-1", b"WITHSCORES")
            pairs = [x for i in range(0, len(flat), 2) for x in (flat[i + 1], flat[i])]
            yield from _chunked(b"ZADD", key, pairs)
        else:
            raise AssertionError(f"the append-only file cannot hold a {kind!r} value (key {key!r})")

    def _field_expiries(self, db: Any, key: bytes, fields: list[bytes]) -> Iterator[bytes]:
        if not fields:
            return
        times = self._read(db, "hpexpiretime", key, b"FIELDS", b"%d" % len(fields), *fields)
        for field, when in zip(fields, times, strict=True):
            if when > 0:
                yield command(b"HPEXPIREAT", key, b"%d" % when, b"FIELDS", b"1", field)

    def _read(self, db: Any, name: str, *args: bytes) -> list[Any]:
        socket = self.socket
        socket._db, socket._db_num = db, db.index
        func, sig = socket._name_to_func(name)
        result = socket._run_command(func, sig, list(args), False)
        if not isinstance(result, list):
            raise AssertionError(f"reading {name} {args[0]!r} for the append-only file: {result!r}")
        return result


def _chunked(name: bytes, key: bytes, values: list[bytes]) -> Iterator[bytes]:
    step = _CHUNK if name in (b"RPUSH", b"SADD") else 2 * _CHUNK
    for i in range(0, len(values), step):
        yield command(name, key, *values[i : i + step])


def record(server: Any, reader: Reader, keys: list[tuple[int, bytes]]) -> bytes:
    """The framed record that rebuilds `keys` ((database, key) pairs) as they are now."""
    return frame(_rebuild(server, reader, keys))


def snapshot(server: Any, reader: Reader) -> bytes:
    """A record that makes a replica's keyspace this server's: FLUSHALL, then every key."""
    keys = [(index, key) for index in sorted(server.dbs) for key in list(server.dbs[index]._dict)]
    return frame(command(b"FLUSHALL") + _rebuild(server, reader, keys))


def _rebuild(server: Any, reader: Reader, keys: list[tuple[int, bytes]]) -> bytes:
    parts: list[bytes] = []
    selected = -1
    for index, key in keys:
        if index != selected:
            parts.append(command(b"SELECT", b"%d" % index))
            selected = index
        parts.append(command(b"DEL", key))
        parts.extend(reader.rebuild(server.dbs[index], key))
    return b"".join(parts)
