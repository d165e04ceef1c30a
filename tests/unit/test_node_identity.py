"""A node's own process and name (issue 42, item 7), modelled on an MQTT broker's
`$SYS` plugin (`psutil.Process()`, `cpu_percent`, `memory_full_info`) and an SMTP
library's banner (`socket.getfqdn()`)."""

from __future__ import annotations

import os
import socket
from typing import Any

import pytest

import seedbed


def test_a_node_answers_its_own_name() -> None:
    async def node() -> tuple[str, str, str]:
        return socket.gethostname(), socket.getfqdn(), socket.getfqdn("0.0.0.0")

    sim = seedbed.Simulation(seed=1)
    sim.client("mail", node)
    assert sim.run().values["mail"] == ("mail", "mail", "mail")


def test_a_plain_run_is_named_localhost_and_other_names_still_escape() -> None:
    async def main() -> str:
        return socket.gethostname()

    assert seedbed.run(main, seed=1).value == "localhost"

    async def lookup() -> str:
        return socket.getfqdn("example.com")

    with pytest.raises(seedbed.SimulationEscape, match=r"gethostbyaddr"):
        seedbed.run(lookup, seed=1)


def _inspect_self() -> dict[str, Any]:
    psutil = pytest.importorskip("psutil", reason="psutil is a dev dependency: `uv sync`")
    process = psutil.Process()  # os.getpid(): the simulated process
    process.cpu_percent(interval=0)
    return {
        "pid": process.pid == os.getpid(),
        "running": process.is_running(),
        "cpu": process.cpu_percent(interval=0),
        "rss": process.memory_full_info().rss,
        "threads": process.num_threads(),
        "status": process.status(),
    }


def test_psutil_inspects_a_nodes_process_the_same_in_every_run() -> None:
    pytest.importorskip("psutil", reason="psutil is a dev dependency: `uv sync`")

    async def broker() -> dict[str, Any]:
        return _inspect_self()

    def world() -> dict[str, Any]:
        sim = seedbed.Simulation(seed=4)
        sim.client("broker", broker)
        return sim.run().values["broker"]  # type: ignore[no-any-return]

    first = world()
    assert first == {
        "pid": True, "running": True, "cpu": 0.0, "rss": 24 << 20, "threads": 1,
        "status": "sleeping",
    }  # fmt: skip
    assert world() == first


def test_psutil_inspects_a_plain_runs_process() -> None:
    pytest.importorskip("psutil", reason="psutil is a dev dependency: `uv sync`")

    async def main() -> dict[str, Any]:
        return _inspect_self()

    assert seedbed.run(main, seed=1).value["rss"] == 24 << 20


def test_the_live_parts_of_proc_self_still_escape() -> None:
    async def main() -> list[str]:
        return os.listdir("/proc/self/fd")

    with pytest.raises(seedbed.SimulationEscape, match=r"/proc/self/fd"):
        seedbed.run(main, seed=1)
