"""A group of real replica processes on loopback, for tests and benchmarks.

    with LocalGroup(Path("/tmp/kv")) as group:   # starts n1, n2, n3
        client = Client(group.peers)
        ...
        group.kill("n2")    # SIGKILL: only what was fsynced survives
        group.start("n2")   # back from its files

Free ports are found by binding port 0 and closing the socket, so another
process can take one before the server binds it. A group whose server exits
while starting (the address was taken) starts again on fresh ports, so the
race costs a retry, not a failed test.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

from examples.kvstore.client import Client

ROOT = Path(__file__).resolve().parents[2]  # where `python -m examples.kvstore` imports from
STARTS = 3  # attempts at starting the whole group on fresh ports
READY_SECONDS = 60.0  # interpreters start slowly on a busy machine


class LocalGroup:
    """`python -m examples.kvstore serve` processes with files and logs under `data`."""

    def __init__(self, data: Path, names: tuple[str, ...] = ("n1", "n2", "n3")) -> None:
        self.data = data
        self.names = names
        self.peers: dict[str, tuple[str, int]] = {}
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.log_start: dict[str, int] = {}  # each log's size when its replica last started

    @property
    def spec(self) -> str:
        """The `--peers` argument: `n1=127.0.0.1:PORT,...`."""
        return ",".join(f"{name}=127.0.0.1:{port}" for name, (_, port) in self.peers.items())

    def __enter__(self) -> LocalGroup:
        self.start_all()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop_all()

    def start_all(self) -> None:
        """Start every replica on fresh ports and wait until each listens."""
        self.data.mkdir(parents=True, exist_ok=True)
        for _ in range(STARTS):
            ports = _free_ports(len(self.names))
            self.peers = {
                name: ("127.0.0.1", port) for name, port in zip(self.names, ports, strict=True)
            }
            for name in self.names:
                self.start(name)
            if self._all_listening():
                return
            self.stop_all()
        raise RuntimeError(f"the group did not start in {STARTS} attempts; see {self.data}/*.log")

    def start(self, name: str) -> None:
        """Start (or restart) replica `name` from its files."""
        log = (self.data / f"{name}.log").open("ab")
        self.log_start[name] = log.tell()
        command = [sys.executable, "-m", "examples.kvstore", "serve", "--id", name]
        command += ["--peers", self.spec, "--data", str(self.data / name)]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        self.processes[name] = subprocess.Popen(  # seedbed: allow real replicas, never simulated
            command, cwd=ROOT, stdout=log, stderr=log, env=env
        )
        log.close()  # the child has its own copy

    def kill(self, name: str) -> None:
        """SIGKILL replica `name` and wait for it to be gone."""
        process = self.processes.pop(name)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def stop_all(self) -> None:
        for name in list(self.processes):
            self.kill(name)

    def log(self, name: str) -> str:
        """Everything replica `name` has logged, across its restarts."""
        return (self.data / f"{name}.log").read_text(errors="replace")

    async def until_a_leader(self) -> str:
        """The name of a replica that says it leads (waiting up to `READY_SECONDS`)."""
        client = Client(self.peers)
        deadline = time.monotonic() + READY_SECONDS
        try:
            while time.monotonic() < deadline:
                for name in self.peers:
                    try:
                        if (await client.status(name))["role"] == "leader":
                            return name
                    except (OSError, TimeoutError):
                        pass
                await asyncio.sleep(0.1)
        finally:
            client.close()
        raise RuntimeError(f"no leader was elected within {READY_SECONDS:g} s")

    def _all_listening(self) -> bool:
        """Wait until every replica logged that it listens; False if one exited first."""
        deadline = time.monotonic() + READY_SECONDS
        waiting = set(self.names)
        while waiting and time.monotonic() < deadline:
            for name in sorted(waiting):
                if self.processes[name].poll() is not None:
                    return False
                since_start = (self.data / f"{name}.log").read_bytes()[self.log_start[name] :]
                if b"listening on" in since_start:
                    waiting.discard(name)
            time.sleep(0.05)  # seedbed: allow polls real processes, outside any simulation
        return not waiting


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]  # seedbed: allow real ports for real replicas
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports
