"""How the simulated network misbehaves: one validated, frozen options object.

Settings follow TigerBeetle's naming (qualifiers last: `latency_min`,
`loss_probability`). Times are user-facing seconds here and integer
nanoseconds everywhere inside the network.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from seedbed._core import to_ns
from seedbed._core.validate import (
    check_at_least,
    check_choice,
    check_positive_int,
    check_probability,
    check_rate,
    check_seconds,
    shown,
)
from seedbed.errors import UsageError

_OWNER = "NetworkConfig"
LATENCY_MODELS = ("exponential", "tail")


@dataclass(frozen=True)
class NetworkConfig:
    """The fault model of a simulated network. Validated on construction.

    - `latency_min`/`latency_mean`/`latency_max`: one-way delay per hop,
      drawn per delivery as `min + exponential(mean - min)`, capped at `max`.
    - `latency_model`: "tail" (the default): real networks' heavy tail, or
      "exponential": the line above, nothing more (light-tailed: timing
      rarely strays far past the mean). Under "tail" each link (each direction)
      draws once a scale in [0.5, 2) for its `mean - min` (asymmetric
      routes and loads); each hop is then `min + scale * exponential(mean -
      min)` capped at `max` as above, except that with
      `latency_tail_probability` it is a spike instead: log-uniform in
      [`latency_tail_min`, `latency_tail_max`) (a retransmission, a queue
      behind a burst, a stalled switch). A stream's bytes still arrive in
      order: a segment never overtakes the one ahead of it (head-of-line
      blocking), while datagrams may overtake each other. One-way hop
      quantiles in milliseconds (100,000 hops over 20 seeds):

      | model                              | p50   | p90  | p99 | p99.9 | max   |
      |------------------------------------|-------|------|-----|-------|-------|
      | "tail" (the default)               | 0.924 | 2.12 | 5   | 198   | 249   |
      | "exponential"                      | 0.847 | 1.65 | 2.81| 4.06  | 5     |
      | swarm's LAN, 3% spikes             | 0.181 | 0.591| 111 | 232   | 250   |
      | swarm's WAN, 3% spikes             | 36.3  | 118  | 597 | 953   | 1000  |

      Spikes hit hops one at a time; real stalls are correlated (a queue
      behind a burst, a paused VM, a retransmission timeout holds every
      packet on the link). So under "tail" each link (each direction) also
      has stall episodes, `stall_per_second` of them per second on average
      (a Poisson process from the run's start): for a log-uniform
      [`stall_min`, `stall_max`) seconds the link holds everything that
      would arrive, datagrams and stream bytes alike, then releases it in
      order. A heartbeat every 10 ms then goes silent for 20-250 ms now and
      then, as on a real network. Drawn from the "net stalls" stream, lazily
      as traffic passes (an idle link draws nothing); counted per link in
      `Simulation.traffic` (`stalls`, `stall_held`). A scenario's liveness
      phase ends them with the other faults.
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
    - `link_latency`: per-link latencies, `(min, mean, max)` seconds, keyed by
      a node name (every link to or from it: a node on a slow line) or by a
      pair `(a, b)` (both directions between them: a WAN hop). A pair's entry
      wins; with entries for both nodes, each of min, mean and max is the
      larger of the two (the slower end sets the pace). Links named in no
      entry use `latency_min`/`latency_mean`/`latency_max`.
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
    link_latency: Mapping[str | tuple[str, str], tuple[float, float, float]] = field(
        default_factory=dict
    )
    latency_model: str = "tail"
    latency_tail_probability: float = 0.01
    latency_tail_min: float = 0.02
    latency_tail_max: float = 0.25
    stall_per_second: float = 0.1
    stall_min: float = 0.02
    stall_max: float = 0.25

    def __post_init__(self) -> None:
        _check_link_latency(self.link_latency)
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
        check_choice(_OWNER, "latency_model", self.latency_model, LATENCY_MODELS)
        check_probability(_OWNER, "latency_tail_probability", self.latency_tail_probability)
        for name in ("latency_tail_min", "latency_tail_max"):
            check_seconds(_OWNER, name, getattr(self, name), allow_zero=False)
        check_at_least(_OWNER, "latency_tail_max", self.latency_tail_max, "latency_tail_min",
                       self.latency_tail_min)  # fmt: skip
        check_rate(_OWNER, "stall_per_second", self.stall_per_second)
        for name in ("stall_min", "stall_max"):
            check_seconds(_OWNER, name, getattr(self, name), allow_zero=False)
        check_at_least(_OWNER, "stall_max", self.stall_max, "stall_min", self.stall_min)

    def as_dict(self) -> dict[str, Any]:
        """Every setting by name (what a replay must repeat), JSON-able: a pair
        key of `link_latency` is written "a<->b"."""
        settings = {item.name: getattr(self, item.name) for item in fields(self)}
        settings["link_latency"] = {
            key if isinstance(key, str) else "<->".join(key): list(value)
            for key, value in self.link_latency.items()
        }
        return settings

    def latency_of(self, src: str, dst: str) -> tuple[float, float, float]:
        """The (min, mean, max) latency of the link src -> dst."""
        table = self.link_latency
        pair = table.get((src, dst)) or table.get((dst, src))
        if pair is not None:
            return pair
        ends = [table[name] for name in (src, dst) if name in table]
        if not ends:
            return (self.latency_min, self.latency_mean, self.latency_max)
        return (
            max(end[0] for end in ends),
            max(end[1] for end in ends),
            max(end[2] for end in ends),
        )


def _check_link_latency(table: object) -> None:
    """Keys are node names or pairs of them; values (min, mean, max) in order."""
    if not isinstance(table, Mapping):
        raise UsageError(
            f"{_OWNER}.link_latency must be a dict of node or (node, node) to "
            f"(min, mean, max) seconds, got {shown(table)}"
        )
    for key, value in table.items():
        pair = isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, str) for k in key)
        if not (isinstance(key, str) or pair):
            raise UsageError(
                f"{_OWNER}.link_latency keys must be node names or (node, node) pairs, "
                f"got {shown(key)}"
            )
        if not (isinstance(value, tuple | list) and len(value) == 3):
            raise UsageError(
                f"{_OWNER}.link_latency[{shown(key)}] must be (min, mean, max) seconds, "
                f"got {shown(value)}"
            )
        owner = f"{_OWNER}.link_latency[{shown(key)}]"
        for name, seconds in zip(("min", "mean", "max"), value, strict=True):
            check_seconds(owner, name, seconds, allow_zero=True)
        check_at_least(owner, "mean", value[1], "min", value[0])
        check_at_least(owner, "max", value[2], "mean", value[1])


class Timing:
    """The config's times in integer nanoseconds, computed once."""

    __slots__ = (
        "connect_timeout", "latency_max", "latency_min", "latency_spread", "reset_timeout",
        "stall_high", "stall_log_low", "stall_log_span", "stall_low", "stall_mean_gap", "tail",
        "tail_high", "tail_low", "tail_probability",
    )  # fmt: skip

    def __init__(
        self, config: NetworkConfig, latency: tuple[float, float, float] | None = None
    ) -> None:
        low, mean, high = latency or (config.latency_min, config.latency_mean, config.latency_max)
        self.latency_min = to_ns(low)
        self.latency_max = to_ns(high)
        self.latency_spread = mean - low  # seconds: a mean
        self.reset_timeout = to_ns(config.partition_reset_timeout)
        self.connect_timeout = to_ns(config.connect_timeout)
        self.tail = config.latency_model == "tail"
        self.tail_probability = config.latency_tail_probability
        self.tail_low = config.latency_tail_min  # seconds
        self.tail_high = config.latency_tail_max
        # Stall episodes (see `NetworkConfig`): 0 mean gap means none.
        stalls = self.tail and config.stall_per_second > 0
        self.stall_mean_gap = 1.0 / config.stall_per_second if stalls else 0.0  # seconds
        self.stall_low = config.stall_min
        self.stall_high = config.stall_max
        # An episode's length is log-uniform: these logs, taken once, not per episode.
        self.stall_log_low = math.log(self.stall_low)
        self.stall_log_span = math.log(self.stall_high) - self.stall_log_low
