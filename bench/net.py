"""Instructions per simulated stream message, end to end (issue 30).

A client sends a 200-byte length-prefixed frame to a host over an asyncio
stream and waits for the host's echo, over and over, on the network's
default links: each frame is one message (the `StreamWriter` write and
drain, the pipe's segment and latency, the arrival, the delivery to the
reader's protocol, the reader's wakeup and its two `readexactly` calls).
This is what every message of the example store pays below its own
framing. Callgrind counts two sizes in fresh processes and prints the
difference over the messages between them, so start-up and imports cancel
out; it repeats exactly, whatever the load.

    python bench/net.py            # needs valgrind
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _callgrind import per_unit

SMALL, LARGE = 200, 1200  # request/echo rounds: two messages each
BODY = b"x" * 200


def workload(rounds: int) -> None:
    """Run `rounds` request/echo rounds; print the loop steps the run took."""
    import asyncio

    import seedbed

    async def frame(reader: asyncio.StreamReader) -> bytes:
        header = await reader.readexactly(4)
        return await reader.readexactly(int.from_bytes(header, "big"))

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            body = await frame(reader)
            writer.write(len(body).to_bytes(4, "big") + body)
            await writer.drain()

    async def host() -> None:
        await asyncio.start_server(echo, None, 7)

    async def client() -> int:
        await asyncio.sleep(0.01)
        reader, writer = await asyncio.open_connection("server", 7)
        for _ in range(rounds):
            writer.write(len(BODY).to_bytes(4, "big") + BODY)
            await writer.drain()
            await frame(reader)
        return rounds

    sim = seedbed.Simulation(seed=1)
    sim.host("server", host)
    sim.client("c1", client)
    print(sim.run(max_time=10_000.0).steps)


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        workload(int(sys.argv[2]))
        return
    instructions, steps = per_unit(__file__, SMALL, LARGE, units_per_round=2)
    messages = 2 * (LARGE - SMALL)
    print(f"simulated stream, {messages} messages (a 204-byte frame each, default links):")
    print(f"| instructions per message | {instructions:,.0f} |")
    print(f"| loop steps per message | {steps:.2f} |")


if __name__ == "__main__":
    main()
