"""Every way a run could read the real machine: virtualized, or a `SimulationEscape`.

One table, one row per source (issue 23): none may read the machine in
silence. A virtualized source gives the same value in two runs of a seed and
a value the machine did not give; an escape fails the run naming the call.
"""

from __future__ import annotations

import asyncio
import ctypes
import datetime
import os
import pathlib
import resource
import sqlite3
import ssl
from collections.abc import Callable
from typing import Any

import pytest

import seedbed
from seedbed.aio._machine import fake_pid


def _sql(query: str) -> Any:
    connection = sqlite3.connect(":memory:")
    try:
        return connection.execute(query).fetchone()
    finally:
        connection.close()


def _read(path: str | pathlib.Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(16)


_PID = os.getpid()  # the real one, read before any run

VIRTUALIZED: dict[str, Callable[[], Any]] = {
    "os.getrandom": lambda: os.getrandom(16),
    "ssl.RAND_bytes": lambda: ssl.RAND_bytes(16),
    "os.getpid": os.getpid,
    "os.getppid": os.getppid,
    "sqlite datetime('now')": lambda: _sql(
        "SELECT datetime('now'), date(), time('now', '+1 hour')"
    ),
    "sqlite strftime/julianday": lambda: _sql("SELECT strftime('%s'), julianday('now')"),
}

ESCAPES: dict[str, tuple[Callable[[], Any], str]] = {
    # (stat, statm, status, smaps_rollup, cmdline and comm are the simulated process's)
    "open /proc/self": (lambda: _read("/proc/self/io"), "open('/proc/self/io')"),
    "pathlib /proc/self": (
        lambda: pathlib.Path("/proc/self/environ").read_bytes(),
        "open('/proc/self/environ')",
    ),
    "open /proc/<pid>": (lambda: _read(f"/proc/{_PID}/stat"), f"open('/proc/{_PID}/stat')"),
    "open /proc/thread-self": (lambda: _read("/proc/thread-self/stat"), "thread-self"),
    "listdir /proc/self/fd": (lambda: os.listdir("/proc/self/fd"), "os.listdir('/proc/self/fd')"),
    "scandir /proc/self": (lambda: list(os.scandir(b"/proc/self")), "os.scandir(b'/proc/self')"),
    "open /dev/urandom": (lambda: _read("/dev/urandom"), "open('/dev/urandom')"),
    "resource.getrusage": (
        lambda: resource.getrusage(resource.RUSAGE_SELF),
        "resource.getrusage()",
    ),
    "ctypes.CDLL": (lambda: ctypes.CDLL("libc.so.6"), "ctypes.CDLL('libc.so.6')"),
    "ctypes function look-up": (lambda: ctypes.CDLL(None).getpid(), "looking up 'getpid'"),
}


def _inside(source: Callable[[], Any], seed: int = 0) -> Any:
    async def main() -> Any:
        await asyncio.sleep(1.5)  # a virtual time the machine's clock is not at
        return source()

    return seedbed.run(main, seed=seed).value


@pytest.mark.parametrize("name", sorted(VIRTUALIZED))
def test_a_virtualized_source_reads_the_run_not_the_machine(name: str) -> None:
    source = VIRTUALIZED[name]
    first, again = _inside(source), _inside(source)
    assert first == again
    assert first != source()  # outside the run: the machine's own answer


def test_random_bytes_are_the_runs_labelled_draws() -> None:
    for source in (VIRTUALIZED["os.getrandom"], VIRTUALIZED["ssl.RAND_bytes"]):
        assert _inside(source, seed=1) != _inside(source, seed=2)
        assert len(_inside(source)) == 16


def test_sqlites_now_is_the_virtual_wall_clock() -> None:
    async def main() -> tuple[Any, str]:
        await asyncio.sleep(1.5)
        now = datetime.datetime.now(datetime.UTC)  # virtual inside a run
        return _sql("SELECT datetime('now'), date()"), now.strftime("%Y-%m-%d %H:%M:%S")

    (stamp, day), expected = seedbed.run(main, seed=0).value
    assert (stamp, day) == (expected, expected[:10])


def test_each_node_has_its_own_pid_stable_across_runs_and_restarts() -> None:
    def world() -> dict[str, Any]:
        seen: dict[str, list[int]] = {}

        async def host() -> None:
            seen.setdefault("server", []).append(os.getpid())
            await asyncio.Event().wait()

        async def client() -> tuple[int, int]:
            await asyncio.sleep(1)
            assert sim.crash("server") and sim.restart("server")
            await asyncio.sleep(1)
            return os.getpid(), os.getppid()

        sim = seedbed.Simulation(seed=3)
        sim.host("server", host)
        sim.client("client", client)
        values = sim.run(max_time=10).values
        return {"client": values["client"], "server": seen["server"]}

    first = world()
    assert first == world()
    assert first["client"] == (fake_pid("client"), 1)
    assert first["server"] == [fake_pid("server")] * 2  # restarted: the same name, the same pid
    assert fake_pid("client") != fake_pid("server") != os.getpid()


def test_proc_self_stat_is_the_simulated_process() -> None:
    """The files psutil reads of its own process: the fake pid's fixed view."""
    fields = _inside(lambda: pathlib.Path("/proc/self/stat").read_text().split())
    by_pid = _inside(lambda: pathlib.Path(f"/proc/{os.getpid()}/stat").read_text().split())
    assert fields == by_pid and int(fields[0]) == fake_pid("") != _PID
    assert fields[13:15] == ["0", "0"]  # no CPU time: the same in every run


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_a_source_out_of_the_simulations_reach_escapes_naming_the_call(name: str) -> None:
    source, call = ESCAPES[name]
    with pytest.raises(seedbed.SimulationEscape) as caught:
        _inside(source)
    assert call in str(caught.value)


def test_outside_a_run_every_source_is_the_machines() -> None:
    assert os.getpid() == _PID
    assert len(os.getrandom(4)) == 4
    assert _read("/proc/self/status")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_utime >= 0
    assert _sql("SELECT date()")[0] == datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
