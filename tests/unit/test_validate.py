"""The shared checks behind every config's validation, and the configs using them."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from seedbed import ClockConfig, DiskConfig, LoopConfig, NetworkConfig
from seedbed._core.validate import (
    check_at_least,
    check_bool,
    check_choice,
    check_fraction,
    check_positive_int,
    check_probability,
    check_seconds,
)
from seedbed.errors import UsageError

NAN = float("nan")
INF = float("inf")


def _seconds(value: object) -> None:
    check_seconds("Cfg", "timeout", value, allow_zero=True)


def _positive_seconds(value: object) -> None:
    check_seconds("Cfg", "timeout", value, allow_zero=False)


def _probability(value: object) -> None:
    check_probability("Cfg", "timeout", value)


def _fraction(value: object) -> None:
    check_fraction("Cfg", "timeout", value, below=0.5)


def _positive_int(value: object) -> None:
    check_positive_int("Cfg", "timeout", value)


def _bool(value: object) -> None:
    check_bool("Cfg", "timeout", value)


def _choice(value: object) -> None:
    check_choice("Cfg", "timeout", value, ("sector", "prefix"))


def _refused(check: Callable[[object], None], value: object) -> str:
    with pytest.raises(UsageError) as info:
        check(value)
    return str(info.value)


@pytest.mark.parametrize(
    ("check", "good"),
    [
        (_seconds, [0, 0.0, 1, 2.5, 1e9]),
        (_positive_seconds, [1e-9, 1, 30.0]),
        (_probability, [0, 0.0, 0.125, 1, 1.0]),
        (_fraction, [0, 1e-4, 0.4999]),
        (_positive_int, [1, 512, 1 << 40]),
        (_bool, [True, False]),
        (_choice, ["sector", "prefix"]),
    ],
)
def test_allowed_values_pass(check: Callable[[object], None], good: list[object]) -> None:
    for value in good:
        check(value)


@pytest.mark.parametrize(
    ("check", "bad"),
    [
        (_seconds, [True, False, NAN, INF, -INF, -1, -1e-9, "1", None]),
        (_positive_seconds, [True, NAN, INF, 0, 0.0, -1]),
        (_probability, [True, False, NAN, INF, -0.1, 1.5, "0.1"]),
        (_fraction, [True, False, NAN, INF, -1e-4, 0.5, 1]),
        (_positive_int, [True, False, 0, -1, 512.0, "1", None]),
        (_bool, [0, 1, "no", None]),
        (_choice, ["Sector", "", None, 1, ("sector",)]),
    ],
)
def test_refused_values_give_one_line_naming_setting_and_value(
    check: Callable[[object], None], bad: list[object]
) -> None:
    for value in bad:
        message = _refused(check, value)
        assert message.startswith("Cfg.timeout must be ")
        assert message.endswith(f", got {value!r}")
        assert "\n" not in message


def test_zero_seconds_only_where_allowed() -> None:
    _seconds(0)
    assert "must be a number of seconds in (0, 1e+09], got 0" in _refused(_positive_seconds, 0)
    assert "in [0, 1e+09], got -1" in _refused(_seconds, -1)


def test_a_bound_by_another_setting_names_both() -> None:
    check_at_least("Cfg", "high", 2.0, "low", 2.0)
    with pytest.raises(UsageError, match=r"^Cfg\.high must be >= low \(2\.0\), got 1\.5$"):
        check_at_least("Cfg", "high", 1.5, "low", 2.0)


@pytest.mark.parametrize(
    ("make", "setting", "value"),
    [
        (LoopConfig, "cpu_cost_min", -1.0),
        (LoopConfig, "timer_jitter_max", NAN),
        (LoopConfig, "max_steps", 0),
        (LoopConfig, "max_time", 0.0),
        (ClockConfig, "offset_max", INF),
        (ClockConfig, "drift_max", 0.5),
        (DiskConfig, "corrupt_read_probability", 1.5),
        (DiskConfig, "sector_size", 0),
        (DiskConfig, "torn_sector_probability", -0.5),
        (DiskConfig, "torn_garbage_probability", NAN),
        (DiskConfig, "torn_keep_length_probability", True),
        (DiskConfig, "tear_model", "per-write"),
        (NetworkConfig, "loss_probability", NAN),
        (NetworkConfig, "stream_chunk_max", 1.0),
    ],
)
def test_every_config_refuses_in_the_shared_wording(
    make: Callable[..., Any], setting: str, value: object
) -> None:
    owner = make.__name__
    pattern = rf"^{owner}\.{setting} must be .+, got {re.escape(repr(value))}$"
    with pytest.raises(UsageError, match=pattern):
        make(**{setting: value})


@pytest.mark.parametrize(
    ("make", "setting", "value"),
    [
        (LoopConfig, "timer_jitter_max", True),  # a bool: True was one second
        (LoopConfig, "max_steps", True),  # a bool: True was a budget of one step
        (LoopConfig, "max_time", INF),  # failed later, converting to nanoseconds
        (ClockConfig, "offset_max", False),
        (ClockConfig, "drift_max", "0.1"),  # a str: was a TypeError, not a UsageError
    ],
)
def test_bools_infinities_and_strings_are_usage_errors(
    make: Callable[..., Any], setting: str, value: object
) -> None:
    with pytest.raises(UsageError, match=rf"{setting} must be"):
        make(**{setting: value})


def test_the_cost_range_must_be_ordered() -> None:
    with pytest.raises(
        UsageError, match=r"cpu_cost_max must be >= cpu_cost_min \(0\.1\), got 0\.01"
    ):
        LoopConfig(cpu_cost_min=0.1, cpu_cost_max=0.01)
