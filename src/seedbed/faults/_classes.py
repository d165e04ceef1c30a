"""The fault classes: one table, one entry per class.

Each entry says everything about a class: its name (the key of the
nemesis's `injected`/`effective` counts and of its swarm stream), its
`FaultProfile` field, the range swarm draws it from, its injector, and what
makes one of its faults effective. World classes (a rate per virtual second)
have an injector the nemesis calls; in-code and per-datagram classes (a
probability) have none: the network or `failpoint` draws them where they act.

Adding a class: a `FaultProfile` field, an entry here, and (for a world
class) an injector in `_injectors`. Swarm draws each class from its own
stream, named after the class, so the new class changes no existing seed's
profile; a world class does change what the nemesis does in seeds that
turn it on, as any new fault must. The table's order is the nemesis's order
of classes (part of what a seed means): new classes go at the end.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from seedbed._core.contract import require
from seedbed.faults import _injectors as inject
from seedbed.faults._injectors import Injector

RATE_SUFFIX = "_per_second"
PROBABILITY_SUFFIX = "_probability"


@dataclass(frozen=True)
class FaultClass:
    """One fault class. `swarm` is (low, high), drawn log-uniformly when on."""

    name: str
    field: str
    swarm: tuple[float, float]
    inject: Injector | None  # None: drawn where it acts (network, failpoint)
    effective: str  # what makes one effective, for the docs and reports

    @property
    def is_rate(self) -> bool:
        """Events per virtual second (else a probability per event)."""
        return self.field.endswith(RATE_SUFFIX)

    @property
    def is_world(self) -> bool:
        """The nemesis injects it (else it is drawn where it acts)."""
        return self.inject is not None

    def __post_init__(self) -> None:
        suffix = RATE_SUFFIX if self.is_rate else PROBABILITY_SUFFIX
        require(self.name.isidentifier() and self.field == self.name + suffix,
                "a fault class's field is its name and its kind's suffix",
                name=self.name, field=self.field)  # fmt: skip
        require(self.is_rate or not self.is_world, "a world class has a rate",
                name=self.name)  # fmt: skip
        low, high = self.swarm
        top = math.inf if self.is_rate else 1.0
        require(0 < low < high <= top and math.isfinite(high),
                "a fault class's swarm range is 0 < low < high", name=self.name,
                swarm=self.swarm)  # fmt: skip
        # Drawn values are rounded to 4 significant digits (see `_profile`):
        # with ends that round to themselves, a draw cannot round out of range.
        require(all(float(f"{end:.4g}") == end for end in self.swarm),
                "a fault class's swarm range has ends of 4 significant digits",
                name=self.name, swarm=self.swarm)  # fmt: skip


def _rate(name: str, low: float, high: float, injector: Injector, effective: str) -> FaultClass:
    return FaultClass(name, name + RATE_SUFFIX, (low, high), injector, effective)


def _probability(name: str, low: float, high: float, effective: str) -> FaultClass:
    return FaultClass(name, name + PROBABILITY_SUFFIX, (low, high), None, effective)


def _drawn_rate(name: str, low: float, high: float, effective: str) -> FaultClass:
    """A rate the network draws where it acts (per link), not the nemesis."""
    return FaultClass(name, name + RATE_SUFFIX, (low, high), None, effective)


# What makes one fault of each class effective: it changed what the program
# saw, counted when that first happens (`_episodes`), documented per class.
_TRAFFIC = (
    "the program's traffic met one of its links closed: a datagram dropped or held, "
    "a stream's bytes stalled, a connect blocked"
)
_CLOCK = "the node read its wall clock after it (a monotonic clock never steps)"

FAULT_CLASSES: tuple[FaultClass, ...] = (
    _rate("crash", 0.02, 0.3, inject.crash, "the host was running"),
    _rate("bounce", 0.02, 0.3, inject.bounce, "the host was running"),
    _rate("partition", 0.02, 0.5, inject.partition, _TRAFFIC),
    _rate("clog", 0.02, 0.5, inject.clog, _TRAFFIC),
    _rate("latency_spike", 0.05, 1.0, inject.latency_spike, _TRAFFIC),
    _rate("stream_stall", 0.05, 1.0, inject.stream_stall, _TRAFFIC),
    _rate("clock_jump", 0.02, 0.3, inject.clock_jump, _CLOCK),
    _rate("disk_fault", 0.02, 0.3, inject.disk_fault, "the disk failed a read, write or fsync"),
    _rate("client_crash", 0.01, 0.1, inject.client_crash, "the client had not returned yet"),
    _rate("clock_skew", 0.02, 0.3, inject.clock_skew, _CLOCK),
    _rate("disk_corruption", 0.02, 0.3, inject.disk_corruption, "a read came back damaged"),
    _rate("misdirected_write", 0.02, 0.3, inject.misdirected_write, "a write went astray"),
    _rate("fsync_failure", 0.02, 0.3, inject.fsync_failure, "an fsync failed"),
    _rate("operation_crash", 0.02, 0.3, inject.operation_crash, "it crashed at the operation"),
    _rate("pause", 0.02, 0.3, inject.pause, "the node stayed up through it"),
    _probability("datagram_loss", 0.001, 0.1, "always: each datagram lost is one fault"),
    _probability("datagram_duplicate", 0.001, 0.05, "an endpoint received both copies"),
    _probability("failpoint", 0.001, 0.05, "always: each `failpoint()` that raised is one"),
    _drawn_rate("link_stall", 0.05, 0.5, "the episode held some of the program's traffic"),
    _rate("node_stall", 0.05, 2.0, inject.node_stall, "the node stayed up through it"),
)


def check_table(classes: Sequence[FaultClass]) -> None:
    """Names and fields are unique, so counts and swarm streams never share a name."""
    names = [fault.name for fault in classes]
    require(len(set(names)) == len(names), "fault class names are unique", names=names)
    fields = [fault.field for fault in classes]
    require(len(set(fields)) == len(fields), "fault class fields are unique", fields=fields)


check_table(FAULT_CLASSES)
WORLD_CLASSES = tuple(fault for fault in FAULT_CLASSES if fault.is_world)
