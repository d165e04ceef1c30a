"""A rolling upgrade through a scenario's fault phase: new code on old disks.

`Scenario(..., upgrades={"n1": new_main, ...})` upgrades those nodes one at
a time, in a drawn order, each at a drawn moment of the fault phase, so the
old and the new version run side by side for a while. An upgrade gives the
node its new main (`Simulation.set_main`), takes it down, stopped cleanly
(its writes reach the disk: `Simulation.stop`) or crashed (power lost:
unsynced writes lost or torn), as drawn, and restarts it after a drawn
downtime on the disk it had. A node already down (the nemesis crashed it)
comes back on the new main at its restart. In one seed in four, one
upgraded node is also rolled back to its old main a while later (old code
on a disk the new code wrote). The liveness phase upgrades, at once, every
node not yet on the new version, so each run ends all new.

Every choice is drawn from the "upgrades" stream (a scenario without
upgrades draws nothing from it, so no existing seed changes), labelled;
each upgrade and rollback is counted (`upgrade`: injected, effective once
the node started on the new main), kept as a fault record for the failure
report's story, and traced (`upgrade` events for `seedbed view`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from seedbed._core import Stream
from seedbed._core.contract import require
from seedbed.faults._record import FaultRecord

if TYPE_CHECKING:
    from seedbed.world import Simulation

ROLLBACK_SHARE = 0.25  # of seeds that also roll one upgraded node back
DOWN_MIN, DOWN_MAX = 0.05, 0.5  # seconds a node is down for its upgrade
KIND = "upgrade"


class RollingUpgrade:
    """Upgrades `mains`' nodes through the fault phase (see the module docstring)."""

    def __init__(
        self, sim: Simulation, mains: dict[str, Callable[[], Any]], stream: Stream, duration: float
    ) -> None:
        self.sim, self.stream, self.duration = sim, stream, duration
        order = [name for name in sim.nodes.names() if name in mains]
        require(len(order) == len(mains), "every upgraded node is in the world", nodes=order)
        self.new = {name: mains[name] for name in order}
        self.old: dict[str, Callable[[], Any]] = {}
        self.on_new: set[str] = set()  # nodes whose main is the new one now
        self._records: list[FaultRecord] = []
        self._started_as: list[tuple[FaultRecord, str, int]] = []  # record, node, incarnation
        self._task: asyncio.Task[None] | None = None

    @property
    def counts(self) -> dict[str, int]:
        """Upgrades and rollbacks made, and those whose node started on the main given."""
        records = self.records
        return {"injected": len(records), "effective": sum(r.effective for r in records)}

    @property
    def records(self) -> list[FaultRecord]:
        """Each upgrade and rollback, in order, with what it did so far."""
        self._settle()
        return list(self._records)

    def start(self) -> None:
        """Begin the rolling upgrade (from inside the run, in the world's context)."""
        self._task = asyncio.get_running_loop().create_task(self._roll(), name="upgrades")

    async def _roll(self) -> None:
        names = list(self.new)
        order = [names[i] for i in self.stream.permutation(len(names), "upgrades: node order")]
        back = self.stream.chance(ROLLBACK_SHARE, "upgrades: this seed rolls a node back")
        rolled = self.stream.choice(order, "upgrades: which node rolls back") if back else None
        gap = self.duration / (len(order) + 1)
        for name in order:
            await self.sim.loop.driver.sleep(
                self.stream.uniform(0.0, 2 * gap, f"upgrades: before {name}'s")
            )
            await self._swap(name, self.new[name], "upgrade")
            if name == rolled:
                await self.sim.loop.driver.sleep(
                    self.stream.uniform(0.0, gap, f"upgrades: before {name}'s rollback")
                )
                await self._swap(name, self.old[name], "rollback")

    async def _swap(self, name: str, main: Callable[[], Any], kind: str) -> None:
        """Give `name` `main` and bring it down and up again (if it was up)."""
        down = self._take_down(name, main, kind, wait=True)
        if down:
            await self.sim.loop.driver.sleep(
                self.stream.uniform(DOWN_MIN, DOWN_MAX, f"upgrades: {name} down for")
            )
            self.sim.restart(name)

    def _take_down(self, name: str, main: Callable[[], Any], kind: str, *, wait: bool) -> bool:
        sim = self.sim
        previous = sim.set_main(name, main)
        self.old.setdefault(name, previous)
        if kind == "upgrade":
            self.on_new.add(name)
        else:
            self.on_new.discard(name)
        node = sim.nodes.get(name)
        up = node.up
        how = "down already"
        if up:
            crash = self.stream.chance(0.5, f"upgrades: {name} crashed, not stopped")
            how = "crashed" if crash else "stopped"
            if crash:
                sim.crash(name)
            else:
                sim.stop(name)
        version = "new" if kind == "upgrade" else "old"
        sim.loop.driver.emit("upgrade", name, version, how)
        note = f"to the {version} version, {how}"
        record = FaultRecord(kind, name, (name,), sim.loop.time(), lasting=wait and up, note=note)
        if not (wait and up):
            record.end = record.start
        self._records.append(record)
        self._started_as.append((record, name, node.incarnation))
        return up and wait

    def finish(self) -> None:
        """The liveness phase: no more waiting; every node not on the new main gets
        it now (a node down comes back on it when the phase restarts it)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        for name in self.new:
            if name not in self.on_new:
                self._take_down(name, self.new[name], "upgrade", wait=False)
        for record in self._records:
            if record.end is None:
                record.end = self.sim.loop.time()

    def _settle(self) -> None:
        """An upgrade is effective once its node started again on the main it gave."""
        for record, name, incarnation in self._started_as:
            node = self.sim.nodes.get(name)
            if not record.effective and node.incarnation > incarnation:
                record.effective = True
                record.did = {"restarted on that version": 1}
                if record.end is None:
                    record.end = self.sim.loop.time()
