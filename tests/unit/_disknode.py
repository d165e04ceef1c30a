"""One simulated node and its disk, driven from a test: the fs tests' shared harness.

A "node" here is a NodeRef with a SimDisk run on a SeedbedLoop, no
Simulation: a crash is `disk.crash()` and a new incarnation with the same disk.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

import seedbed
from seedbed import fs
from seedbed._core.entropy import Entropy
from seedbed._core.identity import NodeRef, new_node_context
from seedbed._core.trace import Trace


class Node:
    """One simulated node and its disk, driven from the test."""

    def __init__(
        self,
        seed: int = 0,
        config: fs.DiskConfig | None = None,
        *,
        name: str = "n1",
        coordinator: fs.FaultCoordinator | None = None,
        trace: Trace | None = None,
    ) -> None:
        self.loop = seedbed.SeedbedLoop(seed=seed, trace=trace)
        stream = Entropy(seed, self.loop.trace).stream(f"disk {name}")
        self.disk = fs.SimDisk(stream, config, name=name, coordinator=coordinator)
        self.ref = NodeRef(name, 1, disk=self.disk)

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        task = self.loop.create_task(coroutine, context=new_node_context(self.ref))
        return self.loop.run_until_complete(task)

    def crash(self) -> None:
        self.ref.alive = False
        self.disk.crash()
        self.ref = NodeRef(self.ref.name, self.ref.incarnation + 1, disk=self.disk)

    def read(self, path: str = "/f") -> bytes:
        return self.run(fs.read_file(path))  # type: ignore[no-any-return]

    def files(self) -> dict[str, bytes]:
        """Every file in the root directory and its contents, as the node now sees them."""

        async def read_all() -> dict[str, bytes]:
            return {name: await fs.read_file("/" + name) for name in await fs.listdir("/")}

        return self.run(read_all())  # type: ignore[no-any-return]


async def pwrite(path: str, data: bytes, offset: int, *, sync: bool = False) -> None:
    """Write `data` at `offset` of an existing file, fsynced only if asked."""
    async with await fs.open(path, "r+") as f:
        await f.pwrite(data, offset)
        if sync:
            await f.fsync()
