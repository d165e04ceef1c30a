"""An equal trace hash is an equal run (issue 41 item 1): the hash places every
event at its step and virtual time, digests every delivered payload and seals
the run's step count, end time and outcome. A trace recorded under the old
format is refused in one line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import seedbed
from seedbed import Nondeterminism, UsageError
from seedbed._core import Trace
from seedbed._core.clock import VirtualClock
from seedbed._core.trace import route_word
from seedbed._core.tracefile import header_digest
from seedbed.aio.runner import execute, make_config
from seedbed.cli._group import cli

KNOBS = {"spins": 3, "payload": b"ping", "value": 1, "message": "boom"}


async def spinner() -> int:
    """No draw, no timer: only the number of callbacks differs."""
    for _ in range(KNOBS["spins"]):  # type: ignore[call-overload]
        await asyncio.sleep(0)
    return 0


async def returns() -> object:
    await asyncio.sleep(1)
    return KNOBS["value"]


async def fails() -> None:
    await asyncio.sleep(1)
    raise ValueError(KNOBS["message"])


def _world(seed: int) -> seedbed.SimulationResult:
    return _world_with(seedbed.Simulation(seed=seed))


@pytest.fixture(autouse=True)
def _knobs() -> object:
    saved = dict(KNOBS)
    yield
    KNOBS.update(saved)


def test_one_more_callback_with_the_same_draws_moves_the_hash() -> None:
    first = seedbed.run(spinner, seed=3)
    KNOBS["spins"] = 4
    second = seedbed.run(spinner, seed=3)
    assert first.value == second.value and first.steps != second.steps
    assert first.trace_hash != second.trace_hash


def test_the_same_events_with_another_result_or_failure_hash_differently() -> None:
    one = seedbed.run(returns, seed=1)
    KNOBS["value"] = 2
    assert seedbed.run(returns, seed=1).trace_hash != one.trace_hash
    hashes = set()
    for message in ("boom", "bang"):
        KNOBS["message"] = message
        ran = execute(fails, 1, make_config(None, None, {}), Trace(), None)
        assert isinstance(ran.error, ValueError)
        hashes.add(ran.result.trace_hash)
    assert len(hashes) == 2


def test_other_bytes_of_one_size_move_a_worlds_hash_and_replay_names_the_delivery(
    tmp_path: Path,
) -> None:
    first = _world(5)
    KNOBS["payload"] = b"pong"
    second = _world(5)
    assert first.values == second.values and first.steps == second.steps
    assert first.trace_hash != second.trace_hash
    path = tmp_path / "world.jsonl"
    KNOBS["payload"] = b"ping"
    _world_with(seedbed.Simulation(seed=5, trace=path))
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:-1]]
    deliveries = [e for e in lines if isinstance(e, list) and e[0] == "deliver"]
    assert [e[1:4] for e in deliveries] == [["c1", "server", 4], ["server", "c1", 4]]
    KNOBS["payload"] = b"pong"
    with pytest.raises(Nondeterminism) as caught:
        _world_with(seedbed.Simulation(seed=5, replay=path))
    assert "recorded: deliver c1 server 4" in str(caught.value)


def _world_with(sim: seedbed.Simulation) -> seedbed.SimulationResult:
    async def server() -> None:
        async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(await reader.readexactly(4))
            await writer.drain()

        await asyncio.start_server(echo, None, 7)

    async def client() -> int:
        await asyncio.sleep(0.01)
        reader, writer = await asyncio.open_connection("server", 7)
        writer.write(KNOBS["payload"])  # type: ignore[arg-type]
        await writer.drain()
        return len(await reader.readexactly(4))

    sim.host("server", server)
    sim.client("c1", client)
    return sim.run(max_time=10.0)


class _Here:
    """A position a test moves by hand."""

    def __init__(self) -> None:
        self.steps = 0
        self.clock = VirtualClock()


def test_markers_place_events_and_fold_the_same_kept_or_not() -> None:
    traces = [Trace(), Trace(keep=True)]
    places = [_Here(), _Here()]
    for trace, here in zip(traces, places, strict=True):
        trace.bind(here)
        trace.emit("task", 1, "main")
        here.steps, here.clock.now = 2, 500
        trace.emit("draw", "net", "delay", 3)
        trace.deliver(route_word("a", "b"), "a", "b", b"hello")  # same place: no marker
        here.clock.now = 900
        trace.time(900, 2)
        trace.emit("task", 2, "x")  # placed by the time jump
        trace.seal(2, 900, 7)
    quiet, kept = traces
    assert quiet.hash == kept.hash and quiet.count == kept.count
    assert kept.events == [
        ("task", 1, "main"), ("at", 2, 500), ("draw", "net", "delay", 3),
        ("deliver", "a", "b", 5, 907060870), ("time", 900, 2), ("task", 2, "x"),
    ]  # fmt: skip
    again = Trace(expected=kept.events)
    again.bind(here := _Here())
    again.emit("task", 1, "main")
    here.steps, here.clock.now = 3, 500  # one more callback before the draw
    with pytest.raises(Nondeterminism, match=r"recorded: at step 2, t=0\.000000500s"):
        again.emit("draw", "net", "delay", 3)


def test_a_trace_of_the_old_format_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    seedbed.run(returns, seed=1, trace=path)
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    del header["format"]  # as seedbed wrote them before issue 41
    header["digest"] = header_digest(header)
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(UsageError) as caught:
        seedbed.replay(returns, trace=path)
    message = str(caught.value)
    assert "\n" not in message and "recorded by an older seedbed" in message
    target = f"{__file__}:returns"
    shown = CliRunner().invoke(cli, ["replay", target, "--trace", str(path)])
    assert shown.exit_code == 2, shown.output
    assert "recorded by an older seedbed" in shown.output and "Traceback" not in shown.output
