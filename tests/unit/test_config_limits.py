"""Configs refuse what they cannot run (issue 11, item 4).

A finite value too large to schedule, a non-bool flag, a component of the
wrong type or a bad seed is refused where it is written, in one line naming
the setting and the allowed range, never deep inside a run.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

import seedbed
from seedbed import ClockConfig, DiskConfig, LoopConfig, NetworkConfig, UsageError

HUGE_INT = 10**400

UNSCHEDULABLE = [
    (LoopConfig, "max_time", 1e308),
    (LoopConfig, "cpu_cost_max", 1e300),
    (LoopConfig, "timer_jitter_max", HUGE_INT),
    (LoopConfig, "max_steps", HUGE_INT),
    (NetworkConfig, "latency_max", 1e300),
    (NetworkConfig, "connect_timeout", HUGE_INT),
    (NetworkConfig, "stream_window", HUGE_INT),
    (DiskConfig, "latency_max", 1e300),
    (DiskConfig, "sector_size", HUGE_INT),
    (ClockConfig, "offset_max", 1e300),
    (ClockConfig, "drift_max", HUGE_INT),
]


@pytest.mark.parametrize(("config", "field", "value"), UNSCHEDULABLE)
def test_unschedulable_values_are_refused_with_the_allowed_range(
    config: type, field: str, value: Any
) -> None:
    with pytest.raises(UsageError) as info:
        config(**{field: value})
    message = str(info.value)
    assert message.startswith(f"{config.__name__}.{field} must be ")
    assert "\n" not in message and len(message) < 200
    assert "[" in message or "(" in message  # the allowed range is named


@pytest.mark.parametrize("value", ["no", 1, 0, None])
def test_non_bool_flags_are_refused(value: object) -> None:
    with pytest.raises(UsageError, match=r"LoopConfig\.strict must be a bool"):
        LoopConfig(strict=value)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="interleave must be a bool"):
        seedbed.Simulation(seed=1, interleave=value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("disk", "x", "DiskConfig"),
        ("network", {"loss_probability": 0.1}, "NetworkConfig"),
        ("clock", 3, "ClockConfig"),
    ],
)
def test_world_components_of_the_wrong_type_name_the_expected_type(
    option: str, value: object, expected: str
) -> None:
    with pytest.raises(
        UsageError, match=f"Simulation\\({option}=...\\) takes a seedbed.{expected}"
    ):
        seedbed.Simulation(seed=1, **{option: value})


@pytest.mark.parametrize("seed", [-1, 2**64, HUGE_INT, 1.5, True, "7"])
def test_every_entry_point_refuses_a_bad_seed_with_usage_error(seed: object) -> None:
    async def main() -> None:
        pass

    with pytest.raises(UsageError, match="seed must be a non-negative int below 2\\*\\*64"):
        seedbed.new_event_loop(seed=seed)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="seed must be"):
        seedbed.EventLoopPolicy(seed=seed)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="seed must be"):
        seedbed.run(main, seed=seed)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="seed must be"):
        seedbed.Simulation(seed=seed)  # type: ignore[arg-type]


def test_an_unknown_loop_option_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown loop option"):
        seedbed.new_event_loop(seed=1, max_tme=3)


def test_cli_refuses_an_unschedulable_max_time_in_one_line() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "seedbed",
            "run",
            "examples.race:main",
            "--seed=1",
            "--max-time=1e308",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "max_time must be a number of seconds in (0, 1e+09]" in done.stderr
