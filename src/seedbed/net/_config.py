"""How the simulated network misbehaves: one validated, frozen options object.

Settings follow TigerBeetle's naming (qualifiers last: `latency_min`,
`loss_probability`). Times are user-facing seconds here and integer
nanoseconds everywhere inside the network.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from seedbed._core import to_ns
from seedbed.errors import UsageError


@dataclass(frozen=True)
class NetworkConfig:
    """The fault model of a simulated network. Validated on construction.

    - `latency_min`/`latency_mean`/`latency_max`: one-way delay per hop,
      drawn per delivery as `min + exponential(mean - min)`, capped at `max`.
    - `loss_probability`, `duplicate_probability`: per datagram. Streams are
      reliable while connected: they never lose or duplicate bytes.
    - `partition_reset_timeout`: a stream whose traffic a partition drops
      resets after this long (like TCP giving up on retransmissions).
    - `connect_timeout`: a connect into a partition fails with `TimeoutError`
      after this long.
    - `stream_chunk_max`: bytes in flight arrive in seeded chunks of at most
      this size, so a reader sees partial messages.
    - `stream_split_probability`: the chance that a delivery hands over only a
      seeded prefix of what has arrived (the rest follows at the same instant,
      in a later callback). A reader that assumes one read per message fails
      within a few dozen messages at the default; each split costs about a
      sixth of a small message's simulation time (two more callbacks).
    - `stream_window`: bytes a stream may have written but not yet delivered
      before the writer's protocol is paused (`drain()` blocks).
    """

    latency_min: float = 0.0005
    latency_mean: float = 0.001
    latency_max: float = 0.005
    loss_probability: float = 0.0
    duplicate_probability: float = 0.0
    partition_reset_timeout: float = 30.0
    connect_timeout: float = 10.0
    stream_chunk_max: int = 65536
    stream_window: int = 65536
    stream_split_probability: float = 0.125

    def __post_init__(self) -> None:
        for name in ("latency_min", "latency_mean", "latency_max"):
            _check_seconds(name, getattr(self, name), allow_zero=True)
        for name in ("partition_reset_timeout", "connect_timeout"):
            _check_seconds(name, getattr(self, name), allow_zero=False)
        if not self.latency_min <= self.latency_mean <= self.latency_max:
            raise UsageError(
                "latency_min <= latency_mean <= latency_max must hold, got "
                f"{self.latency_min} / {self.latency_mean} / {self.latency_max}"
            )
        for name in ("loss_probability", "duplicate_probability", "stream_split_probability"):
            value = getattr(self, name)
            if not (_is_number(value) and 0.0 <= value <= 1.0):
                raise UsageError(f"{name} must be a probability in [0, 1], got {value!r}")
        for name in ("stream_chunk_max", "stream_window"):
            value = getattr(self, name)
            if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
                raise UsageError(f"{name} must be an int >= 1 (bytes), got {value!r}")

    def as_dict(self) -> dict[str, float | int]:
        """Every setting by name (what a replay must repeat)."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


class Timing:
    """The config's times in integer nanoseconds, computed once."""

    __slots__ = ("connect_timeout", "latency_max", "latency_min", "latency_spread", "reset_timeout")

    def __init__(self, config: NetworkConfig) -> None:
        self.latency_min = to_ns(config.latency_min)
        self.latency_max = to_ns(config.latency_max)
        self.latency_spread = config.latency_mean - config.latency_min  # seconds: a mean
        self.reset_timeout = to_ns(config.partition_reset_timeout)
        self.connect_timeout = to_ns(config.connect_timeout)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_seconds(name: str, value: object, *, allow_zero: bool) -> None:
    ok = _is_number(value) and math.isfinite(value) and (value >= 0 if allow_zero else value > 0)  # type: ignore[arg-type, operator]
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise UsageError(f"{name} must be a finite number of seconds {bound}, got {value!r}")
