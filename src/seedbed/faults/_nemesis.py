"""The nemesis: a fault profile turned into events in a running world.

Fault model. World faults arrive as one Poisson process whose rate is the
profile's total: the gap to the next is drawn (exponential), then its class
(in proportion to the rates), then its target, each a labelled draw on the
"nemesis" stream, so the trace says what was done to whom and why. A fault
that lasts (a crash's downtime, a partition, a clog, a disk fault) ends by
itself after a drawn time, or when the scenario heals the world. The
nemesis uses only the world's public verbs (crash, restart, partition,
repair, hold, release) on single links, and never puts a link in two faults
at once: a repair ends exactly the cut it belongs to.

Effectiveness. A fault that changes nothing (a crash of a host already down,
a partition of links nobody used) says nothing about the system, so each
class counts `injected` and `effective`:

- crash, bounce, client crash: the node was running (a client: had not yet
  returned);
- partition, clog, latency spike, stream stall: some traffic was caught at a
  cut or held link when it was repaired (a stalled stream, a held datagram;
  datagrams dropped by a partition are not counted);
- clock jump: the node was running; disk fault: the disk injected an error
  while the fault lasted.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from seedbed._core import Stream
from seedbed.faults._profile import FaultProfile

if TYPE_CHECKING:
    from seedbed.world import Simulation

_STALL_FIRST = 0.2  # seconds: TCP's first retransmission timeout, doubled per loss
_SPIKE_MAX = 0.5
_JUMP_MAX = 10.0
_DISK_FAULT_PROBABILITY = 0.2

Link = tuple[str, str]
# What an injector returns: None (nothing to do: not injected), True or False
# (injected; effective or not), or LATER (injected; its end will tell).
LATER = "later"
Outcome = bool | str | None


class _Episode:
    """A fault in progress: its links (or node) and how to end it."""

    __slots__ = ("end", "handle", "kind", "links")

    def __init__(self, kind: str, links: list[Link], end: Callable[[], bool]) -> None:
        self.kind = kind
        self.links = links
        self.end = end  # undoes the fault; True if it was effective
        self.handle: asyncio.TimerHandle | None = None


class Nemesis:
    """Injects a profile's faults into `sim` until `stop()`; counts their effect."""

    def __init__(self, sim: Simulation, profile: FaultProfile, stream: Stream) -> None:
        self.sim = sim
        self.profile = profile
        self.stream = stream
        self.counts: dict[str, dict[str, int]] = {
            name.removesuffix("_per_second"): {"injected": 0, "effective": 0}
            for name, _ in profile.rates()
        }
        self._episodes: list[_Episode] = []  # in progress, oldest first
        self._faulted: dict[Link, _Episode] = {}  # directed link -> its fault (lookup only)
        self._down: list[str] = []  # nodes the nemesis crashed or isolated, in order
        self._task: asyncio.Task[None] | None = None
        self._stopped = False

    # -- the process ----------------------------------------------------------

    def start(self) -> None:
        """Begin injecting (call from inside the run, in the world's context)."""
        if self.profile.total_rate > 0:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="nemesis")

    async def _run(self) -> None:
        rates = self.profile.rates()
        total = self.profile.total_rate
        while True:
            wait = self.stream.exponential(
                1.0 / total, "nemesis: time to next fault", quiet=math.inf
            )  # replayed choices without this one mean no more faults
            if math.isinf(wait):
                return
            await asyncio.sleep(wait)
            pick = self.stream.uniform(0.0, total, "nemesis: which fault")
            for name, rate in rates:
                if pick < rate or name == rates[-1][0]:
                    self._inject(name.removesuffix("_per_second"))
                    break
                pick -= rate

    def stop(self) -> None:
        """No new faults; end every fault in progress now (restart, repair, release)."""
        self._stopped = True
        if self._task is not None:
            self._task.cancel()
        for episode in list(self._episodes):
            self._finish(episode)

    def _inject(self, kind: str) -> None:
        injectors: dict[str, Callable[[], Outcome]] = {
            "crash": lambda: self._crash(self._hosts(), "crash", self.profile.downtime_mean),
            "bounce": self._bounce,
            "client_crash": lambda: self._crash(
                self._clients(), "client_crash", self.profile.downtime_mean
            ),
            "partition": self._partition,
            "clog": self._clog,
            "latency_spike": self._latency_spike,
            "stream_stall": self._stream_stall,
            "clock_jump": self._clock_jump,
            "disk_fault": self._disk_fault,
        }
        outcome = injectors[kind]()
        if outcome is None:
            return  # nothing to do (max_down reached, no free link): not injected
        self.counts[kind]["injected"] += 1
        if outcome is True:
            self.counts[kind]["effective"] += 1

    # -- nodes ----------------------------------------------------------------

    def _hosts(self) -> list[str]:
        return [node.name for node in self.sim.nodes.all() if node.kind == "host"]

    def _clients(self) -> list[str]:
        return [node.name for node in self.sim.nodes.all() if node.kind == "client"]

    def _max_down(self) -> int:
        if self.profile.max_down is not None:
            return self.profile.max_down
        return (len(self.sim.nodes.all()) - 1) // 2

    def _running(self, name: str) -> bool:
        node = self.sim.nodes.get(name)
        return node.up and not (node.kind == "client" and node.result.done())

    def _crash(self, names: list[str], kind: str, downtime_mean: float) -> Outcome:
        if not names or (kind == "crash" and len(self._down) >= self._max_down()):
            return None
        name = self.stream.choice(names, f"nemesis: {kind} which node")
        if name in self._down or not self._running(name):
            return False
        self.sim.crash(name)
        self._down.append(name)

        def end() -> bool:
            self._down.remove(name)
            self.sim.restart(name)
            return False  # counted when it hit a running node

        delay = self.stream.exponential(downtime_mean, f"nemesis: {name} downtime")
        self._begin(_Episode(kind, [], end), delay)
        return True

    def _bounce(self) -> Outcome:
        hosts = self._hosts()
        if not hosts:
            return None
        name = self.stream.choice(hosts, "nemesis: bounce which node")
        if name in self._down or not self._running(name):
            return False
        self.sim.bounce(name)
        return True

    def _clock_jump(self) -> Outcome:
        names = self.sim.nodes.names()
        if not names:
            return None
        name = self.stream.choice(names, "nemesis: clock jump which node")
        seconds = self.stream.uniform(-_JUMP_MAX, _JUMP_MAX, f"nemesis: clock jump {name}")
        node = self.sim.nodes.get(name)
        if node.ref is None or not node.up:
            return False
        node.ref.wall_offset_ns += int(seconds * 1e9)
        self.sim.loop.trace.emit("nemesis", "clock_jump", name, int(seconds * 1e9))
        return True

    def _disk_fault(self) -> Outcome:
        names = self.sim.nodes.names()
        if not names:
            return None
        name = self.stream.choice(names, "nemesis: disk fault which node")
        disk = self.sim.nodes.get(name).disk
        if disk is None or (name, name) in self._faulted:
            return False
        base = disk.config
        before = sum(disk.fault_counts.values())
        disk.config = dataclasses.replace(
            base,
            read_error_probability=max(base.read_error_probability, _DISK_FAULT_PROBABILITY),
            write_error_probability=max(base.write_error_probability, _DISK_FAULT_PROBABILITY),
            fsync_error_probability=max(base.fsync_error_probability, _DISK_FAULT_PROBABILITY),
        )

        def end() -> bool:
            disk.config = base
            return bool(sum(disk.fault_counts.values()) > before)

        delay = self.stream.exponential(self.profile.fault_duration_mean, f"nemesis: {name} disk")
        episode = self._faulted[(name, name)] = _Episode("disk_fault", [(name, name)], end)
        self._begin(episode, delay)
        return LATER

    # -- links ----------------------------------------------------------------

    def _partition(self) -> Outcome:
        names = self.sim.nodes.names()
        if len(names) < 2:
            return None
        mode = self.stream.below(3, "nemesis: partition mode (isolate, halves, one-way)")
        if mode == 0:
            if len(self._down) >= self._max_down():
                return None
            node = self.stream.choice(names, "nemesis: isolate which node")
            links = [(a, b) for other in names if other != node for a, b in
                     ((node, other), (other, node))]  # fmt: skip
            isolated = [node]
        elif mode == 1:
            order = self.stream.permutation(len(names), "nemesis: random halves")
            first = {names[i] for i in order[: len(names) // 2]}
            links = [(a, b) for a in names for b in names if (a in first) != (b in first)]
            isolated = []
        else:
            pair = self.stream.permutation(len(names), "nemesis: one-way cut of a pair")[:2]
            links = [(names[pair[0]], names[pair[1]])]
            isolated = []
        return self._cut("partition", links, self.sim.partition, self.sim.repair, isolated)

    def _clog(self) -> Outcome:
        a, b = self._pair("clog")
        if a is None or b is None:
            return None
        return self._cut("clog", [(a, b), (b, a)], self.sim.hold, self.sim.release, [])

    def _stream_stall(self) -> Outcome:
        a, b = self._pair("stream stall")
        if a is None or b is None:
            return None
        losses = self.stream.between(1, 5, "nemesis: stream stall lost retransmissions")
        delay = _STALL_FIRST * (2**losses - 1)
        return self._cut("stream_stall", [(a, b)], self.sim.hold, self.sim.release, [], delay)

    def _latency_spike(self) -> Outcome:
        names = self.sim.nodes.names()
        if len(names) < 2:
            return None
        node = self.stream.choice(names, "nemesis: latency spike which node")
        links = [(a, b) for other in names if other != node for a, b in
                 ((node, other), (other, node))]  # fmt: skip
        delay = self.stream.uniform(0.0, _SPIKE_MAX, f"nemesis: latency spike {node}")
        return self._cut("latency_spike", links, self.sim.hold, self.sim.release, [], delay)

    def _pair(self, what: str) -> tuple[str | None, str | None]:
        names = self.sim.nodes.names()
        if len(names) < 2:
            return None, None
        order = self.stream.permutation(len(names), f"nemesis: {what} which pair")
        return names[order[0]], names[order[1]]

    def _cut(
        self,
        kind: str,
        links: list[Link],
        apply: Callable[..., None],
        undo: Callable[..., None],
        isolated: list[str],
        delay: float | None = None,
    ) -> Outcome:
        """Put the free ones of `links` into a fault; end it after `delay` (or a drawn time)."""
        free = [link for link in links if link not in self._faulted]
        if not free:
            return None
        for a, b in free:
            apply(a, b, one_way=True)
        self._down.extend(isolated)

        def end() -> bool:
            caught = any(_has_waiting_traffic(self.sim, a, b) for a, b in free)
            for a, b in free:
                undo(a, b, one_way=True)
            for name in isolated:
                self._down.remove(name)
            return caught

        episode = _Episode(kind, free, end)
        for link in free:
            self._faulted[link] = episode
        if delay is None:
            delay = self.stream.exponential(
                self.profile.fault_duration_mean, f"nemesis: {kind} time"
            )
        self._begin(episode, delay)
        return LATER

    # -- episodes ---------------------------------------------------------------

    def _begin(self, episode: _Episode, delay: float) -> None:
        self._episodes.append(episode)
        self._note("fault.begin", episode)
        loop = asyncio.get_running_loop()
        episode.handle = loop.call_later(delay, self._finish, episode)

    def _note(self, what: str, episode: _Episode) -> None:
        """For `seedbed view` (outside the hash): the episode's kind and links."""
        notes = self.sim.loop.trace.notes
        if notes is not None:
            links = ",".join(f"{a}>{b}" for a, b in episode.links)
            notes(what, episode.kind, links)

    def _finish(self, episode: _Episode) -> None:
        if episode not in self._episodes:
            return
        self._episodes.remove(episode)
        self._note("fault.end", episode)
        if episode.handle is not None:
            episode.handle.cancel()
        for link in episode.links:
            if self._faulted.get(link) is episode:
                del self._faulted[link]
        if episode.end():
            self.counts[episode.kind]["effective"] += 1


def _has_waiting_traffic(sim: Simulation, a: str, b: str) -> bool:
    """Whether traffic a -> b waits at the link (a stalled stream, held datagrams)."""
    links: Any = sim.network._fabric.links
    return bool(links.get(a, b).waiting)
