"""Trace files: JSON Lines, readable by people and by `replay`, written and read as streams.

Line 1 is a header object: `{"seedbed": VERSION, "format": 2, "python":
"3.11.7", "seed": 42, "options": {...}, "target": "pkg.mod:main", "digest":
HEX}`. `format` is `TRACE_FORMAT` (what events and the hash mean): a trace of
another format is refused in one line, never replayed into a divergence.
`target` is there when the CLI recorded the run (`labelled`), so `seedbed
replay` refuses another target's trace; `digest` is `header_digest` of the
rest of the header, so an edited or damaged header is refused rather than
replayed (both keys are optional to the reader: older traces have neither).
Then one JSON array per event, e.g. `["time", 1500000000, 12]`, and last an end
object `{"end": EVENTS, "hash": HEX, "steps": N, "virtual_time_ns": T,
"failure": null | "Type: message"}`.
A run stopped by Ctrl-C (or SystemExit) ends with `{"end": EVENTS,
"interrupted": "KeyboardInterrupt"}`; a run killed outright leaves no end line.

Between events there may be annotation lines, `{"note": ["chunk", 7, 0,
12, "b'GET k'"]}`: what the simulator told the trace's `notes` (see
`trace`) after the event before it. They are not events: the end line does
not count them, a replay skips them, and `seedbed view` reads them to link a
send to its delivery. Files without them still replay and render.

Writing: `TraceWriter` writes each event as the run emits it, flushing every
`FLUSH_EVERY` events, to `.NAME.partial` beside the path, renamed over it
when the end line is written: a killed run leaves the partial file, up to
its last flush, and the path as it was.

Reading: `RecordedTrace` reads the header at once and the events one line at
a time as a replay consumes them, keeping only a few in memory; a line is at
most `MAX_LINE` bytes. A malformed line, or a file cut short, is recorded as
the trace's `defect` (a one-line `UsageError` naming file and line) and ends
the recorded events there: the replay stops at that point and reports the
defect, never a divergence. Nothing is ever unpickled: the only reader is
`json`, through `seedbed._core.safejson`.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from seedbed._core import safejson
from seedbed._core.contract import require
from seedbed._core.files import NotRegular, Replacement, WriteFailed, regular_file
from seedbed._core.trace import Event
from seedbed._core.validate import SEED_LIMIT
from seedbed._core.version import TRACE_FORMAT
from seedbed.errors import UsageError

MAX_LINE = 1 << 20  # bytes; seedbed's own lines are far shorter
FLUSH_EVERY = 1024  # events between flushes of a trace being written
_WINDOW = 4  # recent events a reader keeps (a replay looks at most one back)


_LABELS: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "trace_labels", default=None
)


@contextmanager
def labelled(**labels: Any) -> Iterator[None]:
    """Every trace written in the block carries `labels` (the CLI's `target`) in its header."""
    token = _LABELS.set({**(_LABELS.get() or {}), **labels})
    try:
        yield
    finally:
        _LABELS.reset(token)


def header_digest(header: dict[str, Any]) -> str:
    """16 hex digits of SHA-256 over the header without its digest, keys sorted."""
    body = {key: value for key, value in header.items() if key != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class TraceIncomplete(UsageError):
    """The trace was cut short (the recording run was interrupted or killed)."""


@dataclass(frozen=True)
class TraceFile:
    """The whole contents of a (small) trace file."""

    header: dict[str, Any]
    events: list[Event]
    end: dict[str, Any]

    @property
    def seed(self) -> int:
        return int(self.header["seed"])


# -- writing ----------------------------------------------------------------------


class TraceWriter:
    """A trace written as the run goes: header now, each event as it happens,
    the end line last. Installed as a `Trace`'s event list (it has `append`).

    The events go to a temporary file beside the path (`files.Replacement`),
    renamed over it when the end line is written: a symlink, FIFO or device
    at the path is refused before the run (never written through, never
    waited on), and a reader never sees half a trace where a whole one was
    (a run killed outright leaves its events in `.NAME.partial`).

    A write that fails (a full disk) must not surface inside the run, where
    the program's own `except OSError` could swallow it: the writer stops
    writing, the run goes on, and `finish` drops the temporary file (a cut
    trace would only mislead), leaves the path as it was and raises
    `WriteFailed` naming it.
    """

    def __init__(self, path: str | Path, header: dict[str, Any]) -> None:
        self.path = path
        self.failed: OSError | None = None
        header = {**header, **(_LABELS.get() or {})}
        header["digest"] = header_digest(header)
        try:
            self._file = Replacement(path, text=True)
        except NotRegular:
            raise  # a symlink, FIFO or device: refused, in one line naming it
        except OSError as exc:
            raise WriteFailed(path, "the trace", exc) from None
        self._out: IO[str] = self._file.file
        self._done = False
        self._unflushed = 0
        self.count = 0
        self._write(json.dumps(header, sort_keys=True) + "\n", flush=True)
        if self.failed is not None:
            self._give_up()

    def _write(self, line: str, *, flush: bool = False) -> None:
        if self.failed is not None:
            return
        try:
            self._out.write(line)
            if flush:
                self._out.flush()
        except OSError as exc:
            self.failed = exc

    def append(self, event: Event) -> None:
        self.count += 1
        if self.failed is not None:
            return
        self._unflushed += 1
        flush = self._unflushed >= FLUSH_EVERY
        if flush:
            self._unflushed = 0
        self._write(json.dumps(event, separators=(",", ":")) + "\n", flush=flush)

    def note(self, *fields: str | int | float) -> None:
        """An annotation after the last event (not an event: see the module doc)."""
        self._write(json.dumps({"note": fields}, separators=(",", ":")) + "\n")

    def __len__(self) -> int:
        return self.count

    def finish(self, end: dict[str, Any]) -> None:
        """Write the end line and put the file in place (idempotent); `WriteFailed`
        if any write failed, the path left as it was."""
        if self._done:
            return
        self._done = True
        self._write(json.dumps(end, sort_keys=True) + "\n")
        if self.failed is not None:
            self._give_up()
        try:
            self._file.commit()  # the last of the buffer goes to disk here
        except NotRegular:
            raise
        except OSError as exc:
            raise WriteFailed(self.path, "the trace", exc) from None

    def _give_up(self) -> None:
        """Drop the temporary file and say so (`WriteFailed`)."""
        self._done = True
        self._file.discard()
        assert self.failed is not None
        raise WriteFailed(self.path, "the trace", self.failed)


def write_trace(
    path: str | Path, header: dict[str, Any], events: list[Event], end: dict[str, Any]
) -> None:
    """Write a whole trace at once; the end line goes last, so a cut file is detectable."""
    writer = TraceWriter(path, header)
    for event in events:
        writer.append(event)
    writer.finish(end)


# -- reading ----------------------------------------------------------------------


def _bad(path: str | Path, line: int, what: str) -> UsageError:
    return UsageError(
        f"{path}:{line}: {what}; this is not a complete seedbed trace: "
        "record it again with seedbed.run(..., trace=PATH)"
    )


def _parse_line(path: str | Path, number: int, raw: bytes) -> Any:
    if len(raw) >= MAX_LINE and not raw.endswith(b"\n"):
        raise _bad(path, number, f"a line longer than {MAX_LINE} bytes")
    try:
        return safejson.loads(raw.decode("utf-8"), allow_nan=False)
    except UnicodeDecodeError:
        raise _bad(path, number, "not UTF-8 text") from None
    except safejson.BadJSON as exc:
        raise _bad(path, number, str(exc)) from None


def _check_header(path: str | Path, header: Any) -> dict[str, Any]:
    if not isinstance(header, dict) or "seedbed" not in header:
        raise _bad(path, 1, "the first line is not a seedbed trace header")
    _check_format(path, header)
    seed = header.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < SEED_LIMIT:
        raise _bad(path, 1, f"the header's seed must be an int in [0, 2**64), got {seed!r:.40}")
    if not isinstance(header.get("options"), dict):
        raise _bad(path, 1, "the header lacks the run options")
    if "target" in header and not isinstance(header["target"], str):
        raise _bad(path, 1, "the header's target is not a string")
    if "digest" in header and header["digest"] != header_digest(header):
        raise _bad(path, 1, "the header does not match its digest (it was edited or damaged)")
    return header


def _check_format(path: str | Path, header: dict[str, Any]) -> None:
    """A trace written under another `TRACE_FORMAT` is refused: its events and
    hash mean something else, so a replay could only diverge."""
    found = header.get("format", 1)
    if found == TRACE_FORMAT:
        return
    who = "an older" if isinstance(found, int) and found < TRACE_FORMAT else "another"
    raise UsageError(
        f"{path} was recorded by {who} seedbed ({header.get('seedbed')!s:.20}, trace format "
        f"{found!r:.20}; this one reads format {TRACE_FORMAT}): record the run again with "
        "this version"
    )


def check_target(path: str | Path, header: dict[str, Any], target: str) -> None:
    """Refuse to replay a trace the CLI recorded for another target."""
    recorded = header.get("target")
    if recorded is not None and recorded != target:
        raise UsageError(
            f"{path} was recorded for target {recorded!r:.200}, not {target!r:.200}: "
            "replay it with that target, or record this one with `seedbed run --trace`"
        )


def _check_event(path: str | Path, number: int, value: list[Any]) -> Event:
    if not value or not isinstance(value[0], str):
        raise _bad(path, number, "expected an event array starting with its kind")
    for field in value:
        if not isinstance(field, str | int | float) or isinstance(field, bool):
            raise _bad(path, number, f"event field {field!r:.40} is not a string or number")
    return tuple(value)


class RecordedEvents:
    """A recorded trace's events, read from disk as they are asked for.

    Enough of a sequence for `Trace(expected=...)`: `len()` is the number of
    events read so far, reading one event past the last one asked for (so
    "is there an event at the next index?" is answered without reading on),
    and indexing reads forward. Only the last few events stay in memory.
    """

    def __init__(self, recorded: RecordedTrace) -> None:
        self._recorded = recorded
        self._window: dict[int, Event] = {}
        self._asked = -1
        self.read = 0

    def __len__(self) -> int:
        while self.read <= self._asked + 1 and self._pull():
            pass
        return self.read

    def __getitem__(self, index: int) -> Event:
        while index >= self.read:
            if not self._pull():
                raise IndexError(index)
        if index not in self._window:
            raise IndexError(f"event {index} is no longer in memory")
        self._asked = max(self._asked, index)
        return self._window[index]

    def _pull(self) -> bool:
        event = self._recorded.next_event()
        if event is None:
            return False
        self._window[self.read] = event
        self._window.pop(self.read - _WINDOW, None)
        self.read += 1
        require(len(self._window) <= _WINDOW, "the replay window stays bounded")
        return True


class RecordedTrace:
    """A trace file opened for replay: the header now, the events as a stream."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        try:
            regular_file(path)  # /dev/zero or a FIFO would read (or block) forever
            self._file: IO[bytes] = open(path, "rb")  # noqa: SIM115 (closed at the end line)
        except NotRegular as exc:
            raise UsageError(f"{exc}") from None
        except OSError as exc:
            raise UsageError(f"{path}: cannot read the trace file ({exc.strerror})") from None
        first = self._file.readline(MAX_LINE)
        if not first.strip():
            self._file.close()
            raise _bad(path, 1, "the file is empty")
        try:
            self.header = _check_header(path, _parse_line(path, 1, first))
        except UsageError:
            self._file.close()
            raise
        self.line = 1
        self.count = 0  # events read so far
        self.defect: UsageError | None = None
        self._end: dict[str, Any] | None = None
        # Called with each annotation line's fields as it is passed (a viewer's).
        self.on_note: Callable[[Event], None] | None = None
        self.events = RecordedEvents(self)

    @property
    def seed(self) -> int:
        return int(self.header["seed"])

    @property
    def end(self) -> dict[str, Any]:
        """The end line (reading the rest of the file first); raises the defect if any."""
        while self.next_event() is not None:
            pass
        self.raise_if_defective()
        require(self._end is not None, "a trace read without defect has its end line")
        assert self._end is not None  # for mypy: require does not narrow
        return self._end

    def raise_if_defective(self) -> None:
        if self.defect is not None:
            raise self.defect

    def next_event(self) -> Event | None:
        """The next event, or None at the end line, at a defect, or at a cut."""
        if self._file.closed:
            return None
        try:
            value = self._next_value()
            while isinstance(value, dict) and "note" in value and "end" not in value:
                self._take_note(value["note"])
                value = self._next_value()
            if isinstance(value, list):
                event = _check_event(self.path, self.line, value)
                self.count += 1
                return event
            self._end = self._check_end(value)
        except UsageError as exc:
            self.defect = exc
        self._file.close()
        return None

    def _next_value(self) -> Any:
        raw = self._file.readline(MAX_LINE)
        self.line += 1
        if not raw:
            self.line -= 1  # name the last line there is
            raise self._cut("the file ends without its end line (truncated)")
        return _parse_line(self.path, self.line, raw)

    def _take_note(self, fields: Any) -> None:
        if not isinstance(fields, list):
            raise _bad(self.path, self.line, "an annotation's note must be an array")
        note = _check_event(self.path, self.line, fields)
        if self.on_note is not None:
            self.on_note(note)

    def _check_end(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict) or "end" not in value:
            raise _bad(self.path, self.line, "expected an event array or the end line")
        if self._file.readline(1):
            raise _bad(self.path, self.line, "unexpected object in the middle of the events")
        if value["end"] != self.count:
            raise _bad(
                self.path,
                self.line,
                f"end line counts {value['end']!r:.30} events, found {self.count}",
            )
        if value.get("interrupted"):
            raise self._cut(f"the recording was interrupted ({value['interrupted']!r:.60})")
        return value

    def _cut(self, why: str) -> TraceIncomplete:
        return TraceIncomplete(
            f"{self.path}:{self.line}: the trace is incomplete: {why}, after event "
            f"{self.count}; it cannot be replayed to the end: record the run again"
        )

    def close(self) -> None:
        self._file.close()


def read_trace(path: str | Path) -> TraceFile:
    """Read and validate a whole trace file; any defect is a one-line `UsageError`."""
    recorded = RecordedTrace(path)
    events: list[Event] = []
    while (event := recorded.next_event()) is not None:
        events.append(event)
    return TraceFile(recorded.header, events, recorded.end)
