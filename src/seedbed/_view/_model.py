"""From a trace file to what the diagram draws: lanes, points, arrows, spans, operations.

The file is read as a stream (`RecordedTrace`, as replay reads it): events
and annotation notes (see `seedbed._core.trace`) one line at a time, each
given the next position on the diagram's vertical axis, because many events
share a virtual instant. Only what is drawn is kept: `time` events move the
clock and are not drawn, so the data is a fraction of the file.

Which node an event belongs to comes from the event where it names one
(network events, crashes, starts) or from the notes (a segment's sender and
receiver, a client operation's node); the rest sit on the `(world)` lane.
A trace without notes (recorded before them) still gives lanes, points,
link faults, crashes and the failure; only the arrows need the notes.
"""

from __future__ import annotations

from bisect import insort
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from seedbed._core.trace import Event
from seedbed._core.tracefile import RecordedTrace, TraceIncomplete
from seedbed.errors import UsageError

WORLD = "(world)"
_FAILURES = ("assertion failed", "invariant broke")
_NODE_KILLERS = ("crash", "bounce", "client_crash", "partition", "clog")  # drawn from events
_KINDS = ("data", "fin", "rst")
_LINK_STATES = ("open", "partitioned", "held")


@dataclass
class _Segment:
    start: int  # stream offset of its first byte
    kind: int
    pos: int
    src: int
    dst: int
    held: bool = False


@dataclass
class _Pipe:
    src: int
    dst: int
    queue: deque[_Segment] = field(default_factory=deque)


class Column(Protocol):
    """Where an append-only list of rows goes: a `list` (kept, for tests and small
    runs) or a spool on disk (`_spool.Spool`, what `write_view` uses, so memory
    stays bounded however long the trace)."""

    def append(self, row: Any, /) -> None: ...

    def __len__(self) -> int: ...


def _column(name: str = "") -> Any:
    return []


@dataclass
class Diagram:
    """Everything the page draws, as rows (JSON-ready); positions are the
    vertical axis, `times[pos]` the virtual time (ns) there.

    `times`, `points` and `arrows` grow with the trace and are append-only
    columns; the rest grows with faults and client operations, and is kept
    (operations change when they complete and when a check blames them).
    """

    meta: dict[str, Any]
    lanes: list[str] = field(default_factory=lambda: [WORLD])
    times: Column = field(default_factory=_column)
    # [pos, lane, kind, text]
    points: Column = field(default_factory=_column)
    # [pos_from, lane_from, pos_to, lane_to, label, status] status: ok, dropped, held, lost
    arrows: Column = field(default_factory=_column)
    # [lane, pos_from, pos_to, kind, text]
    spans: list[list[Any]] = field(default_factory=list)
    # [lane, pos_from, pos_to, f, text, outcome, check, ns_from, ns_to] check: the
    # index in `checks` of the history check that blames it, else -1; the virtual
    # times (ns) of its invocation and completion (None: no completion), for the
    # latency plot
    ops: list[list[Any]] = field(default_factory=list)
    # [ns_from, ns_to, kind, label]: each fault's interval once (not per lane), for
    # the latency and throughput plots
    faults: list[list[Any]] = field(default_factory=list)
    # {"checker", "text", "pos", "ops": [indices in ops]}: a history checker's refusal
    checks: list[dict[str, Any]] = field(default_factory=list)
    failure: dict[str, Any] | None = None

    def small_parts(self) -> dict[str, Any]:
        """Everything but the three long columns, as one JSON-ready object."""
        return {
            "meta": self.meta,
            "lanes": self.lanes,
            "spans": self.spans,
            "ops": self.ops,
            "checks": self.checks,
            "failure": self.failure,
        }


class _Builder:
    """Folds events and notes, in file order, into a `Diagram`."""

    def __init__(self, d: Diagram) -> None:
        self.d = d
        self.positions = 0
        self.lane_of: dict[str, int] = {WORLD: 0}
        self.now = 0
        self.pipes: dict[int, _Pipe] = {}
        self.number_node: dict[int, int] = {}
        self.datagrams: dict[str, list[Any]] = {}  # ident -> [pos, src, dst, label, held]
        self.open_spans: dict[tuple[int, str, str], int] = {}  # (lane, kind, text) -> pos
        # (kind, label) -> [since (ns), lanes shaded]: a fault once, however many lanes
        self.open_faults: dict[tuple[str, str], list[int]] = {}
        self.open_ops: dict[tuple[int, str], list[Any]] = {}  # (recorder, process) -> open row
        self.op_rows: dict[tuple[int, int], int] = {}  # (recorder, invoke index) -> row
        # Spans that open and close at known virtual times (a link's stall episode):
        # (ns, 0 to open or 1 to close, lane, kind, text), done in that order at the
        # first event at or past their time.
        self.timed: list[tuple[int, int, int, str, str]] = []

    # -- positions and lanes ----------------------------------------------

    def _pos(self) -> int:
        self.d.times.append(self.now)
        self.positions += 1
        return self.positions - 1

    def lane(self, name: Any) -> int:
        name = str(name)
        index = self.lane_of.get(name)
        if index is None:
            index = self.lane_of[name] = len(self.d.lanes)
            self.d.lanes.append(name)
        return index

    def _point(self, lane: int, kind: str, text: str) -> int:
        pos = self._pos()
        self.d.points.append([pos, lane, kind, text])
        return pos

    def _open(self, lane: int, kind: str, text: str, pos: int) -> None:
        if (lane, kind, text) in self.open_spans:
            return
        self.open_spans[(lane, kind, text)] = pos
        since = self.open_faults.setdefault(self._fault(lane, kind, text), [self.now, 0])
        since[1] += 1  # lanes it is shaded on

    def _close(self, lane: int, kind: str, text: str, pos: int) -> None:
        start = self.open_spans.pop((lane, kind, text), None)
        if start is None:
            return
        self.d.spans.append([lane, start, pos, kind, text])
        key = self._fault(lane, kind, text)
        since = self.open_faults[key]
        since[1] -= 1
        if not since[1]:  # one fault, shaded on several lanes, ends once: with the last
            del self.open_faults[key]
            self.d.faults.append([since[0], self.now, *key])

    def _fault(self, lane: int, kind: str, text: str) -> tuple[str, str]:
        """A fault's identity across lanes: its kind and what it hit."""
        return (kind, self.d.lanes[lane]) if kind == "crash" else (kind, text)

    # -- events -------------------------------------------------------------

    def event(self, event: Event) -> None:
        kind = str(event[0])
        if kind == "time":
            self._advance(int(event[1]))
            return
        if kind == "at":  # the step and time the next events happened at
            self._advance(int(event[2]))
            return
        if kind == "deliver":  # its bytes are drawn from the "chunk" notes
            return
        text = " ".join(str(f) for f in event[1:])
        handler = getattr(self, "_e_" + kind.replace(".", "_").replace(" ", "_"), None)
        if handler is not None:
            handler(event, text)
        elif kind.startswith("net.") and len(event) > 1 and isinstance(event[1], str):
            self._point(self.lane(event[1]), kind, text)  # net events name their node first
        else:
            self._point(0, kind, text)

    def _e_draw(self, event: Event, text: str) -> None:
        self._point(0, "draw", f"stream {event[1]}: {event[2]} = {event[3]}")

    def _e_start(self, event: Event, text: str) -> None:
        lane = self.lane(event[1])
        pos = self._point(lane, "start", f"{event[1]} started (incarnation {event[2]})")
        self._close(lane, "crash", "down", pos)

    def _e_crash(self, event: Event, text: str) -> None:
        lane = self.lane(event[1])
        pos = self._point(lane, "crash", f"{event[1]} crashed (incarnation {event[2]})")
        self._open(lane, "crash", "down", pos)

    def _e_stop(self, event: Event, text: str) -> None:
        self._point(self.lane(event[1]), "stop", f"{event[1]} stopped (incarnation {event[2]})")

    def _e_upgrade(self, event: Event, text: str) -> None:
        name, version, how = event[1], event[2], event[3] if len(event) > 3 else ""
        self._point(self.lane(name), "upgrade", f"{name} to the {version} version ({how})")

    def _e_net_link(self, event: Event, text: str) -> None:
        src, dst, state = self.lane(event[1]), self.lane(event[2]), str(event[3])
        pos = self._point(src, "net.link", f"link {event[1]} -> {event[2]}: {state}")
        label = f"{event[1]} -> {event[2]}"
        for lane in (src, dst):
            for kind in ("partition", "clog"):
                self._close(lane, kind, label, pos)
            if state == "dropped":
                self._open(lane, "partition", label, pos)
            elif state == "held":
                self._open(lane, "clog", label, pos)

    def _e_net_accept(self, event: Event, text: str) -> None:
        self._point(self.lane(event[2]), "net.accept", f"{event[2]} accepted {event[1]}:{event[3]}")

    def _e_net_lost(self, event: Event, text: str) -> None:
        src = self.lane(event[1])
        pos = self._point(src, "net.lost", f"datagram {event[1]} -> {event[2]}:{event[3]} lost")
        self.d.arrows.append([pos, src, pos, self.lane(event[2]), f"{event[4]} bytes", "lost"])

    def _e_nemesis(self, event: Event, text: str) -> None:
        lane = self.lane(event[2]) if len(event) > 2 else 0
        self._point(lane, "fault", f"nemesis {text}")

    def _e_assertion_failed(self, event: Event, text: str) -> None:
        self._failure(self._point(0, "failure", f"assertion failed: {text}"), text)

    def _e_invariant_broke(self, event: Event, text: str) -> None:
        self._failure(self._point(0, "failure", f"invariant broke: {text}"), text)

    def _failure(self, pos: int, text: str) -> None:
        if self.d.failure is None:
            self.d.failure = {"pos": pos, "text": text}

    def _by_number(self, event: Event, text: str) -> None:
        # A connection end's number: its node is known once that end sent a segment.
        lane = self.number_node.get(event[1], 0) if isinstance(event[1], int) else 0
        self._point(lane, str(event[0]), f"connection end {text}")

    _e_net_fin = _e_net_rst = _by_number

    # -- notes ----------------------------------------------------------------

    def note(self, note: Event) -> None:
        handler = getattr(self, "_n_" + str(note[0]).replace(".", "_"), None)
        if handler is not None:
            handler(note)

    def _n_seg(self, note: Event) -> None:
        number, start, kind = int(note[1]), int(note[2]), int(note[3])
        src, dst = self.lane(note[4]), self.lane(note[5])
        pipe = self.pipes.setdefault(number, _Pipe(src, dst))
        self.number_node[number] = src
        pipe.queue.append(_Segment(start, kind, self._pos(), src, dst))

    def _n_chunk(self, note: Event) -> None:
        pipe = self.pipes.get(int(note[1]))
        if pipe is None:
            return
        offset, size = int(note[2]), int(note[3])
        queue = pipe.queue
        while len(queue) > 1 and queue[1].kind == 0 and queue[1].start <= offset:
            queue.popleft()  # delivered by earlier chunks
        if not queue:
            return
        head = queue[0]
        status = "held" if head.held else "ok"
        label = f"{size} bytes: {note[4]}"
        self.d.arrows.append([head.pos, head.src, self._pos(), head.dst, label, status])
        while len(queue) > 1 and queue[1].kind == 0 and queue[1].start < offset + size:
            queue.popleft()

    def _n_arrive(self, note: Event) -> None:
        pipe = self.pipes.get(int(note[1]))
        kind = int(note[2])
        if pipe is None:
            return
        while pipe.queue and pipe.queue[0].kind != kind:
            pipe.queue.popleft()
        if pipe.queue:
            seg = pipe.queue.popleft()
            name = _KINDS[kind] if 0 <= kind < len(_KINDS) else str(kind)
            status = "held" if seg.held else "ok"
            self.d.arrows.append([seg.pos, seg.src, self._pos(), seg.dst, name.upper(), status])
        if not pipe.queue:  # a FIN or RST ends its direction: memory stays bounded
            del self.pipes[int(note[1])]

    def _n_cleared(self, note: Event) -> None:
        pipe = self.pipes.get(int(note[1]))
        if pipe is None:
            return
        delivered = int(note[2])
        pos = self._pos()
        for seg in pipe.queue:  # a head already partly delivered has its arrow
            if seg.start >= delivered:
                label = "dropped " + (_KINDS[seg.kind] if 0 <= seg.kind < 3 else "?")
                self.d.arrows.append([seg.pos, seg.src, pos, seg.dst, label, "dropped"])
        del self.pipes[int(note[1])]

    def _n_stall(self, note: Event) -> None:
        pipe = self.pipes.get(int(note[1]))
        if pipe is not None:
            for seg in pipe.queue:
                seg.held = True

    def _n_dgram(self, note: Event) -> None:
        src, dst = self.lane(note[2]), self.lane(note[3])
        label = f"datagram :{note[4]} {note[5]}"
        self.datagrams[str(note[1])] = [self._pos(), src, dst, label, False]

    def _n_dgram_at(self, note: Event) -> None:
        sent = self.datagrams.get(str(note[1]))
        if sent is None:
            return
        state = int(note[2])
        if state == 2:  # held at the link: drawn when it is released
            sent[4] = True
            return
        del self.datagrams[str(note[1])]
        status = "dropped" if state == 1 else "held" if sent[4] else "ok"
        self.d.arrows.append([sent[0], sent[1], self._pos(), sent[2], sent[3], status])

    def _advance(self, now: int) -> None:
        """Time moves to `now`: close the timed spans that ended before it."""
        timed = self.timed
        while timed and timed[0][0] <= now:
            when, closing, lane, kind, text = timed.pop(0)
            self.now = max(self.now, when)  # a position at the span's own time
            if closing:
                self._close(lane, kind, text, self._pos())
            else:
                self._open(lane, kind, text, self._pos())
        self.now = now

    def _n_link_stall(self, note: Event) -> None:
        """("link.stall", src, dst, start ns, end ns): a link's stall episode held
        the program's traffic; shaded on both ends from its start to its end."""
        src, dst, start, end = str(note[1]), str(note[2]), int(note[3]), int(note[4])
        text = f"{src}>{dst}"
        for lane in (self.lane(src), self.lane(dst)):
            insort(self.timed, (max(start, self.now), 0, lane, "link_stall", text))
            insort(self.timed, (end, 1, lane, "link_stall", text))
        self._advance(self.now)  # an episode already under way opens now

    def _n_fault_begin(self, note: Event) -> None:
        if note[1] in _NODE_KILLERS:
            return
        pos = self._pos()
        for lane in self._fault_lanes(str(note[2])):
            self._open(lane, str(note[1]), str(note[2]), pos)

    def _n_fault_end(self, note: Event) -> None:
        if note[1] in _NODE_KILLERS:
            return
        pos = self._pos()
        for lane in self._fault_lanes(str(note[2])):
            self._close(lane, str(note[1]), str(note[2]), pos)

    def _fault_lanes(self, links: str) -> list[int]:
        lanes: list[int] = []
        for link in links.split(","):
            for name in link.split(">"):
                if name and self.lane(name) not in lanes:
                    lanes.append(self.lane(name))
        return lanes or [0]

    def _n_op(self, note: Event) -> None:
        # ("op", kind, process, f, value, node[, recorder, index]): the last two
        # since history checks name operations (older traces lack them).
        kind, process, f, value, node = (str(x) for x in note[1:6])
        lane = self.lane(node or WORLD)
        recorder = int(note[6]) if len(note) >= 8 else -1
        if kind == "invoke":
            pos = self._pos()
            row: list[Any] = [
                lane,
                pos,
                pos,
                f,
                f"{process} {f}({value})",
                "open",
                -1,
                self.now,
                None,
            ]
            if recorder >= 0:
                self.op_rows[(recorder, int(note[7]))] = len(self.d.ops)
            self.d.ops.append(row)
            self._unanswered(self.open_ops.pop((recorder, process), None), pos)
            self.open_ops[(recorder, process)] = row
            return
        done = self.open_ops.pop((recorder, process), None)
        if done is not None:
            done[2], done[4], done[5] = self._pos(), f"{done[4]} -> {kind} {value}", kind
            done[8] = self.now

    @staticmethod
    def _unanswered(row: list[Any] | None, pos: int) -> None:
        """An operation with no response: drawn open until `pos`."""
        if row is not None:
            row[2], row[4] = pos, f"{row[4]} -> (no response)"

    def _n_check(self, note: Event) -> None:
        # ("check", checker, recorder, explanation, "call,call,..."): see `note_check`.
        checker, recorder, text = str(note[1]), int(note[2]), str(note[3])
        calls = [int(call) for call in str(note[4]).split(",") if call]
        number = len(self.d.checks)
        rows = [row for call in calls if (row := self.op_rows.get((recorder, call))) is not None]
        for row in rows:
            if self.d.ops[row][6] < 0:
                self.d.ops[row][6] = number
        self.d.checks.append({"checker": checker, "text": text, "pos": self._pos(), "ops": rows})

    # -- the end ----------------------------------------------------------------

    def finish(self, end: dict[str, Any] | None, defect: str | None) -> Diagram:
        last = max(self.positions - 1, 0)
        for (lane, kind, text), start in self.open_spans.items():
            self.d.spans.append([lane, start, last, kind, text])
        for (kind, label), (since, _) in self.open_faults.items():  # in force at the end
            self.d.faults.append([since, self.now, kind, label])
        for row in self.open_ops.values():
            self._unanswered(row, last)
        for sent in self.datagrams.values():
            self.d.arrows.append([sent[0], sent[1], last, sent[2], sent[3], "held"])
        failure = (end or {}).get("failure")
        if failure and self.d.failure is None:
            self.d.failure = {"pos": last, "text": str(failure)}
        elif failure and self.d.failure is not None and self.d.failure["text"] not in failure:
            self.d.failure["text"] = f"{failure} ({self.d.failure['text']})"
        elif failure and self.d.failure is not None:
            self.d.failure["text"] = str(failure)
        self.d.meta["end"] = end
        self.d.meta["defect"] = defect
        self.d.meta["end_ns"] = self.now  # the virtual time the trace reached
        if not self.positions:
            self._pos()
        return self.d


def build(path: str | Path, columns: Callable[[str], Column] = _column) -> Diagram:
    """Read the trace at `path` as a stream and build its diagram, its long
    columns made by `columns(name)` (lists by default).

    A file that is not a trace raises a one-line `UsageError`; a trace cut
    short is drawn up to the cut, with the defect in its `meta`.
    """
    recorded = RecordedTrace(path)
    try:
        meta = {"path": str(path), "header": recorded.header}
        times, points, arrows = (columns(name) for name in ("times", "points", "arrows"))
        builder = _Builder(Diagram(meta, times=times, points=points, arrows=arrows))
        recorded.on_note = lambda note: _fold(recorded, builder.note, note)
        while (event := recorded.next_event()) is not None:
            _fold(recorded, builder.event, event)
        defect = recorded.defect
        if defect is not None and not isinstance(defect, TraceIncomplete):
            raise defect
        end = None if defect is not None else recorded.end
        return builder.finish(end, None if defect is None else str(defect))
    finally:
        recorded.close()


def _fold(recorded: RecordedTrace, fold: Any, item: Event) -> None:
    """Fold one event or note; one whose fields are not what seedbed writes is
    bad input, named by its line."""
    try:
        fold(item)
    except (IndexError, ValueError, TypeError):
        raise UsageError(
            f"{recorded.path}:{recorded.line}: {str(item[0])[:40]!r} does not have the fields "
            "seedbed writes; record the trace again with seedbed run --trace"
        ) from None


__all__ = ["WORLD", "Diagram", "UsageError", "build"]
