"""How the simulated network misbehaves: one validated, frozen options object.

Settings follow TigerBeetle's naming (qualifiers last: `latency_min`,
`loss_probability`). Times are user-facing seconds here and integer
nanoseconds everywhere inside the network.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from seedbed._core import to_ns
from seedbed._core.validate import (
    check_at_least,
    check_positive_int,
    check_probability,
    check_seconds,
)

_OWNER = "NetworkConfig"


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
            check_seconds(_OWNER, name, getattr(self, name), allow_zero=True)
        for name in ("partition_reset_timeout", "connect_timeout"):
            check_seconds(_OWNER, name, getattr(self, name), allow_zero=False)
        check_at_least(_OWNER, "latency_mean", self.latency_mean, "latency_min", self.latency_min)
        check_at_least(_OWNER, "latency_max", self.latency_max, "latency_mean", self.latency_mean)
        for name in ("loss_probability", "duplicate_probability", "stream_split_probability"):
            check_probability(_OWNER, name, getattr(self, name))
        for name in ("stream_chunk_max", "stream_window"):
            check_positive_int(_OWNER, name, getattr(self, name))

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
