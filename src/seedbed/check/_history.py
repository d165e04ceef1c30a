"""Histories: what the clients of a system saw, one event at a time.

A history is a list of events in real-time order. Each event belongs to a
*process* (one client thread of control, which does one thing at a time) and
is one of:

- ``invoke``: the process starts an operation ``f`` with argument ``value``;
- ``ok``: the operation completed, returning ``value``;
- ``fail``: the operation completed and certainly had no effect;
- ``info``: the outcome is unknown (a timeout, a crash). The operation may take
  effect at any moment after its invocation, or never. An operation still open
  at the end of the history is treated the same way.

The order of events in the list is the real-time order the checker relies on.
``time`` is carried along for people (and the recorder fills it from the
simulation's virtual clock), but never reordered by: in a simulation several
events can share a virtual instant while still happening one after another.

On disk a history is JSON Lines, one event per line::

    {"process": 0, "type": "invoke", "f": "write", "value": 3, "time": 0.25}
    {"process": 0, "type": "ok", "f": "write", "value": 3, "time": 0.5}

JSON arrays are read back as tuples so that values can be compared, hashed and
used as model states.
"""

from __future__ import annotations

import asyncio
import json
import re
import weakref
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Final, Literal, TypeAlias

from seedbed._core import safejson
from seedbed._core.files import NotRegular, regular_file
from seedbed._core.identity import current_node
from seedbed._core.trace import Trace
from seedbed.errors import UsageError

EventType: TypeAlias = Literal["invoke", "ok", "fail", "info"]
Status: TypeAlias = Literal["ok", "fail", "info"]
EVENT_TYPES: Final = ("invoke", "ok", "fail", "info")


class HistoryError(UsageError):
    """A history is malformed. ``str()`` is one line naming the source and line."""

    def __init__(self, source: str, line: int | None, reason: str) -> None:
        self.source = source
        self.line = line
        self.reason = reason
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {reason}")


def history_text(path: str | Path) -> str:
    """A history file's text, read by every history reader alike: a device, FIFO
    or folder, text that is not UTF-8 or a read that fails is a `HistoryError`."""
    path = Path(path)
    try:
        regular_file(path)  # /dev/zero or a FIFO would read (or block) forever
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise HistoryError(str(path), None, f"not UTF-8 text ({exc.reason})") from None
    except NotRegular:
        raise HistoryError(
            str(path), None, "not a regular file (a device, FIFO or folder)"
        ) from None
    except OSError as exc:
        raise HistoryError(str(path), None, exc.strerror or "cannot read") from None


@dataclass(frozen=True, slots=True)
class Event:
    """One thing a client saw: the start or the end of one of its operations.

    ``line`` is where the event was read from (1-based), kept so that errors
    found later, when events are paired into operations, can still point there.
    """

    process: Hashable
    type: EventType
    f: str
    value: Any = None
    time: float | None = None
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON object (without the source line)."""
        obj: dict[str, Any] = {"process": self.process, "type": self.type, "f": self.f}
        obj["value"] = self.value
        if self.time is not None:
            obj["time"] = self.time
        return obj


@dataclass(frozen=True, slots=True)
class Operation:
    """An invocation paired with its completion, the unit the checker orders.

    ``call`` and ``ret`` are indices into the history's events: they give the
    real-time interval. ``ret`` is None when the outcome is unknown (``info``,
    or still open at the end), in which case ``result`` is None too.
    """

    id: int
    process: Hashable
    f: str
    value: Any
    result: Any
    status: Status
    call: int
    ret: int | None
    call_time: float | None = None
    ret_time: float | None = None

    @property
    def known(self) -> bool:
        """True when the operation completed and its result is known."""
        return self.status == "ok"

    def __str__(self) -> str:
        outcome = "?" if self.status == "info" else repr(self.result)
        return f"#{self.id} p{self.process} {self.f}({self.value!r}) -> {outcome}"


class History(Sequence[Event]):
    """An immutable, validated list of events in real-time order.

    Construction pairs every completion with the open invocation of its
    process and raises `HistoryError` on the first event that cannot be
    paired, so a `History` always yields well-formed operations.
    """

    __slots__ = ("_events", "_noted_as", "_operations", "source")

    def __init__(self, events: Iterable[Event], source: str = "<history>") -> None:
        self._events: tuple[Event, ...] = tuple(_hashable(event) for event in events)
        self.source = source
        self._operations = _pair(self._events, source)
        # The number its `Recorder` goes by in this run's trace notes (see
        # `note_check`); None for a history read from a file.
        self._noted_as: tuple[Callable[..., None], int] | None = None

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, index: Any) -> Any:
        return self._events[index]

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)

    def __repr__(self) -> str:
        return f"History({self.source!r}, {len(self._events)} events)"

    def operations(self) -> tuple[Operation, ...]:
        """Every operation, in invocation order, failed ones included."""
        return self._operations

    def to_jsonl(self) -> str:
        """The history as JSON Lines text (one event per line)."""
        return "".join(_dumps(e) + "\n" for e in self._events)


def _dumps(event: Event) -> str:
    return json.dumps(event.to_json(), separators=(", ", ": "), sort_keys=False)


def _pair(events: Sequence[Event], source: str) -> tuple[Operation, ...]:
    open_ops: dict[Hashable, tuple[int, Event]] = {}
    done: dict[int, Operation] = {}
    calls: list[int] = []
    for index, event in enumerate(events):
        if event.type not in EVENT_TYPES:
            raise HistoryError(source, event.line, f"unknown event type {event.type!r}")
        if event.type == "invoke":
            if event.process in open_ops:
                raise HistoryError(
                    source,
                    event.line,
                    f"process {event.process!r} invoked {event.f!r} while its "
                    "previous operation is still open",
                )
            open_ops[event.process] = (index, event)
            calls.append(index)
            continue
        opened = open_ops.pop(event.process, None)
        if opened is None:
            raise HistoryError(
                source,
                event.line,
                f"{event.type} for process {event.process!r} with no open invocation",
            )
        call, invoke = opened
        if event.f != invoke.f:
            raise HistoryError(
                source,
                event.line,
                f"{event.type} {event.f!r} completes an invocation of {invoke.f!r}",
            )
        done[call] = _operation(invoke, call, event, index)
    ops = []
    for number, call in enumerate(calls):
        op = done.get(call) or _operation(events[call], call, None, None)
        ops.append(_renumber(op, number))
    return tuple(ops)


def _operation(invoke: Event, call: int, end: Event | None, ret: int | None) -> Operation:
    if end is None or end.type == "info":
        return Operation(
            0, invoke.process, invoke.f, invoke.value, None, "info", call, None, invoke.time, None
        )
    status: Status = "ok" if end.type == "ok" else "fail"
    return Operation(
        0,
        invoke.process,
        invoke.f,
        invoke.value,
        end.value,
        status,
        call,
        ret,
        invoke.time,
        end.time,
    )


def _renumber(op: Operation, number: int) -> Operation:
    return Operation(
        number,
        op.process,
        op.f,
        op.value,
        op.result,
        op.status,
        op.call,
        op.ret,
        op.call_time,
        op.ret_time,
    )


# --- JSON Lines -------------------------------------------------------------


class FrozenDict(dict):  # type: ignore[type-arg]
    """A JSON object (or EDN map) as a value: equal to the dict it was read as,
    but hashable and unchangeable, so models can keep it in their states."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def _immutable(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a history value cannot be changed")

    __setitem__ = __delitem__ = __ior__ = _immutable
    clear = pop = popitem = setdefault = update = _immutable


def _freeze(value: Any) -> Any:
    """Lists become tuples, dicts `FrozenDict`s and sets frozensets, recursively,
    so every value can be compared, hashed and used as a model state."""
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict) and not isinstance(value, FrozenDict):
        return FrozenDict({_freeze(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, set):
        return frozenset(_freeze(v) for v in value)
    return value


def _hashable(event: Event) -> Event:
    """The event, with its value and process frozen if they were not hashable
    (a `Recorder` keeps the dicts and lists client code handed it)."""
    try:
        hash((event.process, event.value))
        return event
    except TypeError:
        process, value = _freeze(event.process), _freeze(event.value)
    return Event(process, event.type, event.f, value, event.time, event.line)


def _event_from_json(obj: Any, source: str, line: int) -> Event:
    if not isinstance(obj, dict):
        raise HistoryError(source, line, "expected a JSON object")
    for key in ("process", "type", "f"):
        if key not in obj:
            raise HistoryError(source, line, f"missing field {key!r}")
    kind, f, process = obj["type"], obj["f"], _freeze(obj["process"])
    if kind not in EVENT_TYPES:
        raise HistoryError(source, line, f"unknown event type {kind!r}")
    if not isinstance(f, str):
        raise HistoryError(source, line, "field 'f' must be a string")
    if not isinstance(process, Hashable) or isinstance(process, dict):
        raise HistoryError(source, line, "field 'process' must be a number or string")
    time = obj.get("time")
    if time is not None and (isinstance(time, bool) or not isinstance(time, int | float)):
        raise HistoryError(source, line, "field 'time' must be a number")
    return Event(process, kind, f, _freeze(obj.get("value")), time, line)


def parse_jsonl(text: str, source: str = "<jsonl>") -> History:
    """Read a history written as JSON Lines (the `Recorder`'s format)."""
    events = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = safejson.loads(raw)
        except safejson.BadJSON as exc:
            raise HistoryError(source, number, f"invalid JSON: {exc}") from None
        events.append(_event_from_json(obj, source, number))
    return History(events, source)


def read_jsonl(path: str | Path) -> History:
    """Read a JSON Lines history file."""
    path = Path(path)
    return parse_jsonl(path.read_text(encoding="utf-8"), str(path))


# --- Recording ----------------------------------------------------------------


def _loop_clock() -> float | None:
    """The running event loop's time: virtual time inside a seedbed simulation."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return None


def _loop_notes() -> Callable[..., None] | None:
    """Where the running seedbed loop's trace takes notes (a trace file is being
    written), else None; see `seedbed._core.trace`."""
    try:
        trace = getattr(asyncio.get_running_loop(), "trace", None)
    except RuntimeError:
        return None
    return trace.notes if isinstance(trace, Trace) else None  # another loop's is not ours


# How many recorders have taken notes so far, per trace file being written (its
# `notes` callable, alive while the run is): a recorder's number names it in
# the notes, so the viewer can tell two recorders' events apart.
_RECORDERS: weakref.WeakKeyDictionary[Callable[..., None], int] = weakref.WeakKeyDictionary()

_EXPLANATION_LIMIT = 4000
_TIMING = re.compile(r" \(([^()]*?)(?:, )?\d+\.\d+ s\)$")


def note_check(
    history: History, checker: str, explain: Callable[[], str], calls: Iterable[int]
) -> None:
    """Note, for `seedbed view`, that `checker` refused `history`, why
    (`explain()`) and which operations (by their invocation's event index) it blames.

    Only for a history recorded in this run (its recorder's events are in the
    notes), so the explanation costs nothing elsewhere; outside the hash,
    like every note. The explanation's wall-clock timing is left out, so the
    trace file stays the same from run to run.
    """
    notes, noted = _loop_notes(), history._noted_as
    if notes is None or noted is None or noted[0] is not notes:
        return
    try:
        explanation = explain()
    except Exception as exc:  # a value whose repr fails: the check's verdict still stands
        explanation = f"{checker}: the history was refused (its explanation failed: {exc!r:.200})"
    first, _, rest = explanation.partition("\n")
    first = _TIMING.sub(lambda m: f" ({m[1]})" if m[1] else "", first)
    text = (first + ("\n" + rest if rest else ""))[:_EXPLANATION_LIMIT]
    blamed = ",".join(str(call) for call in sorted(set(calls)))
    notes("check", checker, noted[1], text, blamed)


def _short(value: Any) -> str:
    """The value as a note shows it: its repr, cut; one whose repr fails (an int
    past the interpreter's digit limit) is named by its type, never raised."""
    try:
        text = repr(value)
    except Exception:
        return f"<{type(value).__name__} that cannot be shown>"
    return text if len(text) <= 80 else text[:77] + "..."


class Recorder:
    """Logs what client code saw, for checking afterwards.

    Client code inside a simulation calls `invoke` before sending a request
    and `ok`, `fail` or `info` once it knows the outcome. Timestamps come from
    ``clock`` (default: the running event loop's time, which is virtual time
    in a seedbed run). When ``sink`` is given (a path or a text file), every
    event is also written there as a JSON line as it happens, so a crash still
    leaves a readable history. `operation` is a context manager that records
    ``info`` when the block raises, the honest outcome of a request whose
    reply never came.
    """

    def __init__(
        self,
        sink: str | Path | IO[str] | None = None,
        *,
        clock: Callable[[], float | None] = _loop_clock,
    ) -> None:
        self._events: list[Event] = []
        self._open: dict[Hashable, str] = {}
        self._noted: tuple[Callable[..., None], int] | None = None  # (notes, number there)
        self._clock = clock
        self._owned: IO[str] | None = None
        self._sink: IO[str] | None
        if isinstance(sink, str | Path):
            # Kept open across calls on purpose; `close` (or `with`) releases it.
            self._owned = self._sink = Path(sink).open("w", encoding="utf-8")  # noqa: SIM115
        else:
            self._sink = sink

    def _log(self, process: Hashable, kind: EventType, f: str, value: Any) -> None:
        event = Event(process, kind, f, value, self._clock())
        self._events.append(event)
        notes = _loop_notes()
        if notes is not None:  # for `seedbed view`: the operation on its client's lane
            number, index = self._number_in(notes), len(self._events) - 1
            notes(
                "op", kind, _short(process), f, _short(value), current_node() or "", number, index
            )
        if self._sink is not None:
            self._sink.write(_dumps(event) + "\n")
            self._sink.flush()

    def _number_in(self, notes: Callable[..., None]) -> int:
        """This recorder's number in the notes of the trace being written."""
        if self._noted is None or self._noted[0] is not notes:
            number = _RECORDERS.get(notes, 0)
            _RECORDERS[notes] = number + 1
            self._noted = (notes, number)
        return self._noted[1]

    def invoke(self, process: Hashable, f: str, value: Any = None) -> None:
        """Record that ``process`` starts operation ``f(value)``."""
        if process in self._open:
            raise UsageError(f"process {process!r} already has an open operation")
        self._open[process] = f
        self._log(process, "invoke", f, value)

    def _complete(self, process: Hashable, kind: EventType, value: Any) -> None:
        f = self._open.pop(process, None)
        if f is None:
            raise UsageError(f"process {process!r} has no open operation to complete")
        self._log(process, kind, f, value)

    def ok(self, process: Hashable, value: Any = None) -> None:
        """Record that the open operation of ``process`` returned ``value``."""
        self._complete(process, "ok", value)

    def fail(self, process: Hashable, value: Any = None) -> None:
        """Record that the open operation of ``process`` certainly had no effect."""
        self._complete(process, "fail", value)

    def info(self, process: Hashable, value: Any = None) -> None:
        """Record that the outcome of the open operation of ``process`` is unknown."""
        self._complete(process, "info", value)

    def operation(self, process: Hashable, f: str, value: Any = None) -> _OpenOperation:
        """Invoke now; complete through the returned handle, or ``info`` on error."""
        self.invoke(process, f, value)
        return _OpenOperation(self, process)

    @property
    def history(self) -> History:
        """Everything recorded so far (open operations count as unknown)."""
        history = History(self._events, "<recorder>")
        if self._noted is not None and self._noted[0] is _loop_notes():
            history._noted_as = self._noted  # its events are in this run's notes
        return history

    def close(self) -> None:
        """Close the sink file if the recorder opened it."""
        if self._owned is not None:
            self._owned.close()
            self._owned = None

    def __enter__(self) -> Recorder:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _OpenOperation:
    """Handle of one in-flight operation; see `Recorder.operation`."""

    def __init__(self, recorder: Recorder, process: Hashable) -> None:
        self._recorder = recorder
        self._process = process
        self._done = False

    def ok(self, value: Any = None) -> None:
        self._done = True
        self._recorder.ok(self._process, value)

    def fail(self, value: Any = None) -> None:
        self._done = True
        self._recorder.fail(self._process, value)

    def info(self, value: Any = None) -> None:
        self._done = True
        self._recorder.info(self._process, value)

    def __enter__(self) -> _OpenOperation:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._done:
            self.info(None if exc_type is None else exc_type.__name__)
