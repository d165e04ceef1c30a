"""Links between nodes: latency, partitions and holds.

Fault model. Every ordered pair of nodes `a -> b` is a link in one of three
states:

- open: traffic flows, each delivery delayed by a latency drawn from the
  network's entropy (`latency_min + exponential(latency_mean - latency_min)`,
  capped at `latency_max`);
- dropped (a partition): datagrams vanish; stream data waits at the link,
  and a connection whose data waits longer than `partition_reset_timeout`
  resets (TCP giving up on retransmissions); connects time out;
- held: datagrams and stream data queue at the link, in order, until
  `release` delivers the backlog after a fresh latency.

Stall episodes (the "tail" model's, see `NetworkConfig`) are apart from
these states: a delivery whose arrival falls inside one of the link's
episodes arrives when the episode ends instead, after whatever the episode
held before it. Episodes are drawn lazily, as arrivals reach them, so a
link that carries nothing draws nothing.

The state is checked when traffic arrives at the far end, so a partition
also catches what was already in flight.

Patterns. `partition`/`hold` change the links you name, and they stay so
until `repair`/`release`/`heal`. `isolate` and `random_halves` are patterns
over a set of nodes (every node, unless given one): a new pattern replaces
the last one (the links only it cut open again) unless asked to add to it,
and never touches a link you cut or held by name. `cuts()` lists the links
dropping traffic now, whichever verb cut them. Links are kept in creation order
and partition verbs walk the directory's node order: nothing here iterates
in hash order.

Contracts: a drawn latency lies within the link's bounds; a link is closed
only while a verb that names it (by hand or by pattern) keeps it so, and
opens with no hand-made cut left on it; an open link has no traffic waiting
at it (the pipes and datagrams pair this: they wait only at a closed link).
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Callable
from typing import NamedTuple

from seedbed._core import Stream, Trace
from seedbed._core.clock import NS_PER_SECOND
from seedbed._core.contract import broken, require
from seedbed.errors import UsageError
from seedbed.net._config import NetworkConfig, Timing

DELAY_BATCH = 64  # latencies drawn per link at once
# Latencies worked out from a drawn batch at a time: a link of a large world
# carries a few messages, and working out all 64 of its first batch cost more
# than its traffic (a ring of 2,000 nodes used 20 of each link's 64). The bits
# are drawn and hashed with the batch, as before: only the arithmetic waits.
DELAY_CHUNK = 16
NEVER = 1 << 62  # ns: a stall episode that never comes
_WORD = (1 << 64) - 1


def _words(bits: int, count: int) -> array[int]:
    """The `count` 32-bit words of `bits`, lowest first: `(bits >> 32 * i) & 0xFFFFFFFF`
    for each i, in one C-level pass where shifting a 2,048-bit draw word by word
    cost quadratic time (the ring of bench/peers.py spent 3% of its run there)."""
    words = array("I", bits.to_bytes(4 * count, "little"))
    if sys.byteorder == "big":  # the same words on every machine
        words.byteswap()
    return words


OPEN = 0
DROPPED = 1
HELD = 2
_STATE_NAMES = ("open", "dropped", "held")


class LinkState(NamedTuple):
    """One link as `Simulation.links()` lists it."""

    src: str
    dst: str
    state: str  # "open", "dropped" (partitioned) or "held"
    waiting: int  # traffic queued at the link: stalled stream pipes, held datagrams


class LinkTraffic(NamedTuple):
    """What faults did to one link's traffic so far (`Simulation.traffic`).

    Counted where it happens, outside the hash (counting changes no run):
    `dropped` datagrams a partition dropped, `held` datagrams a hold
    queued, `stalled` times a stream's waiting bytes stalled at the closed
    link, `blocked` connects whose SYN waited at it, `lost` datagrams the
    network's loss odds lost, `duplicated` datagrams sent twice and
    `duplicates_seen` of those an endpoint received both copies of;
    `stall_episodes` stall episodes that began while it carried traffic,
    `stalls` of those that held some and `stall_held` deliveries they held.
    """

    dropped: int = 0
    held: int = 0
    stalled: int = 0
    blocked: int = 0
    lost: int = 0
    duplicated: int = 0
    duplicates_seen: int = 0
    stall_episodes: int = 0
    stalls: int = 0
    stall_held: int = 0


class Link:
    """One direction between two nodes, with its waiting traffic."""

    __slots__ = (
        "blocked",
        "delays",
        "dropped",
        "dst",
        "duplicate_reason",
        "duplicated",
        "duplicates_seen",
        "held",
        "latency_reason",
        "loss_reason",
        "lost",
        "pending",
        "pending_at",
        "released",
        "scale",
        "src",
        "stall_end",
        "stall_episodes",
        "stall_held",
        "stall_reason",
        "stall_seen",
        "stall_start",
        "stall_used",
        "stalled",
        "stalls",
        "state",
        "timing",
        "waiting",
    )

    def __init__(self, src: str, dst: str, timing: Timing) -> None:
        self.src = src
        self.timing = timing  # the network's, or this link's own latencies
        self.dst = dst
        self.state = OPEN
        # Resumptions to run in order when the link opens: stalled stream pipes
        # and held datagrams.
        self.waiting: list[Callable[[], None]] = []
        # Draw labels, formatted once: draws happen per delivery.
        self.latency_reason = f"latency {src}->{dst}"
        self.loss_reason = f"loss {src}->{dst}"
        self.duplicate_reason = f"duplicate {src}->{dst}"
        self.stall_reason = f"stall {src}->{dst}"
        self.delays: list[int] = []  # drawn latencies not yet used, last first
        # The drawn batch's 32-bit words whose latencies are not worked out yet
        # (from `pending_at` on), or None: see DELAY_CHUNK.
        self.pending: array[int] | None = None
        self.pending_at = 0
        self.scale = 1.0  # the "tail" model's per-link factor of the spread
        # What faults did to this link's traffic (see `LinkTraffic`): never hashed.
        self.dropped = self.held = self.stalled = self.blocked = 0
        self.lost = self.duplicated = self.duplicates_seen = 0
        # The current (or next) stall episode, [stall_start, stall_end) in ns;
        # 0, 0 until the first arrival draws one; NEVER with stalls off.
        on = timing.stall_mean_gap > 0
        self.stall_start = self.stall_end = 0 if on else NEVER
        self.released = -1  # the last arrival a stall gave out: the next goes after
        self.stall_used = False  # the current episode held something
        self.stall_seen = False  # the current episode is counted as begun
        self.stall_episodes = self.stalls = self.stall_held = 0

    def traffic(self) -> LinkTraffic:
        return LinkTraffic(self.dropped, self.held, self.stalled, self.blocked, self.lost,
                           self.duplicated, self.duplicates_seen, self.stall_episodes,
                           self.stalls, self.stall_held)  # fmt: skip


class Links:
    """Every link of one network, and the verbs that change them."""

    __slots__ = (
        "_by_hand", "_config", "_links", "_names", "_pattern", "_stalls", "_stream", "_trace",
        "timing",
    )  # fmt: skip

    def __init__(
        self, stream: Stream, trace: Trace, config: NetworkConfig, names: Callable[[], list[str]],
        stalls: Stream | None = None,
    ) -> None:  # fmt: skip
        self._stream = stream
        self._stalls = stalls  # the stall episodes' stream (None: the network has none)
        self._trace = trace
        self._names = names
        self._links: dict[tuple[str, str], Link] = {}
        self._pattern: dict[tuple[str, str], None] = {}  # links the patterns cut, in order
        self._by_hand: dict[tuple[str, str], None] = {}  # links partitioned or held by name
        self._config = config
        self.timing = Timing(config)

    def get(self, src: str, dst: str) -> Link:
        link = self._links.get((src, dst))
        if link is None:
            timing = self.timing
            if self._config.link_latency:
                timing = Timing(self._config, self._config.latency_of(src, dst))
            link = self._links[(src, dst)] = Link(src, dst, timing)
            if timing.tail:  # an asymmetric route: each direction its own scale
                u = self._stream.raw(32, f"latency scale {src}->{dst}") / 4294967296.0
                link.scale = 0.5 + 1.5 * u
        return link

    def latency_ns(self, link: Link) -> int:
        """One hop's delay, drawn from the entropy (forced when min == mean)."""
        delays = link.delays
        if delays:
            return delays.pop()
        if link.pending is not None:
            self._work_out(link)
            return link.delays.pop()
        if link.timing.latency_spread <= 0 and not link.timing.tail:
            return link.timing.latency_min
        self._draw_delays(link)
        return link.delays.pop()

    def due(self, link: Link, sent: int) -> int:
        """When a delivery sent at `sent` arrives: a drawn latency later, or at
        the end of the stall episode it would arrive in."""
        when = sent + self.latency_ns(link)
        return when if when < link.stall_start else self.arrival(link, when)

    def _draw_delays(self, link: Link) -> None:
        """Draw the link's next DELAY_BATCH latencies at once, recorded as one draw.

        A trace record per delivery was the network's largest cost; like the
        loop's CPU costs, a batch is one labelled draw whose value the trace
        hashes, so runs stay replayable and seeds still differ. The "tail"
        model (see `NetworkConfig.latency_model`) takes 64 bits a hop, the
        others 32. The latencies are worked out DELAY_CHUNK at a time.
        """
        per_hop = 2 if link.timing.tail else 1
        bits = self._stream.raw(32 * per_hop * DELAY_BATCH, link.latency_reason)
        self._stream.trace_raw(link.latency_reason, bits & _WORD)
        link.pending = _words(bits, per_hop * DELAY_BATCH)
        link.pending_at = 0
        self._work_out(link)

    def _work_out(self, link: Link) -> None:
        """The next DELAY_CHUNK latencies of the drawn batch into `link.delays`."""
        words, start = link.pending, link.pending_at
        require(words is not None and not link.delays, "latencies are worked out when used up")
        assert words is not None  # for mypy: require does not narrow
        per_hop = 2 if link.timing.tail else 1
        end = min(start + per_hop * DELAY_CHUNK, len(words))
        if link.timing.tail:
            delays = self._tail_delays(link, words, start, end)
        else:
            delays = self._exponential_delays(link, words, start, end)
        delays.reverse()
        link.delays = delays
        link.pending, link.pending_at = (None, 0) if end == len(words) else (words, end)

    def _exponential_delays(self, link: Link, words: array[int], start: int, end: int) -> list[int]:
        """Latencies of the exponential model from `words[start:end]`, one word a hop."""
        timing = link.timing
        spread, low, high = timing.latency_spread, timing.latency_min, timing.latency_max
        delays = []
        log1p = math.log1p
        for index in range(start, end):  # `to_ns` inlined: a call per hop
            u = words[index] / 4294967296.0
            delays.append(min(low + round(-log1p(-u) * spread * NS_PER_SECOND), high))
        require(
            low <= min(delays) and max(delays) <= high,
            "a drawn latency lies within the link's bounds",
            link=link.latency_reason, low=low, high=high,
        )  # fmt: skip
        return delays

    def _tail_delays(self, link: Link, words: array[int], start: int, end: int) -> list[int]:
        """Latencies of the "tail" model from `words[start:end]`, two words a hop.

        The first word gives the body's exponential; the second decides a
        spike (below the tail probability) and, scaled back to [0, 1), where
        in the log-uniform tail it falls. Floats come from the raw bits by
        exact operations, plus `log1p`, `log` and `exp`, which are the C
        library's: the same on every CPython of one platform.
        """
        timing = link.timing
        spread = timing.latency_spread * link.scale
        low, high = timing.latency_min, timing.latency_max
        p = timing.tail_probability
        tail_log_low = math.log(timing.tail_low)
        tail_log_span = math.log(timing.tail_high) - tail_log_low
        delays = []
        log1p, exp, ns = math.log1p, math.exp, NS_PER_SECOND  # `to_ns` inlined
        for index in range(start, end, 2):
            u = words[index] / 4294967296.0
            v = words[index + 1] / 4294967296.0
            if v < p:
                delays.append(round(exp(tail_log_low + (v / p) * tail_log_span) * ns))
            else:
                delays.append(min(low + round(-log1p(-u) * spread * ns), high))
        return delays

    # -- stall episodes -------------------------------------------------------

    def arrival(self, link: Link, when: int) -> int:
        """When a delivery due at `when` arrives, stall episodes counted.

        Callers test `when >= link.stall_start` first (the common case costs
        one comparison): only then does this run.
        """
        while when >= link.stall_end:
            if link.stall_end and not link.stall_seen:
                link.stall_episodes += 1  # one that began and ended between arrivals
            self._next_stall(link)
        if when < link.stall_start:  # after the episode: behind what it released
            return when if when > link.released else link.released + 1
        if not link.stall_seen:
            link.stall_seen = True
            link.stall_episodes += 1
        release = link.stall_end if link.stall_end > link.released else link.released + 1
        require(release >= when, "a stall delays a delivery, never hastens it",
                link=link.latency_reason, due=when, release=release)  # fmt: skip
        link.released = release
        link.stall_held += 1
        if not link.stall_used:
            link.stall_used = True
            link.stalls += 1
            notes = self._trace.notes  # for `seedbed view` (outside the hash)
            if notes is not None:
                notes("link.stall", link.src, link.dst, link.stall_start, link.stall_end)
        return release

    def _next_stall(self, link: Link) -> None:
        """The link's next episode: a gap after the last one ends, then its length."""
        timing, stream = link.timing, self._stalls
        if stream is None or timing.stall_mean_gap <= 0:
            link.stall_start = link.stall_end = NEVER
            return
        reason = link.stall_reason
        bits = stream.raw(64, reason)
        stream.trace_raw(reason, bits)
        u = (bits & 0xFFFFFFFF) / 4294967296.0
        v = (bits >> 32) / 4294967296.0
        gap = -math.log1p(-u) * timing.stall_mean_gap
        length = math.exp(timing.stall_log_low + v * timing.stall_log_span)
        start = link.stall_end + max(round(gap * NS_PER_SECOND), 1)  # `to_ns`, inlined
        end = start + round(length * NS_PER_SECOND)
        if end <= start:  # the hot-path form of a rule: no call when it holds
            broken("a stall episode lasts", link=reason, start=start)
        link.stall_start, link.stall_end = start, end
        link.stall_used = link.stall_seen = False

    def stop_stalls(self, now: int) -> None:
        """No stall from `now` on (a scenario's liveness phase): an episode in
        progress ends now; what it already held keeps its release time."""
        self._stalls = None
        for link in self._links.values():  # creation order
            if link.stall_start <= now < link.stall_end:
                link.stall_end = now  # the next arrival draws no further episode
            elif link.stall_start > now:
                link.stall_start = link.stall_end = NEVER

    # -- verbs --------------------------------------------------------------

    def set(self, a: str, b: str, state: int, one_way: bool) -> None:
        """Put a -> b (and b -> a unless one_way) into `state`, by hand."""
        if a == b:
            raise UsageError(f"a link joins two different nodes, got {a!r} twice")
        for key in [(a, b)] if one_way else [(a, b), (b, a)]:
            self._pattern.pop(key, None)
            if state == OPEN:
                self._by_hand.pop(key, None)
            else:
                self._by_hand[key] = None
            self._set(self.get(*key), state)

    def isolate(self, node: str, among: list[str] | None = None, add: bool = False) -> None:
        """Drop traffic between `node` and every other node of `among`, both ways."""
        others = [other for other in self._among(among, "isolate") if other != node]
        self._apply_pattern([(node, other) for other in others], add)

    def heal(self) -> None:
        """Open every link (partitions and holds alike), in creation order."""
        self._pattern.clear()
        self._by_hand.clear()
        for link in list(self._links.values()):
            self._set(link, OPEN)

    def random_halves(
        self, among: list[str] | None = None, add: bool = False
    ) -> tuple[list[str], list[str]]:
        """Split `among` into two halves chosen by the entropy; drop traffic between them."""
        names = self._among(among, "random_halves")
        if len(names) < 2:
            raise UsageError(f"random_halves needs at least two nodes, got {names!r}")
        order = self._stream.permutation(len(names), "random halves")
        chosen = sorted(order[: len(names) // 2])
        first = [names[i] for i in chosen]
        second = [name for name in names if name not in first]
        self._apply_pattern([(a, b) for a in first for b in second], add)
        return first, second

    def cuts(self) -> list[tuple[str, str]]:
        """Every link dropping traffic now, as (from, to), in node order."""
        names = self._names()
        return [
            (a, b)
            for a in names
            for b in names
            if (a, b) in self._links and self._links[(a, b)].state == DROPPED
        ]

    def listing(self) -> list[LinkState]:
        """Every link made so far (one that carried traffic or was set), in node
        order, with its state and waiting traffic; creates none."""
        names = self._names()
        found = [self._links.get((a, b)) for a in names for b in names]
        return [
            LinkState(link.src, link.dst, _STATE_NAMES[link.state], len(link.waiting))
            for link in found
            if link is not None
        ]

    def traffic(self, src: str, dst: str) -> LinkTraffic:
        """What faults did to src -> dst's traffic so far; creates no link (a new
        link may draw its latency scale) and draws nothing."""
        link = self._links.get((src, dst))
        return link.traffic() if link is not None else LinkTraffic()

    def _among(self, among: list[str] | None, verb: str) -> list[str]:
        """The nodes a pattern spans, in the directory's order."""
        names = self._names()
        if among is None:
            return names
        if isinstance(among, str):
            raise UsageError(f"{verb}(among=...) takes a list of node names, got {among!r}")
        unknown = [name for name in among if name not in names]
        if unknown:
            raise UsageError(f"{verb}(among=...): unknown node(s) {unknown!r}; nodes are {names!r}")
        return [name for name in names if name in among]

    def _apply_pattern(self, pairs: list[tuple[str, str]], add: bool) -> None:
        """Cut `pairs` both ways; first, unless adding, open what the last pattern cut."""
        if not add:
            for key in list(self._pattern):
                self._set(self._links[key], OPEN)
            self._pattern.clear()
        for a, b in pairs:
            for key in ((a, b), (b, a)):
                if key not in self._by_hand:  # a link cut or held by name stays as it is
                    self._pattern[key] = None
                    self._set(self.get(*key), DROPPED)

    def _set(self, link: Link, state: int) -> None:
        key = (link.src, link.dst)
        if state == OPEN:
            require(key not in self._by_hand, "a link cut by name opens only by name", link=key)
        else:
            require(
                key in self._by_hand or key in self._pattern,
                "a link is closed only by a verb that names it",
                link=key,
            )
        if link.state == state:
            return
        link.state = state
        self._trace.emit("net.link", link.src, link.dst, _STATE_NAMES[state])
        if state == OPEN:
            waiting, link.waiting = link.waiting, []
            for resume in waiting:
                resume()
            require(not link.waiting, "an open link has no traffic waiting at it", link=key)
