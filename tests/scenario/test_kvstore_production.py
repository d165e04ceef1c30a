"""kvstore in production mode: three real server processes on loopback TCP and real files.

The test writes through the group, SIGKILLs the leader, keeps writing,
restarts it from its data directory and watches it catch up; no
acknowledged write may be lost. Garbage, truncated and oversized frames
close only the offending connection. Everything is bounded in time.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from examples.kvstore import frames, local
from examples.kvstore.client import Client, Unavailable
from examples.kvstore.local import LocalGroup

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def group(tmp_path: Path) -> Iterator[LocalGroup]:
    with LocalGroup(tmp_path) as group:
        yield group


async def _write_all(client: Client, keys: list[str]) -> list[str]:
    """Append to each key, retrying until acknowledged; the keys acknowledged."""
    for key in keys:
        for _ in range(5):
            try:
                await client.append(key, f"v-{key}")
                break
            except Unavailable:
                client.new_session()
        else:
            raise AssertionError(f"append to {key} never acknowledged")
    return keys


async def _wait_caught_up(client: Client, name: str, leader: str, deadline: float) -> None:
    while True:
        try:
            mine, theirs = await client.status(name), await client.status(leader)
            if mine["commit"] >= theirs["commit"] > 0 and mine["leader"] == leader:
                return
        except (TimeoutError, OSError):
            pass
        assert time.monotonic() < deadline, f"{name} never caught up with {leader}"
        await asyncio.sleep(0.2)


async def _scenario(group: LocalGroup) -> None:
    deadline = time.monotonic() + 60
    client = Client(group.peers, deadline=20.0)
    acknowledged = await _write_all(client, [f"a{i}" for i in range(20)])
    leader = client.replica
    group.kill(leader)
    acknowledged += await _write_all(client, [f"b{i}" for i in range(20)])
    new_leader = client.replica
    assert new_leader != leader
    group.start(leader)
    acknowledged += await _write_all(client, [f"c{i}" for i in range(80)])  # past a snapshot
    await _wait_caught_up(client, leader, client.replica, deadline)
    for key in acknowledged:
        assert await client.get(key) == [f"v-{key}"], f"acknowledged write to {key} lost"
    status = await client.status(leader)
    assert status["role"] == "follower" and status["snapshot_index"] > 0
    client.close()


def test_three_processes_survive_a_leader_kill_and_the_restarted_one_catches_up(
    group: LocalGroup,
) -> None:
    asyncio.run(_scenario(group))


async def _send_raw(port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    writer.write_eof()
    reply = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    return reply


async def _bad_input(group: LocalGroup) -> None:
    client = Client(group.peers, deadline=20.0)
    await _write_all(client, ["before"])
    port = group.peers["n1"][1]
    oversized = struct.pack(">II", frames.MAX_FRAME + 1, 0)
    for garbage in (b"GET / HTTP/1.1\r\n\r\n", frames.encode({"type": "request"})[:-3], oversized):
        assert await _send_raw(port, garbage) == b""  # closed, nothing answered
    await _write_all(client, ["after"])
    assert await client.get("after") == ["v-after"]
    client.close()


def test_bad_input_closes_only_that_connection_with_a_logged_reason(group: LocalGroup) -> None:
    asyncio.run(_bad_input(group))
    log = group.log("n1")
    assert "exceeds the maximum" in log and "stream ended inside a frame" in log


def test_the_client_command_writes_and_reads(group: LocalGroup) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "examples.kvstore", "client", "--peers", group.spec]
        return subprocess.run(
            [*command, "--timeout", "20", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    assert cli("put", "greeting", "hello").stdout == "ok\n"
    assert cli("append", "greeting", "world").returncode == 0
    assert cli("get", "greeting").stdout == '["hello", "world"]\n'
    txn = cli("txn", "r greeting", "append other 1")
    assert txn.returncode == 0 and '"committed": true' in txn.stdout
    bad = cli("txn", "frobnicate x")
    assert bad.returncode == 2 and "bad transaction step" in bad.stderr


def test_a_group_whose_port_was_taken_starts_again_on_fresh_ports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    picks = [[taken.getsockname()[1], *local._free_ports(2)]]  # the race, lost once
    fresh = local._free_ports
    monkeypatch.setattr(local, "_free_ports", lambda count: picks.pop() if picks else fresh(count))
    try:
        with LocalGroup(tmp_path) as group:
            assert group.peers["n1"][1] != taken.getsockname()[1]
            assert "address already in use" in group.log("n1").lower()
            assert asyncio.run(group.until_a_leader()) in group.peers
    finally:
        taken.close()
