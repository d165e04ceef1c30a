"""Reading the histories of the collection checkers: Jepsen EDN or seedbed JSON Lines.

Jepsen writes one operation map per line::

    {:type :invoke, :f :add, :value 3, :process 0, :time 1573000, :index 0}
    {:type :ok, :f :read, :value #{1 2 3}, :process 1, :time 1892000, :index 7}

``:f`` names the function (its keyword without the colon: ``add``),
``:value`` is the argument on an invocation and the result on a completion;
vectors and sets become tuples (in the order written), maps frozen maps,
keywords strings that keep their colon. The nemesis's operations (process
``:nemesis``) are not the clients' and are skipped. ``:time`` (nanoseconds)
is kept, as seconds, for people; real-time order is the order of the lines.
``;`` starts a comment line, commas are whitespace.

Anything else starting with ``{`` is read as seedbed's JSON Lines
(`parse_jsonl`). The format is recognized from the first line that is not
blank or a comment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seedbed.check._history import (
    EVENT_TYPES,
    Event,
    EventType,
    History,
    HistoryError,
    _freeze,
    history_text,
    parse_jsonl,
)
from seedbed.check._txn_history import _read_plain_map, read_edn_line


def _op_event(obj: Any, source: str, line: int) -> Event | None:
    """The event of one EDN operation map; None for the nemesis's."""
    if not isinstance(obj, dict):
        raise HistoryError(source, line, "expected an operation map {:type ... :f ... :value ...}")
    process = obj.get(":process")
    if process == ":nemesis":
        return None
    if isinstance(process, tuple | list | dict):
        raise HistoryError(source, line, ":process must be a number or keyword")
    kind = obj.get(":type")
    if not isinstance(kind, str) or kind[1:] not in EVENT_TYPES:
        raise HistoryError(source, line, f"missing or unknown :type {kind!r}")
    f = obj.get(":f")
    if not isinstance(f, str) or not f.lstrip(":"):
        raise HistoryError(source, line, f"missing or odd :f {f!r}; name the function (:add)")
    stamp = obj.get(":time")
    time = stamp / 1e9 if isinstance(stamp, int | float) and not isinstance(stamp, bool) else None
    etype: EventType = kind[1:]  # type: ignore[assignment]
    return Event(process, etype, f.lstrip(":"), _freeze(obj.get(":value")), time, line)


def parse_edn_ops(text: str, source: str = "<edn>") -> History:
    """Read a Jepsen EDN history of single operations (one map per line)."""
    events = []
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith(";"):
            continue
        try:
            obj = _read_plain_map(stripped)
            if obj is None:
                obj = read_edn_line(stripped, source, number, sets=True)
            event = _op_event(obj, source, number)
        except RecursionError:  # a value nested thousands deep: refused, not a crash
            raise HistoryError(source, number, "a value nested too deeply to read") from None
        if event is not None:
            events.append(event)
    return History(events, source)


def parse_op_history(text: str, source: str = "<history>") -> History:
    """A history in Jepsen EDN or JSON Lines, recognized from its first line."""
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith(";"):
            continue
        if stripped.startswith("{:") or stripped.startswith("{ :"):
            return parse_edn_ops(text, source)
        if stripped.startswith("{"):
            break
        raise HistoryError(
            source, number, "not a Jepsen EDN or JSON Lines history (one operation map per line)"
        )
    return parse_jsonl(text, source)


def read_op_history(path: str | Path) -> History:
    """Read a history file (Jepsen EDN or JSON Lines) for the collection checkers."""
    return parse_op_history(history_text(path), str(Path(path)))
