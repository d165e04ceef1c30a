"""The fixed small scenario `bench/sweep.py` sweeps: three servers, two clients, crashes.

Module level, so a sweep worker imports it by file name
(`bench/_sweep_scenario.py:scenario`). A few ms of simulation per seed. The
echo server and client are the tests' own (`tests/_echo.py`), so the repo's
root goes on sys.path, as the other benches do for `examples`.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests._echo import echo_client, echo_server

from seedbed import FaultProfile, Scenario, Simulation

PORT = 7100


def world(sim: Simulation) -> None:
    client = echo_client(PORT, rounds=3, lines=5, timeout=0.5, pause=0.2)
    for name in ("server", "standby", "witness"):
        sim.host(name, echo_server(PORT))
    sim.client("a", client)
    sim.client("b", client)


scenario = Scenario(
    "bench_sweep", world, faults=FaultProfile(crash_per_second=0.5, downtime_mean=0.3),
    duration=5.0,
)  # fmt: skip
