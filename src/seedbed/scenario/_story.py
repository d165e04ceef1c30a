"""The story of a failed run: the faults and world events that touched it, in time order.

A failure report leads with what happened to the program, not with the
plumbing: which datagram the network lost, which link a partition cut and
what it dropped there, which disk corrupted which read. Two sources feed it:

- the nemesis's fault records (`seedbed.faults._record`): every fault it
  injected, its target, start, end and what it did;
- the world's own events, read from the trace of the seed's second run (the
  one a report already makes for its last events) by an `EventTap`: what the
  network lost or duplicated, the cuts and crashes a test made itself (an
  `f(seed)` target has no nemesis), disk faults and failpoints.

Each becomes an entry `{"t", "end", "text", "nodes", "effective"}` (JSON),
and `select` keeps those that touched the failure's subjects (the failing
node and the nodes its message names) ahead of the rest.
"""

from __future__ import annotations

import contextlib
import gc
import io
import logging
import re
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from seedbed._core.trace import Event, Field
from seedbed.aio._fold import muted
from seedbed.faults._record import describe_did

Entry = dict[str, Any]
TAIL = 200  # raw events the tap keeps for the report's last events
WORLD_MAX = 2000  # world events it keeps (the latest), for the story

_DISK_DRAW = re.compile(
    r"^disk (?P<node>\S+) (?P<what>corrupt read|read error|write error|fsync error|misdirect) "
    r"(?P<path>.+)$"
)
_DISK_WORDS = {
    "corrupt read": "a read of {path} came back corrupted",
    "read error": "a read of {path} failed (EIO)",
    "write error": "a write to {path} failed (EIO)",
    "fsync error": "an fsync of {path} failed",
    "misdirect": "a write to {path} landed at another sector",
}


class EventTap:
    """A trace's `events` for a report's second run: keeps the last `TAIL` events
    (time-stamped) and the world events worth telling, as entries."""

    def __init__(self, nemesis: bool) -> None:
        self.tail: deque[tuple[int, Event]] = deque(maxlen=TAIL)
        self.world: deque[Entry] = deque(maxlen=WORLD_MAX)
        self.nemesis = nemesis  # its records tell the faults it made: not told twice
        self.now = 0
        self._cut: dict[tuple[str, str], list[Any]] = {}  # link -> [since, state, dropped]
        self._crashed: set[str] = set()
        self.nodes: dict[str, None] = {}  # the nodes started, in order

    def append(self, event: Event) -> None:
        kind = event[0] if event else ""
        if kind == "time" and len(event) in (2, 3) and isinstance(event[1], int):
            self.now = event[1]  # (a time jump: its step follows, since trace format 2)
            return
        if kind == "at" and len(event) == 3 and isinstance(event[2], int):
            self.now = event[2]  # the next events' step and time
            return
        self.tail.append((self.now, event))
        told = self._tell(str(kind), event)
        if told is not None:
            text, nodes = told
            self.world.append(_entry(self.now / 1e9, None, text, nodes))

    def _tell(self, kind: str, event: Event) -> tuple[str, tuple[str, ...]] | None:
        """The world event in words and the nodes it touched, or None."""
        fields = [str(field) for field in event[1:]]
        if kind == "net.lost" and len(fields) == 4:
            src, dst, port, size = fields
            return f"datagram {src}->{dst} lost by the network (port {port}, {size} bytes)", (
                src, dst,
            )  # fmt: skip
        if kind == "net.sent" and len(fields) == 5 and fields[4] == "2":
            src, dst, port, size, _ = fields
            return f"datagram {src}->{dst} duplicated by the network (port {port})", (src, dst)
        if kind == "net.timeout" and len(fields) == 2:
            src, dst = fields
            return f"stream {src}->{dst} reset: its bytes waited at a cut link too long", (
                src, dst,
            )  # fmt: skip
        if kind == "failpoint" and fields:
            return f"failpoint raised: {fields[0]}", ()
        if kind == "operation crash" and len(fields) == 4:
            node, op, phase, count = fields
            return f"{node} crashed {phase} its {op} (#{count})", (node,)
        if kind == "draw" and len(event) == 4 and event[3] == 1:
            return _disk_fault(str(event[2]))
        if kind == "start" and fields:
            self.nodes[fields[0]] = None
        if not self.nemesis:
            return self._verb(kind, fields)
        return None

    def _verb(self, kind: str, fields: list[str]) -> tuple[str, tuple[str, ...]] | None:
        """What a test did itself (no nemesis): cuts, holds, crashes, pauses."""
        if kind == "net.link" and len(fields) == 3:
            self._link(fields[0], fields[1], fields[2])
        elif kind == "net.dropped" and len(fields) == 4:
            cut = self._cut.get((fields[0], fields[1]))
            if cut is not None:
                cut[2] += 1
        elif kind == "crash" and fields:
            self._crashed.add(fields[0])
            return f"{fields[0]} crashed", (fields[0],)
        elif kind == "start" and fields:
            self.nodes[fields[0]] = None
            if fields[0] in self._crashed:
                self._crashed.discard(fields[0])
                return f"{fields[0]} restarted", (fields[0],)
        elif kind == "pause" and len(fields) == 2:
            return f"{fields[0]} paused for {int(fields[1]) / 1e9:.3f}s", (fields[0],)
        return None

    def _link(self, src: str, dst: str, state: str) -> None:
        key = (src, dst)
        if state != "open":
            self._cut.setdefault(key, [self.now, state, 0])
            return
        cut = self._cut.pop(key, None)
        if cut is None:
            return
        since, how, dropped = cut
        self.world.append(_link_entry(since, self.now, src, dst, how, dropped))

    def open_cuts(self) -> list[Entry]:
        """The test's cuts and holds still in force at the end of the run."""
        return [
            _link_entry(since, None, src, dst, how, dropped)
            for (src, dst), (since, how, dropped) in self._cut.items()
        ]

    def entries(self) -> list[Entry]:
        """The world events told, in time order, a link's two directions cut (or
        held) over the same time told once."""
        return _pair_links(sorted([*self.world, *self.open_cuts()], key=lambda e: e["t"]))


def _pair_links(entries: list[Entry]) -> list[Entry]:
    paired: list[Entry] = []
    for entry in entries:
        twin = next((e for e in paired[-4:] if _twins(e, entry)), None)
        if twin is None:
            paired.append(entry)
            continue
        a, b = twin["nodes"]
        twin["text"] = twin["text"].replace(f"link {a}->{b}", f"link {a}<->{b}", 1)
        twin["effective"] = twin["effective"] or entry["effective"]
        if entry["effective"] and ": " in entry["text"]:
            twin["text"] += f"; {b}->{a}{entry['text'].split(':', 1)[1].split(';')[0]}"
    return paired


def _twins(first: Entry, second: Entry) -> bool:
    """Two entries of one link's two directions, cut or held over the same time."""
    if not (first["text"].startswith("link ") and second["text"].startswith("link ")):
        return False
    if (first["t"], first["end"]) != (second["t"], second["end"]):
        return False
    same_verb: bool = first["text"].split(" ")[2] == second["text"].split(" ")[2]
    return same_verb and list(first["nodes"]) == list(second["nodes"])[::-1]


def _disk_fault(reason: str) -> tuple[str, tuple[str, ...]] | None:
    found = _DISK_DRAW.match(reason)
    if found is None:
        return None
    node = found["node"]
    said = _DISK_WORDS[found["what"]].format(path=found["path"])
    return f"{node}'s disk: {said}", (node,)


def _link_entry(since: int, until: int | None, src: str, dst: str, how: str, dropped: int) -> Entry:
    verb = "cut (partition)" if how == "dropped" else "held"
    did = f": {dropped} datagram{'s' if dropped != 1 else ''} dropped" if dropped else ""
    if until is None:
        did += "; still in force"
    return _entry(since / 1e9, None if until is None else until / 1e9,
                  f"link {src}->{dst} {verb}{did}", (src, dst), bool(dropped))  # fmt: skip


def _entry(
    start: float, end: float | None, text: str, nodes: Sequence[str], effective: bool = True
) -> Entry:
    return {"t": start, "end": end, "text": text, "nodes": list(nodes), "effective": effective}


def record_entries(records: Iterable[dict[str, Any]]) -> list[Entry]:
    """The nemesis's fault records as story entries."""
    entries = []
    for record in records:
        kind = str(record["kind"]).replace("_", " ")
        text = f"{kind} {record['target']}".rstrip()
        if record.get("note"):
            text += f" ({record['note']})"
        did = describe_did(record.get("did") or {})
        if did:
            text += f": {did}"
        where = record.get("hit") or []
        if where:
            text += f" (on {', '.join(where)})"
        if record.get("lasting") and record.get("end") is None:
            text += "; still in force"
        if not record.get("effective"):
            text += "; changed nothing"
        end = record.get("end")
        entries.append(_entry(record["start"], end, text, record.get("nodes") or (),
                              bool(record.get("effective"))))  # fmt: skip
    return entries


def subjects_of(message: str, node: str | None, names: Sequence[str]) -> list[str]:
    """The nodes a failure is about: its failing node, then those its message names."""
    words = set(re.findall(r"[\w.-]+", message))
    found = [node] if node else []
    found += [name for name in names if name in words and name != node]
    return found


def select(entries: Sequence[Entry], subjects: Sequence[str], keep: int) -> tuple[list[Entry], int]:
    """At most `keep` entries in time order: the effective ones touching `subjects`
    first (the latest, if too many), then the other effective ones, then the
    rest; and how many were left out."""
    ranked = sorted(range(len(entries)), key=lambda i: (_rank(entries[i], subjects), -i))
    chosen = sorted(ranked[:keep])
    shown = sorted((entries[i] for i in chosen), key=lambda e: e["t"])
    return shown, len(entries) - len(shown)


def _rank(entry: Entry, subjects: Sequence[str]) -> int:
    touches = not subjects or any(node in subjects for node in entry["nodes"])
    if entry["effective"]:
        return 0 if touches else 1
    return 2 if touches else 3


def entry_line(entry: Entry, subjects: Sequence[str]) -> str:
    """'t=1.689769s-4.246953s partition w3->coord: 24 datagrams dropped', marked
    with '*' when it touched one of the failure's subjects."""
    when = f"t={entry['t']:.6f}s"
    if entry["end"] is not None:
        when += f"-{entry['end']:.6f}s"
    mark = "*" if subjects and any(node in subjects for node in entry["nodes"]) else " "
    return f"{mark} {when} {entry['text']}"


def describe_tail(tail: Iterable[tuple[int, Sequence[Field]]], keep: int, draws: bool) -> list[str]:
    """The last `keep` events in words, stamped with their virtual time; without
    `draws`, entropy draws and the random module's reseeding are left out."""
    lines = []
    for now, event in tail:
        kind = event[0] if event else ""
        if not draws and kind in ("draw", "unseed"):
            continue
        if kind == "draw" and len(event) == 4:
            text = f"draw {event[1]}: {event[2]} = {event[3]}"
        else:
            text = " ".join(str(field) for field in event)
        lines.append(f"t={now / 1e9:.6f}s {text}")
    return lines[-keep:]


@contextlib.contextmanager
def hushed() -> Iterator[None]:
    """Around a report's second run of a seed: what it prints and logs was shown
    the first time (the program's output, the tasks its failure left, collected
    with "exception was never retrieved"), so none of it is shown again."""
    loggers = [logging.getLogger(name) for name in ("asyncio", "seedbed")]
    before = [logger.disabled for logger in loggers]
    for logger in loggers:
        logger.disabled = True
    try:
        with (
            muted(),
            contextlib.redirect_stdout(io.StringIO()),
            contextlib.redirect_stderr(io.StringIO()),
        ):
            yield
            gc.collect()  # while still hushed: what the run left goes now
    finally:
        for logger, was in zip(loggers, before, strict=True):
            logger.disabled = was
