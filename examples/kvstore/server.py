"""A replica's network face: one port for peers and clients alike.

Each connection carries frames (see `frames`). Peer messages go to the
replica's inbox; a client's `request` is answered on the same connection
once the replica has applied it (or has said why it cannot). A connection
that sends anything the protocol does not allow (garbage, a truncated or
oversized frame, an unknown message) is closed with a logged reason; the
server keeps serving everyone else.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from examples.kvstore import frames
from examples.kvstore.raft import NotLeader, Observer, Replica, Restart, Timing
from examples.kvstore.storage import Storage

log = logging.getLogger("kvstore.server")

PEER_MESSAGES: dict[str, tuple[str, ...]] = {  # each peer message's required fields
    "vote": ("last_index", "last_term"),
    "vote_reply": ("granted",),
    "prevote": ("proposed", "last_index", "last_term"),
    "prevote_reply": ("granted", "proposed"),
    "append": ("prev_index", "prev_term", "entries", "commit"),
    "append_reply": ("success", "hint", "match"),
    "snapshot": ("snapshot",),
    "refill": ("last_index", "last_term", "end"),
    "refill_reply": ("last_index", "last_term", "entries"),
}
REQUEST_TIMEOUT = 2.0  # a request not applied by then is answered "timeout"
RESTART_DELAY = 0.5  # after a disk failure, before reading the disk again


async def serve(
    name: str,
    peers: dict[str, tuple[str, int]],
    data_dir: str,
    *,
    timing: Timing | None = None,
    observer: Observer | None = None,
    bind: str | None = None,
) -> None:
    """Run replica `name` of the group `peers` with its files under `data_dir`, forever."""
    host, port = peers[name]
    current: list[Replica] = []

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _connection(current, reader, writer)

    server = await asyncio.start_server(on_connection, bind or host, port)
    log.info("%s: listening on %s:%d", name, bind or host, port)
    async with server:
        while True:
            replica = Replica(name, peers, Storage(data_dir), timing=timing, observer=observer)
            current[:] = [replica]
            try:
                await replica.run()
            except OSError as exc:  # the disk failed: start again from what it kept
                log.error("%s: disk failure (%s); restarting from disk", name, exc)
                await asyncio.sleep(RESTART_DELAY)
            except Restart as exc:
                log.info("%s: %s", name, exc)


async def _connection(
    current: list[Replica], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    peer, name = writer.get_extra_info("peername"), current[0].name
    try:
        while True:
            message = await frames.read_frame(reader)
            if message is None:
                return
            replica = current[0]  # the live one, after a restart from disk
            kind = message.get("type")
            if kind in PEER_MESSAGES:
                missing = [key for key in PEER_MESSAGES[kind] if key not in message]
                if missing:
                    raise frames.FrameError(f"{kind} message lacks {', '.join(missing)}")
                replica.deliver(message)
            elif kind == "status":
                writer.write(frames.encode(replica.status()))
                await writer.drain()
            elif kind == "request":
                writer.write(frames.encode(await _answer(replica, message)))
                await writer.drain()
            else:
                raise frames.FrameError(f"unknown message type {kind!r}")
    except frames.FrameError as exc:
        log.warning("%s: closing connection from %s: %s", name, peer, exc)
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def _answer(replica: Replica, request: dict[str, Any]) -> dict[str, Any]:
    """The reply to one client request: its result, or why there is none."""
    command = request.get("command")
    if not isinstance(command, dict) or not _well_formed(command):
        raise frames.FrameError(f"malformed request {request!r:.120}")
    try:
        async with asyncio.timeout(REQUEST_TIMEOUT):
            result = await replica.submit(command)
    except NotLeader as exc:
        return {"type": "reply", "ok": False, "error": "not_leader", "leader": exc.leader}
    except TimeoutError:
        return {"type": "reply", "ok": False, "error": "timeout"}
    if result.get("error") == "stale request":  # deduplicated without effect: no success
        return {"type": "reply", "ok": False, "error": "stale_request"}
    return {"type": "reply", "ok": True, "result": result}


def _well_formed(command: dict[str, Any]) -> bool:
    """Whether a client command has the fields its operation needs, with the right types."""
    op = command.get("op")
    if not isinstance(command.get("client"), str) or not isinstance(command.get("seq"), int):
        return False
    if op == "get":
        return isinstance(command.get("key"), str)
    if op in ("put", "append"):
        return isinstance(command.get("key"), str) and isinstance(command.get("value"), str)
    if op == "txn":
        reads, writes = command.get("reads"), command.get("writes")
        return (
            isinstance(reads, list)
            and isinstance(writes, list)
            and all(_pair(read) for read in reads)
            and all(_write(write) for write in writes)
        )
    return False


def _pair(read: Any) -> bool:
    return (
        isinstance(read, list)
        and len(read) == 2
        and isinstance(read[0], str)
        and isinstance(read[1], int)
    )


def _write(write: Any) -> bool:
    return (
        isinstance(write, list)
        and len(write) == 3
        and write[0] in ("put", "append")
        and all(isinstance(part, str) for part in write[1:])
    )
