"""The nemesis's ledger: the faults in progress, their counts, and the rules they keep.

A fault that lasts is an *episode*: the links it holds, the nodes it took
down, and how to end it. Every episode begins and ends here, so the rules of
the fault model are checked in one place, each on both sides:

- a link (or a node's disk, keyed `(node, node)`) is in at most one fault at
  a time, so a repair ends exactly the cut it belongs to: checked when an
  episode takes its links and when it gives them back;
- an episode that began ends once, by its own timer or by `stop_all`;
- a node the nemesis crashed is not crashed again before it restarts, and
  a host crash or an isolation begins only while fewer than `max_down`
  nodes are held down (crashed, or cut off; a client's crash is held down
  but not bounded: clients are not the quorum `max_down` protects);
- per class, `effective` never exceeds `injected`, and a fault counts as
  effective once, when it first changed what the program saw (its
  `effect` says what it did so far: read when it ends and whenever the
  counts are read, so one still in force when a run fails counts too);
- once stopped (the liveness phase), nothing is in progress and nothing
  begins.

A broken rule is a bug in seedbed (`SimulatorBug`), never in the program
under test: the user's code cannot reach the ledger.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from seedbed._core import Stream
from seedbed._core.contract import broken, require
from seedbed.faults._record import FaultRecord

if TYPE_CHECKING:
    from seedbed.faults._profile import FaultProfile
    from seedbed.world import Simulation

Link = tuple[str, str]
# What an injector returns: None (nothing to do: not injected), True or False
# (injected; effective or not), or LATER (injected; effective once its
# episode's `effect` shows it changed what the program saw).
LATER = "later"
Outcome = bool | str | None


Effect = Callable[[], dict[str, int]]


def _nothing() -> dict[str, int]:
    return {}


class Episode:
    """A fault in progress: its links, the nodes it holds down, how to end it,
    and what it did so far (`effect`: counts by what; any above 0 makes the
    fault effective, when the ledger next looks)."""

    __slots__ = ("bounded", "crashed", "down", "effect", "end", "handle", "hit", "kind",
                 "links", "record")  # fmt: skip

    def __init__(
        self,
        kind: str,
        end: Callable[[], object],
        *,
        links: list[Link] | None = None,
        down: list[str] | None = None,
        crashed: str | None = None,
        bounded: bool = True,
        effect: Effect = _nothing,
        hit: Callable[[], list[str]] = list,
    ) -> None:
        self.kind = kind
        self.end = end  # undoes the fault
        self.effect = effect
        self.hit = hit  # the links (as "a->b") whose traffic it changed so far
        self.links = links or []
        self.down = down or []  # counted against max_down while it lasts
        self.crashed = crashed  # the node it crashed, restarted by `end`
        self.bounded = bounded  # whether `down` must stay within max_down
        self.handle: asyncio.TimerHandle | None = None
        self.record: FaultRecord | None = None


class Ledger:
    """What the nemesis has in progress in `sim`, and what it injected so far."""

    def __init__(
        self, sim: Simulation, profile: FaultProfile, stream: Stream, kinds: list[str]
    ) -> None:
        self.sim = sim
        self.profile = profile
        self.stream = stream
        self.counts: dict[str, dict[str, int]] = {
            kind: {"injected": 0, "effective": 0} for kind in kinds
        }
        self.episodes: list[Episode] = []  # in progress, oldest first
        self.records: list[FaultRecord] = []  # every fault injected, in order
        # Instant faults whose effect shows later (a clock stepped, then read):
        # their records and how to tell, until they show it.
        self.watched: list[tuple[FaultRecord, Effect]] = []
        self._aim: tuple[str, tuple[str, ...], str] | None = None  # the fault being injected
        self._fresh: FaultRecord | None = None  # its record, once made
        self._faulted: dict[Link, Episode] = {}  # directed link -> its fault (lookup only)
        self._crashed: dict[str, Episode] = {}  # node -> the crash holding it (lookup only)
        self._down: list[str] = []  # nodes held down, in order (one may be crashed and cut off)
        self.stopped = False

    # -- the world as the injectors see it ------------------------------------

    def hosts(self) -> list[str]:
        return [node.name for node in self.sim.nodes.all() if node.kind == "host"]

    def clients(self) -> list[str]:
        return [node.name for node in self.sim.nodes.all() if node.kind == "client"]

    def names(self) -> list[str]:
        return self.sim.nodes.names()

    def max_down(self) -> int:
        if self.profile.max_down is not None:
            return self.profile.max_down
        return (len(self.sim.nodes.all()) - 1) // 2

    def room_to_take_down(self) -> bool:
        return len(self._down) < self.max_down()

    def is_down(self, name: str) -> bool:
        return name in self._down

    def running(self, name: str) -> bool:
        node = self.sim.nodes.get(name)
        return node.up and not (node.kind == "client" and node.result.done())

    def is_free(self, link: Link) -> bool:
        return link not in self._faulted

    # -- counting -------------------------------------------------------------

    def injecting(self) -> None:
        """A new fault is being injected: forget the last one's aim."""
        self._aim, self._fresh = None, None

    def aim(self, target: str, nodes: Sequence[str], note: str = "") -> None:
        """What the fault being injected is aimed at, for its record: "n2",
        "w3->coord", and the nodes it touches; `note` says how ("+5.8s")."""
        self._aim = (target, tuple(nodes), note)

    def count(self, kind: str, outcome: Outcome) -> None:
        """One fault of `kind` injected (True: effective already)."""
        counts = self.counts[kind]
        counts["injected"] += 1
        record = self._fresh or self._new_record(kind, lasting=False)
        if outcome is True:
            counts["effective"] += 1
            record.effective = True
        self._check_counts(kind)

    def _new_record(self, kind: str, *, lasting: bool) -> FaultRecord:
        target, nodes, note = self._aim or ("", (), "")
        now = self.sim.loop.time()
        record = FaultRecord(kind, target, nodes, now, lasting=lasting, note=note)
        self.records.append(record)
        self._fresh = record
        return record

    def watch(self, kind: str, effect: Effect) -> None:
        """The instant fault of `kind` being injected shows its effect later, when
        `effect()` first counts something (its outcome is LATER)."""
        record = self._fresh or self._new_record(kind, lasting=False)
        self.watched.append((record, effect))

    def settle(self) -> None:
        """Count the faults in progress (and the instant ones watched) that have
        changed what the program saw by now (a latent fault when a run fails),
        and note what each did so far."""
        for episode in self.episodes:
            self._look(episode)
        still = []
        for record, effect in self.watched:
            if not self._saw(record, effect()):
                still.append((record, effect))
        self.watched = still

    def _look(self, episode: Episode) -> None:
        record = episode.record
        require(record is not None, "an episode in progress has its record", kind=episode.kind)
        assert record is not None
        record.hit = episode.hit()
        self._saw(record, episode.effect())

    def _saw(self, record: FaultRecord, did: dict[str, int]) -> bool:
        """Note what a fault did so far; count it effective the first time it did
        something. True once it is effective."""
        record.did = did
        if not record.effective and any(count > 0 for count in did.values()):
            record.effective = True
            self.counts[record.kind]["effective"] += 1
            self._check_counts(record.kind)
        return record.effective

    def _check_counts(self, kind: str) -> None:
        counts = self.counts[kind]
        if not 0 <= counts["effective"] <= counts["injected"]:
            broken("a fault class is effective at most as often as injected", kind=kind, **counts)

    # -- episodes ---------------------------------------------------------------

    def begin(self, episode: Episode, delay: float) -> None:
        """Put `episode` in progress; it ends by itself after `delay` seconds."""
        require(not self.stopped, "the liveness phase injects nothing", kind=episode.kind)
        require(episode.handle is None, "an episode begins once", kind=episode.kind)
        for link in episode.links:
            if link in self._faulted:
                broken("a link is never in two faults at once", link=link, kind=episode.kind,
                       held_by=self._faulted[link].kind)  # fmt: skip
            self._faulted[link] = episode
        if episode.crashed is not None:
            require(episode.crashed not in self._crashed,
                    "a crashed node is not crashed again before it restarts",
                    node=episode.crashed)  # fmt: skip
            self._crashed[episode.crashed] = episode
        if episode.down and episode.bounded and len(self._down) >= self.max_down():
            broken("a host goes down only while fewer than max_down are", down=list(self._down),
                   adding=episode.down, max_down=self.max_down())  # fmt: skip
        self._down.extend(episode.down)
        episode.record = self._new_record(episode.kind, lasting=True)
        self.episodes.append(episode)
        self._note("fault.begin", episode)
        episode.handle = self.sim.loop.driver.call_later(delay, self.finish, episode)

    def _note(self, what: str, episode: Episode) -> None:
        """For `seedbed view` (outside the hash): the episode's kind and links."""
        notes = self.sim.loop.trace.notes
        if notes is not None:
            notes(what, episode.kind, ",".join(f"{a}>{b}" for a, b in episode.links))

    def finish(self, episode: Episode) -> None:
        """End `episode` now: give back its links and nodes, undo it, count its effect."""
        if episode not in self.episodes:
            broken("an episode that began ends once", kind=episode.kind)
        self._look(episode)  # what it did, before it is undone
        assert episode.record is not None
        episode.record.end = self.sim.loop.time()
        self.episodes.remove(episode)
        self._note("fault.end", episode)
        if episode.handle is not None:
            episode.handle.cancel()
        for link in episode.links:
            if self._faulted.get(link) is not episode:
                broken("a fault gives back only the links it holds", link=link, kind=episode.kind)
            del self._faulted[link]
        if episode.crashed is not None:
            require(self._crashed.get(episode.crashed) is episode,
                    "a crash ends by restarting the node it crashed",
                    node=episode.crashed)  # fmt: skip
            del self._crashed[episode.crashed]
        for name in episode.down:
            require(name in self._down, "a node comes back only if it was held down", node=name)
            self._down.remove(name)
        episode.end()

    def stop_all(self) -> None:
        """No new episodes; end every one in progress, oldest first."""
        self.stopped = True
        for episode in list(self.episodes):
            self.finish(episode)
        require(not (self.episodes or self._faulted or self._crashed or self._down),
                "stopping the nemesis ends every fault in progress",
                links=len(self._faulted), down=list(self._down))  # fmt: skip
