"""`FaultProfile`: what pressure a scenario applies, and swarm's way of drawing one.

Rates are per virtual second across the whole world: `crash_per_second=0.1`
means a crash every ten seconds on average, somewhere. The nemesis turns a
profile into events (see `_nemesis`); the probabilities act per datagram or
per `failpoint` call. `FaultProfile()` is no faults at all.

Swarm testing (Groce et al., 2012): one fixed mix of every fault tends to
mask the bugs a single fault class would expose (constant crashes never let
a partition bite), so `faults="swarm"` draws a profile per seed: each fault
class is on with probability one half, at a rate drawn log-uniformly from
its range (the fault-class table, `_classes`). Twenty seeds give twenty
different mixes. Each class draws from its own stream, so a class added to
the table leaves every existing seed's profile as it was.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from seedbed._core import Entropy, Stream
from seedbed._core.contract import require
from seedbed._core.floats import ordered_sum
from seedbed._core.validate import check_bool, check_positive_int, check_probability, check_seconds
from seedbed.errors import UsageError
from seedbed.faults._classes import FAULT_CLASSES, PROBABILITY_SUFFIX, RATE_SUFFIX, FaultClass

_OWNER = "FaultProfile"

# The profile's fields, in the table's order (the nemesis's order of classes).
RATE_FIELDS = tuple(fault.field for fault in FAULT_CLASSES if fault.is_world)
DRAWN_RATE_FIELDS = tuple(
    fault.field for fault in FAULT_CLASSES if fault.is_rate and not fault.is_world
)
PROBABILITY_FIELDS = tuple(fault.field for fault in FAULT_CLASSES if not fault.is_rate)


@dataclass(frozen=True)
class FaultProfile:
    """Rates of world faults and odds of in-code ones. Validated on construction.

    - `crash_per_second`: a running host crashes and stays down for a drawn
      downtime (exponential, mean `downtime_mean`), then restarts.
    - `bounce_per_second`: a host crashes and restarts at once.
    - `partition_per_second`: one of three cuts, drawn: one node isolated,
      random halves, or a one-way cut of a pair; repaired after a drawn time
      (mean `fault_duration_mean`).
    - `clog_per_second`: a pair's links hold their traffic (queued, in order)
      for a drawn time, then deliver it.
    - `latency_spike_per_second`: every link of one node holds its traffic
      for a short drawn time (up to half a second): a node turns slow.
    - `stream_stall_per_second`: one direction of one pair stalls as TCP does
      when packets are lost: the bytes still arrive, in order, after a
      retransmission delay (0.2 s doubled up to five times).
    - `clock_jump_per_second`: a node's wall clock jumps forward or back by up
      to ten seconds (its monotonic clock never does).
    - `disk_fault_per_second`: for a drawn time one node's disk fails reads,
      writes and fsyncs one time in five, on top of its `DiskConfig`.
    - `client_crash_per_second`: a client crashes and restarts after a
      drawn downtime, running its main again from the start.
    - `clock_skew_per_second`: a node's wall clock takes a new rate error
      (up to 200 ppm either way, from then on, reading on continuously) and
      a step of up to 250 ms either way.
    - `disk_corruption_per_second`, `misdirected_write_per_second`,
      `fsync_failure_per_second`: for a drawn time one node's disk returns
      one read in two with a bit flipped, lands one write in five at
      another sector of its file, or fails one fsync in two (losing the
      file's unsynced writes), on top of its `DiskConfig` (see there).
    - `operation_crash_per_second`: a host crashes just before or just
      after its n-th (1-5) fsync, write, rename, send, receive or connect
      from now, all drawn; armed for a drawn time, it restarts when that ends.
    - `pause_per_second`: a node's code stops for up to two seconds while
      the others run (a GC pause, a stopped VM); its timers then fire late,
      in deadline order. Counted against `max_down` while it lasts.
    - `node_stall_per_second`: a node's code stops for a short, drawn
      5-300 ms (log-uniform: a collection, a scheduler hiccup) while the
      others run, its timers then firing late; not counted against
      `max_down` (it is slow, not down).
    - `link_stall_per_second`: more stall episodes per link and second, on
      top of the network's own (`NetworkConfig.stall_per_second`): a link
      holds all it carries for 20-250 ms, then releases it in order.
    - `datagram_loss_probability`, `datagram_duplicate_probability`: per
      datagram, combined with the `NetworkConfig`'s.
    - `failpoint_probability`: the chance that `await failpoint(why)` raises.
    - `buggify`: whether `buggify(why)` call sites may fire in this run.
    - `max_down`: the most nodes down (crashed, or cut off by isolation) at
      once; None means a minority (fewer than half the nodes).
    """

    crash_per_second: float = 0.0
    bounce_per_second: float = 0.0
    partition_per_second: float = 0.0
    clog_per_second: float = 0.0
    latency_spike_per_second: float = 0.0
    stream_stall_per_second: float = 0.0
    clock_jump_per_second: float = 0.0
    disk_fault_per_second: float = 0.0
    client_crash_per_second: float = 0.0
    clock_skew_per_second: float = 0.0
    disk_corruption_per_second: float = 0.0
    misdirected_write_per_second: float = 0.0
    fsync_failure_per_second: float = 0.0
    operation_crash_per_second: float = 0.0
    pause_per_second: float = 0.0
    datagram_loss_probability: float = 0.0
    datagram_duplicate_probability: float = 0.0
    failpoint_probability: float = 0.0
    link_stall_per_second: float = 0.0
    node_stall_per_second: float = 0.0
    buggify: bool = False
    max_down: int | None = None
    downtime_mean: float = 2.0
    fault_duration_mean: float = 2.0

    def __post_init__(self) -> None:
        for name in RATE_FIELDS + DRAWN_RATE_FIELDS:
            _check_rate(name, getattr(self, name))
        for name in PROBABILITY_FIELDS:
            check_probability(_OWNER, name, getattr(self, name))
        check_bool(_OWNER, "buggify", self.buggify)
        if self.max_down is not None:
            check_positive_int(_OWNER, "max_down", self.max_down)
        for name in ("downtime_mean", "fault_duration_mean"):
            check_seconds(_OWNER, name, getattr(self, name), allow_zero=False)

    @property
    def total_rate(self) -> float:
        """World fault events per virtual second, all classes together.

        Added left to right (`ordered_sum`), not with `sum()`, whose result
        for floats changed in CPython 3.12: the nemesis draws with it.
        """
        return ordered_sum(float(getattr(self, name)) for name in RATE_FIELDS)

    def rates(self) -> list[tuple[str, float]]:
        """The fault classes that are on, with their rates, in a fixed order."""
        return [(name, getattr(self, name)) for name in RATE_FIELDS if getattr(self, name) > 0]

    def as_dict(self) -> dict[str, Any]:
        """Every setting by name: JSON-able, for trace headers and failure reports."""
        return asdict(self)

    def traced(self) -> dict[str, Any]:
        """The settings as a scenario's trace event records them: `as_dict()` without
        the classes added since the trace first held a profile while they are off,
        so adding a class moves no existing run's trace hash."""
        return {
            key: value
            for key, value in asdict(self).items()
            if not (key in ADDED_FIELDS and value == 0)
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FaultProfile:
        known = {field.name for field in fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in known})


# Fields of the classes added after profiles entered traces (issue 24): a run
# that leaves them off records the profile it recorded before they existed.
ADDED_FIELDS = frozenset(
    (
        "clock_skew_per_second",
        "disk_corruption_per_second",
        "misdirected_write_per_second",
        "fsync_failure_per_second",
        "operation_crash_per_second",
        "pause_per_second",
        "node_stall_per_second",
        "link_stall_per_second",
    )
)


def _check_rate(name: str, value: object) -> None:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not (number and math.isfinite(value) and value >= 0):  # type: ignore[arg-type,operator]
        raise UsageError(
            f"{_OWNER}.{name} must be a finite number of events per second >= 0, got {value!r}"
        )


def draw_swarm(entropy: Entropy) -> FaultProfile:
    """One seed's profile (`entropy` is the seed's): each class on with probability one half.

    Each class draws from its own stream, "swarm fault <name>", and buggify
    from "swarm buggify", so adding a class to the table changes no other
    class's draws: an existing seed keeps its profile. Every draw is
    labelled ("swarm: crash_per_second on"), for choice recording.
    """
    settings: dict[str, Any] = swarm_settings(entropy, FAULT_CLASSES)
    settings["buggify"] = entropy.stream("swarm buggify").chance(0.5, "swarm: buggify on")
    return FaultProfile(**settings)


def swarm_settings(entropy: Entropy, classes: Sequence[FaultClass]) -> dict[str, float]:
    """The drawn setting of each class of `classes` that is on, by field, in table order."""
    settings = {}
    for fault in classes:
        stream = entropy.stream(f"swarm fault {fault.name}")
        if stream.chance(0.5, f"swarm: {fault.field} on"):
            settings[fault.field] = _log_uniform(stream, fault, f"swarm: {fault.field}")
    return settings


def _log_uniform(stream: Stream, fault: FaultClass, reason: str) -> float:
    low, high = fault.swarm
    value = math.exp(stream.uniform(math.log(low), math.log(high), reason))
    # Four significant digits: short in reports, and a last-bit difference of
    # the C library's exp/log (the same on one platform for every CPython)
    # could show only at a rounding boundary; the rounding itself is
    # CPython's correctly rounded formatting, the same everywhere.
    shown = float(f"{value:.4g}")
    require(low <= shown <= high, "a drawn swarm setting lies in its class's range",
            fault=fault.name, value=shown, swarm=fault.swarm)  # fmt: skip
    return shown


def _check_fields() -> None:
    """The table and the dataclass name the same settings: a class without a
    field, or a rate field without a class, is a seedbed bug."""
    suffixes = (RATE_SUFFIX, PROBABILITY_SUFFIX)
    declared = {f.name for f in fields(FaultProfile) if f.name.endswith(suffixes)}
    require(declared == {fault.field for fault in FAULT_CLASSES},
            "every FaultProfile rate and probability is one fault class",
            unmatched=sorted(declared ^ {fault.field for fault in FAULT_CLASSES}))  # fmt: skip


_check_fields()
