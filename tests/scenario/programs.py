"""Programs the scenario tests run, in this process and in fresh ones.

They live in a module of their own so `seedbed run tests/scenario/programs.py:NAME`
can import them in a new interpreter.
"""

from __future__ import annotations

import asyncio
import os
import random


async def fifty_tasks() -> tuple[float, int]:
    """50 tasks: varied sleeps, queue ping-pong, random.random(), and set order.

    The order in which tasks start comes from iterating a set of strings, so it
    depends on the string-hash seed: the same trace hash in two processes
    proves that seedbed fixed it, not luck.
    """
    names = {f"worker-{i}" for i in range(50)}
    pings: asyncio.Queue[tuple[str, asyncio.Queue[str]]] = asyncio.Queue()
    total = 0.0

    async def worker(name: str) -> None:
        nonlocal total
        reply: asyncio.Queue[str] = asyncio.Queue()
        number = int(name.split("-")[1])
        for _ in range(5):
            await asyncio.sleep(random.random() * 0.1 + number * 0.001)
            await pings.put((name, reply))
            total += len(await reply.get())

    async def ponger() -> int:
        served = 0
        while served < 250:
            name, reply = await pings.get()
            await asyncio.sleep(random.uniform(0.0, 0.01))
            await reply.put(name.upper())
            served += 1
        return served

    pong = asyncio.create_task(ponger())
    async with asyncio.TaskGroup() as group:
        for name in names:
            group.create_task(worker(name), name=name)
    return total, await pong


# Read at import, outside any run: inside one, os.getpid() is a simulated pid.
_REAL_PID = os.getpid()


async def depends_on_the_process() -> float:
    """Planted nondeterminism: the process id leaks into timing."""
    await asyncio.sleep(1 + _REAL_PID / 1e6)  # distinct for every process
    return asyncio.get_running_loop().time()


def echo_cluster(seed: int) -> str:
    """Five echo nodes under datagram loss, partitions and crashes; returns the trace hash.

    A client keeps asking every node over TCP (reconnecting after errors) and
    over UDP, while scheduled faults cut, block and crash parts of the world.
    """
    import seedbed

    names = [f"n{i}" for i in range(5)]

    async def node() -> None:
        async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while line := await reader.readline():
                    writer.write(line)
                    await writer.drain()
            except ConnectionError:
                pass
            writer.close()

        class Pong(asyncio.DatagramProtocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                self.transport = transport

            def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
                self.transport.sendto(data, addr)  # type: ignore[attr-defined]

        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(Pong, local_addr=("0.0.0.0", 9000))
        server = await asyncio.start_server(echo, "0.0.0.0", 7000)
        await server.serve_forever()

    async def client() -> dict[str, int]:
        outcome = {"ok": 0, "errors": 0, "pongs": 0}
        loop = asyncio.get_running_loop()

        class Ping(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
                outcome["pongs"] += 1

        transport, _ = await loop.create_datagram_endpoint(Ping, local_addr=("0.0.0.0", 9001))
        for round_number in range(40):
            target = random.choice(names)
            transport.sendto(b"ping", (target, 9000))
            try:
                async with asyncio.timeout(2.0):
                    reader, writer = await asyncio.open_connection(target, 7000)
                    writer.write(f"hello {round_number}\n".encode())
                    await writer.drain()
                    if await reader.readline():
                        outcome["ok"] += 1
                    writer.close()
            except (OSError, TimeoutError):
                outcome["errors"] += 1
            await asyncio.sleep(random.uniform(0.05, 0.3))
        return outcome

    network = seedbed.NetworkConfig(loss_probability=0.2, duplicate_probability=0.05)
    sim = seedbed.Simulation(seed=seed, network=network)
    for name in names:
        sim.host(name, node)
    sim.client("client", client)
    sim.at(1.0, lambda: sim.partition("client", "n1"))
    sim.at(2.0, lambda: sim.crash("n2"))
    sim.at(3.0, lambda: sim.repair("client", "n1"))
    sim.at(3.5, lambda: sim.hold("client", "n3"))
    sim.at(4.0, lambda: sim.restart("n2"))
    sim.at(4.5, lambda: sim.release("client", "n3"))
    sim.at(5.0, lambda: sim.isolate("n4"))
    sim.at(6.0, lambda: sim.heal())
    result = sim.run(max_time=120)
    outcome = result.values["client"]
    return f"{result.trace_hash} {outcome['ok']} {outcome['errors']} {outcome['pongs']}"
