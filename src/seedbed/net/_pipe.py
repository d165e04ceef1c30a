"""One direction of a simulated stream connection: ordered bytes with latency.

Fault model. Bytes written arrive in order, exactly once, after a latency
drawn per send; the writes a stream makes at one virtual instant travel as
one segment (one draw, one delivery). Arriving bytes are handed to the
receiver in chunks of at most `stream_chunk_max` bytes, each its own loop
callback: a delivery hands over all that arrived or, with
`stream_split_probability`, a seeded prefix, so a reader sees partial
messages (at probability 0 nothing is drawn). A FIN (EOF) or RST travels
behind the data like any segment. The link is checked on arrival: a
partitioned or held link stalls the pipe (nothing is lost); a partition that
outlasts `partition_reset_timeout` resets the connection.

With a trace file recorded, the pipe notes (outside the hash, see
`seedbed._core.trace`) each segment sent, each chunk delivered, stalls and
resumes and what a clear dropped, naming the pipe by its sender end's number,
so `seedbed view` can draw a send's arrow to its delivery.

Per-connection FIFO holds by construction: a pipe has one queue and at most
one pending delivery callback, and a segment never arrives before the one
sent ahead of it, whatever order the loop gives timers due together.

Contracts (`_core.contract`), each checked where it is kept and where it is
relied on: the buffer holds exactly the bytes sent and not yet delivered (so
delivered <= sent); a segment never overtakes the one ahead of it, in time
or in stream offset; nothing but a reset follows a FIN or a reset; a pipe
waiting at a closed link schedules no delivery, and a delivery happens only
on an open link; a lost end is handed nothing more.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from seedbed._core.contract import broken, require
from seedbed._core.trace import route_word
from seedbed.net._fabric import Fabric
from seedbed.net._links import DROPPED, OPEN, Link

if TYPE_CHECKING:
    from seedbed.net._stream import StreamEndpoint

DATA = 0
FIN = 1
RST = 2


class Pipe:
    """Segments from `sender` to `receiver`, delivered by one callback at a time."""

    __slots__ = (
        "arrive",
        "clock",
        "data",
        "delivered",
        "fabric",
        "hot_at",
        "link",
        "marks",
        "receiver",
        "reset_timer",
        "route",
        "sender",
        "sent",
        "stalled",
        "starved",
        "tail",
        "timer",
    )

    def __init__(self, fabric: Fabric, link: Link) -> None:
        self.fabric = fabric
        self.clock = fabric.clock  # the world's clock, one hop nearer for every write
        self.link = link
        self.route = route_word(link.src, link.dst)  # what each delivery folds (see trace)
        self.sender: StreamEndpoint | None = None
        self.receiver: StreamEndpoint | None = None
        self.data = bytearray()  # bytes sent and not yet delivered
        self.sent = 0  # stream offsets: everything before `delivered` has arrived
        self.delivered = 0
        # Segments in order: [arrival_ns, end_offset, kind, sent_ns].
        self.marks: deque[list[int]] = deque()
        # The instant whose DATA segment is the queue's tail and takes more
        # bytes (`tail`), so a write at that instant only extends it; -1 once
        # a FIN or RST is queued behind it, the queue is cleared, or it arrived.
        self.hot_at = -1
        self.tail: list[int] = []
        self.timer: Any = None  # the one pending delivery callback
        self.stalled = False  # waiting for the link to open
        self.starved = False  # waiting for the receiver to read
        self.reset_timer: Any = None
        self.arrive = self._arrive  # bound once: a delivery is scheduled per message

    @property
    def backlog(self) -> int:
        """Bytes written and not yet delivered: the sender's side of the window."""
        return self.sent - self.delivered

    # -- sending ------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Queue bytes: they join the tail segment if it is open at this instant.

        `StreamEndpoint.write` inlines this for `bytes`; this is the rest.
        """
        now = self.clock.now
        self.data += data
        self.sent += len(data)
        if self.hot_at == now:
            self.tail[1] = self.sent
        else:
            self.push(DATA, now)

    def send_fin(self) -> None:
        self.push(FIN, self.fabric.clock.now)

    def send_rst(self) -> None:
        """Abort: what is queued is dropped and only the reset travels."""
        self.clear()
        self.push(RST, self.fabric.clock.now)

    def clear(self) -> None:
        """Drop everything queued (a crash, an abort, a reset)."""
        notes = self.fabric.trace.notes
        if notes is not None and self.marks:
            notes("cleared", self._number(), self.delivered)
        self.data.clear()
        self.delivered = self.sent
        self.marks.clear()
        self.hot_at = -1
        self._cancel_timers()

    def push(self, kind: int, now: int) -> None:
        """Queue a segment of `kind` sent at `now` (data already appended for DATA).

        Once per message on a request/response stream, so the latency pop and
        the common case of `_schedule` (a delivery in the future) are inlined.
        """
        fabric = self.fabric
        delays = self.link.delays
        link = self.link
        when = now + (delays.pop() if delays else fabric.links.latency_ns(link))
        if when >= link.stall_start:  # in a stall episode, or past the one drawn
            when = fabric.links.arrival(link, when)
        marks = self.marks
        sent = self.sent
        if marks:
            ahead = marks[-1]
            if ahead[0] > when:
                when = ahead[0]  # never overtake the segment ahead
            if ahead[1] > sent or (ahead[2] != DATA and kind != RST):
                broken("a segment follows the one ahead on its connection", ahead=ahead, kind=kind)
        if sent - self.delivered != len(self.data):
            broken(
                "a pipe buffers exactly sent - delivered bytes",
                sent=sent, delivered=self.delivered, buffered=len(self.data),
            )  # fmt: skip
        notes = fabric.trace.notes
        if notes is not None:
            self._note_segment(notes, kind)
        mark = [when, sent, kind, now]
        marks.append(mark)
        if kind == DATA:
            self.hot_at, self.tail = now, mark
        else:
            self.hot_at = -1
        if self.timer is None and not self.stalled and not self.starved:
            if when > now:
                receiver = self.receiver
                assert receiver is not None
                self.timer = fabric.at(when, self.arrive, context=receiver.context)
            else:
                self._schedule(when)

    def _note_segment(self, notes: Any, kind: int) -> None:
        marks = self.marks  # a new segment starts where the queued ones end
        start = marks[-1][1] if marks else self.delivered
        link = self.link
        notes("seg", self._number(), start, kind, link.src, link.dst)

    def _number(self) -> int:
        return -1 if self.sender is None else self.sender.number

    def _schedule(self, when: int) -> None:
        receiver = self.receiver
        assert receiver is not None
        if self.stalled:
            broken("a pipe waiting at a closed link schedules no delivery", link=self.link.state)
        fabric = self.fabric
        if when <= fabric.clock.now:
            self.timer = fabric.loop.call_soon(self.arrive, context=receiver.context)
        else:
            self.timer = fabric.at(when, self.arrive, context=receiver.context)

    # -- arriving (runs in the receiver's context) ---------------------------

    def _arrive(self) -> None:
        self.timer = None
        marks = self.marks
        if not marks:
            return
        if self.link.state != OPEN:
            self._stall()
            return
        receiver = self.receiver
        assert receiver is not None
        if not receiver.reading:
            self.starved = True
            return
        if receiver.lost:  # a lost end never reads again (`_lose`, `crash`)
            broken("a closed or reset connection end is delivered nothing more", end=receiver)
        now = self.clock.now
        head = marks[0]
        if head[0] > now:
            self._schedule(head[0])
            return
        kind = head[2]
        notes = self.fabric.trace.notes
        if notes is not None and kind != DATA:
            notes("arrive", self._number(), kind)
        if kind == DATA:
            self._deliver_chunk(receiver, now, marks)
        elif kind == FIN:
            marks.popleft()
            receiver.receive_eof()
        else:
            self.clear()
            receiver.receive_reset()
        if marks and self.timer is None and not self.stalled and not self.starved:
            self._schedule(marks[0][0])

    def _deliver_chunk(self, receiver: StreamEndpoint, now: int, marks: deque[list[int]]) -> None:
        end = marks[0][1]
        if len(marks) > 1:  # more segments in flight: all that has arrived goes
            if marks[1][0] < marks[0][0]:
                broken("a segment never arrives before the one ahead of it", marks=list(marks))
            for mark in marks:
                if mark[0] > now or mark[2] != DATA:
                    break
                end = mark[1]
        fabric = self.fabric  # the chunk size: mostly all that arrived, else a uniform prefix
        size = limit = end - self.delivered
        if limit > fabric.chunk_max:
            size = limit = fabric.chunk_max
        if limit > 1 and fabric.split_span:  # no split armed: nothing to draw
            fractions = fabric.chunk_fractions
            value = fractions.pop() if fractions else fabric.chunk_fraction()
            if value >= fabric.split_from:  # a split: a uniform prefix of 1..limit bytes
                size = 1 + (value - fabric.split_from) * limit // fabric.split_span
        data = self.data
        buffered = len(data)
        if (
            self.link.state != OPEN
            or self.sent - self.delivered != buffered
            or not 0 < size <= buffered
        ):
            broken(
                "a delivery hands over buffered bytes (sent - delivered) on an open link",
                sent=self.sent, delivered=self.delivered, buffered=buffered, size=size,
                link=self.link.state,
            )  # fmt: skip
        if size == buffered:
            chunk = bytes(data)
            data.clear()
        else:
            chunk = bytes(data[:size])
            del data[:size]
        notes = fabric.trace.notes
        if notes is not None:
            notes("chunk", self._number(), self.delivered, size, summary(chunk))
        self.delivered += size
        while marks and marks[0][2] == DATA and marks[0][1] <= self.delivered:
            marks.popleft()
        if not marks:
            self.hot_at = -1  # the tail arrived: a later write starts a new segment
        # A digest of the bytes, never a copy; after the books balance, since a
        # replay that diverges here raises out of this callback.
        fabric.trace.deliver(self.route, self.link.src, self.link.dst, chunk)
        sender = self.sender
        if sender is not None and sender.write_paused:
            sender.window_opened()
        protocol = receiver.reader  # the protocol, or a BufferedProtocol's feed
        if receiver.closing or protocol is None or not receiver.ref.alive:
            receiver.receive(chunk)  # the general path: refuse, or nobody to tell
            return
        try:  # StreamEndpoint.receive, inlined: one delivery per message is the hot path
            protocol.data_received(chunk)
        except Exception as exc:
            receiver._protocol_failed(exc, "data_received")

    # -- waiting ------------------------------------------------------------

    def reader_ready(self) -> None:
        """The receiver reads again (resumed, or a protocol was attached)."""
        if self.starved:
            self.starved = False
            if self.marks and self.timer is None and not self.stalled:
                self._schedule(self.fabric.clock.now)

    def _stall(self) -> None:
        """The link is partitioned or held: wait for it, and give up on a partition."""
        notes = self.fabric.trace.notes
        if notes is not None:
            notes("stall", self._number())
        link = self.link
        require(link.state != OPEN and self.timer is None, "traffic waits only at a closed link")
        self.stalled = True
        link.stalled += 1  # bytes waiting at a closed link: a fault the program feels
        link.waiting.append(self._resume)
        if link.state == DROPPED and self.reset_timer is None:
            fabric = self.fabric
            deadline = fabric.clock.now + fabric.links.timing.reset_timeout
            self.reset_timer = fabric.at(deadline, self._give_up, context=fabric.context)

    def _resume(self) -> None:
        """The link opened: the backlog travels on after a fresh latency."""
        if not self.stalled:
            return
        self.stalled = False
        notes = self.fabric.trace.notes
        if notes is not None:
            notes("resume", self._number())
        if self.reset_timer is not None:
            self.reset_timer.cancel()
            self.reset_timer = None
        if self.marks and self.timer is None and not self.starved:
            self._schedule(self.fabric.links.due(self.link, self.fabric.clock.now))

    def _give_up(self) -> None:
        self.reset_timer = None
        if self.stalled and self.link.state != OPEN:
            self.fabric.trace.emit("net.timeout", self.link.src, self.link.dst)
            for end in (self.sender, self.receiver):
                if end is not None:
                    end.reset_by_network()

    def _cancel_timers(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.reset_timer is not None:
            self.reset_timer.cancel()
            self.reset_timer = None


SUMMARY_BYTES = 32  # bytes of a payload a note shows


def summary(payload: bytes) -> str:
    """A payload's first bytes as a note shows them (its repr, cut short)."""
    head = repr(payload[:SUMMARY_BYTES])
    return head if len(payload) <= SUMMARY_BYTES else f"{head}... ({len(payload)} bytes)"
