"""The nemesis: a fault profile turned into events in a running world.

Fault model. World faults arrive as one Poisson process whose rate is the
profile's total: the gap to the next is drawn (exponential), then its class
(in proportion to the rates, in the table's order), then its target, each a
labelled draw on the "nemesis" stream, so the trace says what was done to
whom and why. A fault that lasts (a crash's downtime, a partition, a clog, a
disk fault) ends by itself after a drawn time, or when the scenario heals
the world. The nemesis uses only the world's public verbs (see
`_injectors`), on single links, and never puts a link in two faults at
once: a repair ends exactly the cut it belongs to (`_episodes` keeps the
rules).

Effectiveness. A fault that changes nothing (a crash of a host already down,
a partition of links nobody used) says nothing about the system, so each
class counts `injected` and `effective`; what makes one effective is in the
fault-class table (`_classes`):

- crash, bounce, client crash: the node was running (a client: had not yet
  returned);
- partition, clog, latency spike, stream stall: the program's traffic met
  one of its links closed: a datagram dropped or held, a stream's bytes
  stalled, a connect blocked;
- clock jump, clock skew: the node read its wall clock after the step (a
  monotonic clock never jumps: a node that reads only that saw nothing);
  the disk classes: the disk
  injected a fault of the class's kinds (a failed read, write or fsync, a
  corrupted read, a misdirected write); an operation crash: it fired;
- datagram loss and duplication (drawn by the network, per datagram): a
  datagram lost; both copies of a duplicate received.

A fault counts as effective when that first happens, whenever it does: a
fault still in force when the counts are read (a run that failed meanwhile)
counts if it has changed something by then. Each fault is also kept as a
record (`records()`: kind, target, start, end, what it did), the timeline a
failure report tells.
"""

from __future__ import annotations

import asyncio
import math
from typing import TYPE_CHECKING, Any

from seedbed._core import Stream
from seedbed._core.contract import broken, require
from seedbed.faults._classes import WORLD_CLASSES, FaultClass
from seedbed.faults._episodes import LATER, Ledger
from seedbed.faults._hooks import hooks_of
from seedbed.faults._profile import FaultProfile

if TYPE_CHECKING:
    from seedbed.world import Simulation

_OUTCOMES = (None, True, False, LATER)


class Nemesis:
    """Injects a profile's faults into `sim` until `stop()`; counts their effect."""

    def __init__(self, sim: Simulation, profile: FaultProfile, stream: Stream) -> None:
        self.sim = sim
        self.profile = profile
        self.stream = stream
        # The classes that are on, with their rates, in the table's order.
        self._classes: list[tuple[FaultClass, float]] = [
            (fault, getattr(profile, fault.field))
            for fault in WORLD_CLASSES
            if getattr(profile, fault.field) > 0
        ]
        self._ledger = Ledger(sim, profile, stream, [fault.name for fault, _ in self._classes])
        self._task: asyncio.Task[None] | None = None

    @property
    def counts(self) -> dict[str, dict[str, int]]:
        """Per class that is on: faults `injected` and `effective` so far.

        World classes first (table order), then the drawn ones the profile turns
        on: a datagram lost (injected and effective), a datagram duplicated
        (effective when an endpoint received both copies), a failpoint that
        raised. A fault still in force counts as effective if it has changed
        what the program saw by now."""
        self._ledger.settle()
        counts = {kind: dict(count) for kind, count in self._ledger.counts.items()}
        counts.update(self._drawn_counts())
        return counts

    def records(self) -> list[dict[str, Any]]:
        """Every world fault injected so far, in order, as data (`FaultRecord.as_dict`)."""
        self._ledger.settle()
        return [record.as_dict() for record in self._ledger.records]

    def _drawn_counts(self) -> dict[str, dict[str, int]]:
        profile, sim = self.profile, self.sim
        counts: dict[str, dict[str, int]] = {}
        traffic = [sim.traffic(link.src, link.dst) for link in sim.links()]
        if profile.datagram_loss_probability > 0:
            lost = sum(t.lost for t in traffic)
            counts["datagram_loss"] = {"injected": lost, "effective": lost}
        if profile.datagram_duplicate_probability > 0:
            counts["datagram_duplicate"] = {
                "injected": sum(t.duplicated for t in traffic),
                "effective": sum(t.duplicates_seen for t in traffic),
            }
        if profile.failpoint_probability > 0:
            raised = hooks_of(sim.loop).failpoints_raised
            counts["failpoint"] = {"injected": raised, "effective": raised}
        return counts

    # -- the process ----------------------------------------------------------

    def start(self) -> None:
        """Begin injecting (call from inside the run, in the world's context)."""
        if self.profile.total_rate > 0:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="nemesis")

    async def _run(self) -> None:
        total = self.profile.total_rate
        last = len(self._classes) - 1
        while True:
            wait = self.stream.exponential(
                1.0 / total, "nemesis: time to next fault", quiet=math.inf
            )  # replayed choices without this one mean no more faults
            if math.isinf(wait):
                return
            await self.sim.loop.driver.sleep(wait)  # the world's timer: exact
            pick = self.stream.uniform(0.0, total, "nemesis: which fault")
            for index, (fault, rate) in enumerate(self._classes):
                if pick < rate or index == last:
                    self._inject(fault)
                    break
                pick -= rate

    def stop(self) -> None:
        """No new faults; end every fault in progress now (restart, repair, release)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self._ledger.stop_all()

    def resume(self, spared: frozenset[str]) -> None:
        """After `stop`: inject again, on every node but `spared` (a healed core,
        while the others keep failing); its draws go on from the same stream."""
        self._ledger.resume(spared)
        self.start()

    def _inject(self, fault: FaultClass) -> None:
        ledger = self._ledger
        require(not ledger.stopped, "the liveness phase injects nothing", kind=fault.name)
        if fault.inject is None:
            broken("the nemesis injects only world classes", kind=fault.name)
        began, watched = len(ledger.episodes), len(ledger.watched)
        ledger.injecting()
        outcome = fault.inject(ledger)
        if outcome not in _OUTCOMES:
            broken("an injector returns None, True, False or LATER", kind=fault.name)
        if outcome is LATER and not (
            (len(ledger.episodes) == began + 1 and ledger.episodes[-1].kind == fault.name)
            or (len(ledger.watched) == watched + 1 and ledger.watched[-1][0].kind == fault.name)
        ):
            broken("a fault whose effect shows later began one episode or watch", kind=fault.name)
        if outcome is None:
            return  # nothing to do (max_down reached, no free link): not injected
        ledger.count(fault.name, outcome)


def link_stall_counts(sim: Simulation) -> dict[str, int]:
    """The network's stall episodes so far: `injected`, those that began on a
    link carrying traffic; `effective`, those that held some of it."""
    traffic = [sim.traffic(link.src, link.dst) for link in sim.links()]
    return {"injected": sum(t.stall_episodes for t in traffic),
            "effective": sum(t.stalls for t in traffic)}  # fmt: skip
