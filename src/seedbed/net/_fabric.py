"""What every part of one simulated network shares: loop, clock, entropy, links.

Kept apart from `SimNetwork` so transports hold one small slotted object
(the hot path reads the clock and the links through it) and never import the
network's public face.
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

from seedbed._core import Stream, Trace
from seedbed._core.identity import NodeDirectory
from seedbed.net._addresses import AddressBook, PortTable
from seedbed.net._config import NetworkConfig
from seedbed.net._links import Links

NS = 1_000_000_000
CHUNK_BATCH = 256  # chunk split points drawn at once
CHUNK_VALUES = 1 << 16  # chunk fractions are 16-bit values


class Fabric:
    """Shared state of one network; see the module docstring."""

    __slots__ = (
        "addresses",
        "at",
        "chunk_fractions",
        "chunk_max",
        "clock",
        "config",
        "context",
        "datagram_ports",
        "endpoints",
        "links",
        "loop",
        "nodes",
        "numbers",
        "split_from",
        "split_span",
        "stream",
        "stream_ports",
        "trace",
        "window",
    )

    def __init__(
        self, loop: Any, stream: Stream, config: NetworkConfig, nodes: NodeDirectory
    ) -> None:
        self.loop: asyncio.AbstractEventLoop = loop
        self.clock = loop.clock
        # Schedule `callback` at an integer ns deadline, exactly: the loop's own method.
        self.at = loop.call_at_ns
        self.stream = stream
        self.trace: Trace = loop.trace
        self.config = config
        self.nodes = nodes
        self.chunk_max = config.stream_chunk_max
        self.window = config.stream_window
        # A delivery splits when its 16-bit chunk fraction is at least
        # `split_from`; the excess over `split_span` values sizes the prefix.
        self.split_span = round(config.stream_split_probability * CHUNK_VALUES)
        self.split_from = CHUNK_VALUES - self.split_span
        self.addresses = AddressBook(list(nodes.names()))
        stalls = config.latency_model == "tail" and config.stall_per_second > 0
        self.links = Links(stream, self.trace, config, nodes.names,
                           loop.entropy.stream("net stalls") if stalls else None)  # fmt: skip
        self.stream_ports = PortTable("stream")
        self.datagram_ports = PortTable("datagram")
        # Open connection ends and datagram endpoints by node, in creation
        # order: a crash walks them in that order.
        self.endpoints: dict[str, dict[int, Any]] = {}
        self.numbers = 0
        self.chunk_fractions: list[int] = []
        # Network events (a SYN arriving, a reset timer) run in no node.
        self.context = contextvars.Context()

    def now(self) -> int:
        """Virtual time in integer nanoseconds."""
        return int(self.clock.now)

    def chunk_fraction(self) -> int:
        """A uniform 16-bit value for the next chunk split, drawn in labelled batches."""
        fractions = self.chunk_fractions
        if not fractions:
            bits = self.stream.raw(16 * CHUNK_BATCH, "chunk sizes")
            self.trace.emit("draw", self.stream.name, "chunk sizes", bits & ((1 << 64) - 1))
            fractions[:] = bits.to_bytes(2 * CHUNK_BATCH, "little")
            fractions[:] = [
                fractions[i] | fractions[i + 1] << 8 for i in range(0, 2 * CHUNK_BATCH, 2)
            ]
        return fractions.pop()

    def next_number(self) -> int:
        self.numbers += 1
        return self.numbers

    def register(self, node: str, number: int, endpoint: Any) -> None:
        self.endpoints.setdefault(node, {})[number] = endpoint

    def forget(self, node: str, number: int) -> None:
        owned = self.endpoints.get(node)
        if owned is not None:
            owned.pop(number, None)
