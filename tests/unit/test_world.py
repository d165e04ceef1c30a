"""The simulated world: named nodes, their lifecycle, interleaving and clocks."""

from __future__ import annotations

import asyncio
import datetime
import gc
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

import seedbed
from seedbed import ClockConfig, Simulation, UsageError, current_node


async def forever() -> None:
    while True:
        await asyncio.sleep(1)


def test_clients_end_the_run_and_their_values_are_returned() -> None:
    async def ask() -> str:
        await asyncio.sleep(3)
        return f"{current_node()} done"

    sim = Simulation(seed=1)
    sim.host("server", forever)
    sim.client("c1", ask)
    sim.client("c2", ask)
    result = sim.run(max_time=60)
    assert result.values == {"c1": "c1 done", "c2": "c2 done"}
    assert 3 <= result.virtual_time < 3.01
    assert result.seed == 1


def test_node_identity_follows_tasks_timers_and_future_callbacks() -> None:
    seen: list[tuple[str, str | None]] = []

    async def node_main() -> None:
        loop = asyncio.get_running_loop()
        me = current_node()
        loop.call_later(0.1, lambda: seen.append(("timer", current_node())))
        future = loop.create_future()
        future.add_done_callback(lambda _: seen.append(("future", current_node())))
        loop.call_soon(future.set_result, None)

        async def child() -> None:
            seen.append(("task", current_node()))

        await asyncio.create_task(child())
        await asyncio.sleep(1)
        assert current_node() == me

    sim = Simulation(seed=3)
    sim.client("alpha", node_main)
    sim.client("beta", node_main)
    sim.run()
    assert sorted(seen) == sorted(
        [(kind, name) for name in ("alpha", "beta") for kind in ("timer", "future", "task")]
    )
    assert current_node() is None  # outside any simulation


def test_a_client_exception_fails_the_run_with_the_seed_and_replay_hint() -> None:
    async def broken() -> None:
        await asyncio.sleep(1)
        raise RuntimeError("client gave up")

    sim = Simulation(seed=42)
    sim.host("server", forever)
    sim.client("c1", broken)
    with pytest.raises(RuntimeError, match="client gave up") as caught:
        sim.run(max_time=60)
    notes = "\n".join(caught.value.__notes__)
    assert "seed=42" in notes and "replay:" in notes


def test_clients_still_running_at_max_time_exceed_the_budget() -> None:
    sim = Simulation(seed=1)
    sim.client("c1", forever)
    with pytest.raises(seedbed.BudgetExceeded, match="max_time=10"):
        sim.run(max_time=10)


def test_a_crashed_node_never_runs_again_and_restart_runs_main_afresh() -> None:
    log: list[tuple[str, int, float]] = []
    incarnation = {"count": 0}

    async def host() -> None:
        incarnation["count"] += 1
        mine = incarnation["count"]
        loop = asyncio.get_running_loop()
        loop.call_later(10, lambda: log.append(("late timer", mine, loop.time())))
        try:
            while True:
                await asyncio.sleep(1)
                log.append(("tick", mine, loop.time()))
        finally:
            log.append(("finally", mine, loop.time()))

    async def client() -> None:
        await asyncio.sleep(2.5)
        assert sim.crash("h")
        assert not sim.crash("h")  # already down
        await asyncio.sleep(1)
        assert sim.restart("h")
        await asyncio.sleep(2.2)

    sim = Simulation(seed=5)
    sim.host("h", host)
    sim.client("c", client)
    sim.run(max_time=60)
    during = [entry for entry in log if entry[0] != "finally"]
    first = [entry for entry in during if entry[1] == 1]
    second = [entry for entry in during if entry[1] == 2]
    assert [kind for kind, _, _ in first] == ["tick", "tick"]  # nothing after the crash
    assert all(t < 2.6 for _, _, t in first)
    assert [kind for kind, _, _ in second] == ["tick", "tick"]
    assert all(3.5 < t < 5.8 for _, _, t in second)
    # finally blocks only run when the simulation is closed, never during it
    assert [entry[0] for entry in log[-2:]] == ["finally", "finally"]
    assert all(t == pytest.approx(5.7, abs=0.01) for _, _, t in log[-2:])


def test_crashed_tasks_leave_no_destroyed_task_noise(capsys: pytest.CaptureFixture[str]) -> None:
    async def host() -> None:
        await asyncio.get_running_loop().create_future()  # waits for nothing, forever

    def run_once() -> None:
        async def client() -> None:
            await asyncio.sleep(1)
            sim.crash("h")
            await asyncio.sleep(1)

        sim = Simulation(seed=1)
        sim.host("h", host)
        sim.client("c", client)
        sim.run(max_time=10)

    run_once()
    gc.collect()
    assert "destroyed" not in capsys.readouterr().err


def test_a_node_crashed_while_connecting_leaves_no_unretrieved_refusal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def dialer() -> None:
        await asyncio.open_connection("quiet", 7000)  # nothing listens there: refused

    def run_once() -> None:
        async def crash_the_dialer() -> None:
            await asyncio.sleep(0.0001)  # the SYN is on its way; the refusal will come back
            sim.crash("dialer")
            await asyncio.sleep(1)

        sim = Simulation(seed=4)
        sim.host("quiet", forever)
        sim.host("dialer", dialer)
        sim.client("c", crash_the_dialer)
        sim.run(max_time=10)

    run_once()
    gc.collect()
    assert "never retrieved" not in caplog.text


def test_control_verbs_work_between_steps_from_scheduled_actions_and_from_tasks() -> None:
    ticks: list[float] = []

    async def host() -> None:
        while True:
            await asyncio.sleep(1)
            ticks.append(asyncio.get_running_loop().time())

    sim = Simulation(seed=2)
    sim.host("h", host)
    sim.advance(2.5)
    assert len(ticks) == 2
    sim.crash("h")  # from the test, between steps
    sim.advance(3)
    assert len(ticks) == 2
    sim.at(6.0, lambda: sim.restart("h"))  # from a scheduled action

    async def crash_later() -> None:
        await asyncio.sleep(2.5)
        sim.crash("h")

    sim.at(6.0, crash_later)  # an async action is a task in the world
    sim.run(max_time=20)
    assert [round(t) for t in ticks] == [1, 2, 7, 8]


def test_a_host_exception_fails_the_run() -> None:
    async def host() -> None:
        await asyncio.sleep(1)
        raise ValueError("host broke")

    sim = Simulation(seed=1)
    sim.host("h", host)
    sim.client("c", forever)
    with pytest.raises(ValueError, match="host broke"):
        sim.run(max_time=10)


async def _breaks_at_once() -> None:
    seedbed.always(False, "broken from the first step")


async def _raises_later() -> None:
    await asyncio.sleep(1)
    raise ValueError("host broke")


@pytest.mark.parametrize(
    ("host", "error"),
    [(_breaks_at_once, seedbed.InvariantViolation), (_raises_later, ValueError)],
    ids=["always-at-the-first-step", "exception-later"],
)
def test_a_failing_world_reports_its_error_once_and_leaves_no_asyncio_noise(
    caplog: pytest.LogCaptureFixture, host: Callable[[], Awaitable[None]], error: type
) -> None:
    """The error leaves the run, and nothing else: no coroutine left unawaited,
    no task's copy of it logged as never retrieved when the garbage collector
    gets to it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for seed in range(10):  # in some, the host's first step precedes the run's own
            sim = Simulation(seed=seed)
            sim.host("h", host)
            sim.client("c", forever)
            with pytest.raises(error):
                sim.run(max_time=10)
            del sim
            gc.collect()
    assert not [str(w.message) for w in caught if "never awaited" in str(w.message)]
    assert "never retrieved" not in caplog.text


def racy_transfer(seed: int, interleave: bool = True) -> bool:
    """Two nodes check-then-act on shared state; True if both acted (an oversell).

    `b` wakes 1 µs after `a`. On one loop, `a` finishes check and act before
    `b` even looks; as separate processes, `b` may check in between.
    """
    shared = {"stock": 1, "sold": 0}

    def buyer(delay: float) -> Callable[[], Awaitable[None]]:
        async def buy() -> None:
            await asyncio.sleep(delay)
            if shared["stock"] > 0:
                await asyncio.sleep(0)  # e.g. a log line, a metric: any await
                shared["stock"] -= 1
                shared["sold"] += 1

        return buy

    # Without lanes, also without the loop's own exploration (which finds it too).
    explore = {} if interleave else {"explore_tasks": False, "clock_resolution": 0}
    sim = Simulation(seed=seed, interleave=interleave, **explore)
    sim.client("a", buyer(1.0))
    sim.client("b", buyer(1.000001))
    sim.run(max_time=10)
    return shared["sold"] == 2


def test_node_interleaving_exposes_a_check_then_act_race_between_nodes() -> None:
    with_lanes = sum(racy_transfer(seed) for seed in range(200))
    without = sum(racy_transfer(seed, interleave=False) for seed in range(200))
    assert with_lanes >= 20, with_lanes
    assert without == 0


def test_a_node_keeps_fifo_order_of_its_own_callbacks_under_interleaving() -> None:
    async def node_main() -> list[int]:
        loop = asyncio.get_running_loop()
        seen: list[int] = []
        for i in range(30):
            loop.call_soon(seen.append, i)
        await asyncio.sleep(1)
        return seen

    for seed in range(10):
        sim = Simulation(seed=seed)
        for name in ("a", "b", "c"):
            sim.client(name, node_main)
        values = sim.run().values
        assert all(value == list(range(30)) for value in values.values())


def test_each_node_has_its_own_wall_clock_and_monotonic_time_agrees() -> None:
    async def read_clocks() -> tuple[float, float, float]:
        await asyncio.sleep(100)
        wall = datetime.datetime.now(datetime.UTC).timestamp()
        return time.time(), wall, time.monotonic()

    sim = Simulation(seed=9, clock=ClockConfig(offset_max=5.0, drift_max=1e-3))
    for name in ("a", "b", "c"):
        sim.client(name, read_clocks)
    values = sim.run().values
    walls = [values[name][0] for name in "abc"]
    assert len(set(walls)) == 3
    assert all(abs(w - (1_704_067_200 + 100)) <= 5.0 + 0.2 for w in walls)
    assert all(abs(values[name][1] - values[name][0]) < 1e-3 for name in "abc")
    assert all(100.0 <= values[name][2] < 100.002 for name in "abc")  # a 1 ms tick late at most


def test_the_same_seed_gives_the_same_world_twice() -> None:
    def world(seed: int) -> str:
        async def chatter() -> int:
            import random

            total = 0
            for _ in range(20):
                await asyncio.sleep(random.random())
                total += 1
            return total

        sim = Simulation(seed=seed, clock=ClockConfig(offset_max=1.0))
        for name in ("a", "b", "c"):
            sim.client(name, chatter)
        sim.at(3.0, lambda: sim.crash("b"))
        sim.at(4.0, lambda: sim.restart("b"))
        return sim.run(max_time=100).trace_hash

    assert world(11) == world(11)
    assert len({world(seed) for seed in range(8)}) == 8


def test_bad_setup_is_refused_with_a_clear_message() -> None:
    sim = Simulation(seed=1)
    sim.client("a", forever)
    with pytest.raises(UsageError, match="already a node named 'a'"):
        sim.client("a", forever)
    with pytest.raises(UsageError, match="no node named 'zz'"):
        sim.crash("zz")
    with pytest.raises(UsageError, match="needs max_time"):
        Simulation(seed=1).run()
    with pytest.raises(UsageError, match="unknown Simulation option"):
        Simulation(seed=1, colour="blue")
    Simulation(seed=1, strict=True)  # a valid config is kept for the next world...
    with pytest.raises(UsageError, match="strict"):  # ...never one equal to a bad one
        Simulation(seed=1, strict=1)
    with pytest.raises(UsageError, match="strict"):
        Simulation(seed=1, strict=[True])  # cannot be a key: validated all the same


def test_a_restarted_node_keeps_only_what_its_disk_made_durable() -> None:
    from seedbed import fs

    seen: list[tuple[int, bytes]] = []

    async def host() -> None:
        restarts = 0
        if await fs.exists("/restarts"):
            restarts = int(await fs.read_file("/restarts"))
        scratch = await fs.read_file("/scratch") if await fs.exists("/scratch") else b""
        seen.append((restarts, scratch))
        durable = await fs.open("/restarts.tmp", "w")
        await durable.write(str(restarts + 1).encode())
        await durable.fsync()
        await durable.close()
        await fs.rename("/restarts.tmp", "/restarts")
        await fs.fsync_dir("/")
        volatile = await fs.open("/scratch", "w")  # never fsynced, nor its directory
        await volatile.write(b"lost on crash")
        await asyncio.sleep(1000)

    async def client() -> None:
        for _ in range(3):
            await asyncio.sleep(1)
            sim.bounce("h")
        await asyncio.sleep(1)

    sim = Simulation(seed=4)
    sim.host("h", host)
    sim.client("c", client)
    sim.run(max_time=100)
    assert seen == [(0, b""), (1, b""), (2, b""), (3, b"")]


def test_real_socket_io_inside_a_node_escapes_even_when_swallowed() -> None:
    import socket

    async def sneaky() -> str:
        loop = asyncio.get_running_loop()
        with socket.socket() as sock:  # creating one is allowed: aiohappyeyeballs does
            try:
                await loop.sock_recv(sock, 10)
            except Exception:
                pass
        await asyncio.sleep(1)
        return "carried on"

    sim = Simulation(seed=1)
    sim.client("c", sneaky)
    with pytest.raises(seedbed.SimulationEscape, match="sock_recv"):
        sim.run(max_time=10)


def test_a_failing_scheduled_action_fails_the_run() -> None:
    def broken_nemesis() -> None:
        raise LookupError("no such fault")

    sim = Simulation(seed=1)
    sim.client("c", forever)
    sim.at(1.0, broken_nemesis)
    with pytest.raises(LookupError, match="no such fault"):
        sim.run(max_time=10)


def test_a_deadlocked_world_names_each_nodes_waiting_line() -> None:
    async def asker() -> None:
        reader, _ = await asyncio.open_connection("server", 7000)
        await reader.readline()  # the server never answers

    async def server() -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await asyncio.Event().wait()

        listener = await asyncio.start_server(handle, "0.0.0.0", 7000)
        await listener.serve_forever()

    sim = Simulation(seed=3)
    sim.host("server", server)
    sim.client("c", asker)
    with pytest.raises(seedbed.Deadlock) as caught:
        sim.run(max_time=100)
    message = str(caught.value)
    assert "c#1: waits at" in message and "in asker (inside asyncio" in message
    assert "server#1: waits at" in message and "in server (inside seedbed" in message
    assert "seed=3" in message


def test_aiohttp_in_a_simulation_survives_a_server_crash_mid_request() -> None:
    import aiohttp
    from aiohttp import web

    async def server() -> None:
        async def hello(request: web.Request) -> web.Response:
            await asyncio.sleep(0.5)  # long enough to be crashed mid-request
            return web.Response(text=f"hello from {current_node()}")

        app = web.Application()
        app.router.add_get("/", hello)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, None, 8080).start()
        await asyncio.Event().wait()

    async def client() -> list[str]:
        seen = []
        async with aiohttp.ClientSession() as session:
            for _ in range(3):
                try:
                    async with session.get("http://server:8080/") as response:
                        seen.append(await response.text())
                except aiohttp.ClientError as exc:
                    seen.append(type(exc).__name__)
                    await asyncio.sleep(2)  # the server is back by then
        return seen

    sim = Simulation(seed=2)
    sim.host("server", server)
    sim.client("client", client)
    sim.at(0.2, lambda: sim.crash("server"))  # while the first request waits
    sim.at(1.0, lambda: sim.restart("server"))
    seen = sim.run(max_time=60).values["client"]
    assert seen[0] != "hello from server"  # an aiohttp error, not a response
    assert seen[1:] == ["hello from server", "hello from server"]


def test_a_crashed_nodes_finally_blocks_never_reach_the_network_or_the_disk() -> None:
    from seedbed import fs

    received: list[bytes] = []
    files_after_restart: list[list[str]] = []

    async def listener() -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while line := await reader.readline():
                received.append(line)

        server = await asyncio.start_server(handle, "0.0.0.0", 7000)
        await server.serve_forever()

    async def victim() -> None:
        files_after_restart.append(await fs.listdir("/"))
        _, writer = await asyncio.open_connection("listener", 7000)
        writer.write(b"hello\n")
        await writer.drain()
        try:
            await asyncio.sleep(3600)
        finally:  # a real crash never runs this; neither may a simulated one
            writer.write(b"goodbye\n")
            await fs.write_file("/last-words", b"goodbye", durable=True)

    async def client() -> None:
        await asyncio.sleep(1)
        sim.crash("victim")
        await asyncio.sleep(1)
        sim.restart("victim")
        await asyncio.sleep(1)

    sim = Simulation(seed=6)
    sim.host("listener", listener)
    sim.host("victim", victim)
    sim.client("c", client)
    sim.run(max_time=60)
    assert received == [b"hello\n", b"hello\n"]  # one per incarnation, no goodbye
    assert files_after_restart == [[], []]


def chatty_world(seed: int, crash_at: float, **options: object) -> Simulation:
    async def node() -> int:
        import random

        total = 0
        for _ in range(10):
            await asyncio.sleep(random.random())
            total += 1
        return total

    sim = Simulation(seed=seed, **options)  # type: ignore[arg-type]
    for name in ("a", "b"):
        sim.client(name, node)
    sim.at(crash_at, lambda: sim.bounce("b"))
    return sim


def test_a_recorded_world_replays_and_a_changed_one_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "world.jsonl"
    recorded = chatty_world(3, 2.0, trace=path).run(max_time=100)
    assert chatty_world(3, 2.0, replay=path).run(max_time=100).trace_hash == recorded.trace_hash
    with pytest.raises(seedbed.Nondeterminism) as caught:
        chatty_world(3, 2.5, replay=path).run(max_time=100)  # the crash moved
    assert "recorded:" in str(caught.value) and "actual:" in str(caught.value)
    with pytest.raises(UsageError, match="recorded with seed 3, not 4"):
        chatty_world(4, 2.0, replay=path)


def test_subprocesses_and_pipes_inside_a_node_escape_even_when_swallowed() -> None:
    async def shell_out() -> str:
        try:
            await asyncio.create_subprocess_exec("true")
        except Exception:
            pass
        await asyncio.sleep(1)
        return "carried on"

    sim = Simulation(seed=1)
    sim.client("c", shell_out)
    with pytest.raises(seedbed.SimulationEscape, match="subprocess_exec"):
        sim.run(max_time=10)


def test_a_node_main_that_is_not_async_fails_the_run_saying_so() -> None:
    sim = seedbed.Simulation(seed=1)
    sim.client("c1", lambda: 42)
    with pytest.raises(seedbed.UsageError, match="a node's main must be an async function; it"):
        sim.run(max_time=1.0)


def test_an_async_action_at_a_time_runs_to_its_end() -> None:
    sim = seedbed.Simulation(seed=1)
    seen: list[float] = []

    async def action() -> None:
        await asyncio.sleep(0.5)
        seen.append(asyncio.get_running_loop().time())

    sim.at(1.0, action)
    sim.run(max_time=3.0)
    assert seen and 1.5 <= seen[0] < 1.6
