"""Programs for the determinism tier: each exercises one way a run could depend on
its process (memory addresses, garbage collection, task names, the seeded
randomness) while staying a plain asyncio program; `SIMULATIONS` are worlds
of nodes, run by seed."""

from __future__ import annotations

import asyncio
import random
import sys
from typing import Any

import seedbed
from seedbed.aio import _ordering

try:  # imported before any run: a module first imported inside a run draws from
    # that run alone (aiohttp's websocket writer makes a `random.Random()` at import)
    import aiohttp
    from aiohttp import web
except ImportError:  # the bare interpreters of the cross-version test
    aiohttp = web = None  # type: ignore[assignment]
HAVE_AIOHTTP = aiohttp is not None


async def _echo(index: int) -> int:
    await asyncio.sleep(0)
    return index


async def as_completed_unordered() -> list[int]:
    """as_completed as the stdlib does it: coroutines ordered by address."""
    # The stdlib's own, from the provider that keeps it: a global of this
    # module holding it would be rebound to seedbed's ordered stand-in.
    stdlib = _ordering._real_as_completed
    return [await f for f in stdlib([_echo(i) for i in range(12)])]


async def as_completed_order() -> list[int]:
    """The order as_completed yields tasks that finish at one step."""
    return [await f for f in asyncio.as_completed([_echo(i) for i in range(12)])]


async def named_workers() -> list[str]:
    """Named tasks racing on seeded sleeps, drawing from the random module."""
    finished: list[str] = []

    async def worker(name: str) -> None:
        for _ in range(3):
            await asyncio.sleep(random.random() / 100)
        finished.append(name)

    async with asyncio.TaskGroup() as group:
        for index in range(6):
            group.create_task(worker(f"worker-{index}"), name=f"worker-{index}")
    done, _ = await asyncio.wait(
        [asyncio.create_task(_echo(i), name=f"echo-{i}") for i in range(5)]
    )
    finished.extend(task.get_name() for task in done)
    return finished


class _Cycle:
    """Garbage that only the cycle collector frees; its finalizer logs the step."""

    def __init__(self, log: list[str], label: str) -> None:
        self.me = self
        self.log = log
        self.label = label

    def __del__(self) -> None:
        loop = asyncio.get_running_loop()
        self.log.append(f"{self.label}@{loop.steps}")  # type: ignore[attr-defined]


async def gc_finalizers() -> list[str]:
    """Cyclic garbage made all through a run: when each finalizer runs must not vary."""
    log: list[str] = []
    for round_ in range(40):
        _Cycle(log, f"c{round_}")
        for _ in range(120):  # 4,800 steps: a collection inside the run
            [object() for _ in range(50)]  # allocations that would trigger automatic collection
            await asyncio.sleep(0)
    return log


async def mixed() -> dict[str, Any]:
    """All of the above in one run."""
    return {
        "as_completed": await as_completed_order(),
        "named": await named_workers(),
        "gc": await gc_finalizers(),
        "random": random.getrandbits(32),
    }


# -- a simulated world: aiohttp, and tasks made without create_task ------------


async def _part(index: int) -> int:
    await asyncio.sleep(0.001 * (index % 3))
    return index


def _start_part(loop: asyncio.AbstractEventLoop, index: int) -> asyncio.Task[int]:
    """A task made by the class itself, eagerly where the interpreter can (as aiohttp does)."""
    if sys.version_info >= (3, 12):
        return asyncio.Task(_part(index), loop=loop, eager_start=True)
    return asyncio.Task(_part(index), loop=loop)


async def _fan_out(request: Any) -> Any:
    """Sub-tasks, some finished by the timeout: `done`/`pending` in set order, by name."""
    loop = asyncio.get_running_loop()
    tasks = [_start_part(loop, index) for index in range(8)]
    done, pending = await asyncio.wait(tasks, timeout=0.0015)
    for task in pending:
        task.cancel()
    return web.json_response(
        {"done": [t.get_name() for t in done], "pending": [t.get_name() for t in pending]}
    )


async def _http_server() -> None:
    app = web.Application()
    app.router.add_get("/", _fan_out)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, None, 8080).start()
    await asyncio.Event().wait()


async def _http_client() -> list[Any]:
    await asyncio.sleep(0.1)
    answers = []
    async with aiohttp.ClientSession() as session:
        for _ in range(2):
            async with session.get("http://server:8080/") as response:
                answers.append(await response.json())
    return answers


def aiohttp_eager_tasks(seed: int) -> tuple[str, dict[str, Any]]:
    """An aiohttp client and server whose handler starts tasks with `asyncio.Task(...)`.

    Returns the trace hash and every client's value.
    """
    sim = seedbed.Simulation(seed=seed)
    sim.host("server", _http_server)
    sim.client("client", _http_client)
    result = sim.run(max_time=10.0)
    return result.trace_hash, result.values


async def _test_server_requests() -> list[Any]:
    """aiohttp's TestServer and TestClient in a plain run: the loopback network."""
    from aiohttp.test_utils import TestClient, TestServer

    app = web.Application()
    app.router.add_get("/", _fan_out)
    async with TestClient(TestServer(app)) as client:
        responses = await asyncio.gather(*(client.get("/") for _ in range(3)))
        return [await response.json() for response in responses]


def aiohttp_plain_loopback(seed: int) -> tuple[str, list[Any]]:
    """Three concurrent requests to an in-process aiohttp server, no Simulation."""
    result = seedbed.run(_test_server_requests, seed=seed)
    return result.trace_hash, result.value


async def _named_handler(request: Any) -> Any:
    """Which task served which request, and what else was running then."""
    me = asyncio.current_task()
    assert me is not None
    await asyncio.sleep(0.001 * (int(request.match_info["i"]) % 3))
    running = [task.get_name() for task in asyncio.all_tasks()]
    return web.json_response({"me": me.get_name(), "running": running})


async def _handlers_server() -> None:
    app = web.Application()
    app.router.add_get("/{i}", _named_handler)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, None, 8080).start()
    await asyncio.Event().wait()


async def _concurrent_client() -> list[Any]:
    await asyncio.sleep(0.1)
    async with aiohttp.ClientSession() as session:

        async def one(index: int) -> Any:
            async with session.get(f"http://server:8080/{index}") as response:
                return await response.json()

        return list(await asyncio.gather(*(one(index) for index in range(6))))


def aiohttp_shared_lookup(seed: int) -> tuple[str, dict[str, Any]]:
    """Six concurrent requests share one DNS lookup: on 3.11 (no eager task) the
    other five wait on a set of plain futures, woken in its iteration order."""
    sim = seedbed.Simulation(seed=seed)
    sim.host("server", _handlers_server)
    sim.client("client", _concurrent_client)
    result = sim.run(max_time=10.0)
    return result.trace_hash, result.values


# aiohttp is a test dependency: the bare interpreters of the cross-version test
# lack it (`_batch` runs these only where it is installed).
SIMULATIONS = {
    "aiohttp_eager_tasks": aiohttp_eager_tasks,
    "aiohttp_plain_loopback": aiohttp_plain_loopback,
    "aiohttp_shared_lookup": aiohttp_shared_lookup,
}


async def waits_for() -> list[Any]:
    """`asyncio.wait_for` in a child task: 3.11 wraps the awaitable in a task, 3.12+ not."""

    async def child(timeout: float) -> Any:
        try:
            return await asyncio.wait_for(_part(5), timeout=timeout)
        except TimeoutError:
            return "timeout"

    tasks = [asyncio.create_task(child(t)) for t in (0.001, 0.01)]
    await asyncio.sleep(1)
    return [task.result() for task in tasks]
