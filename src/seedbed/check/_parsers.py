"""Readers for histories recorded outside seedbed, and format detection.

Two foreign formats, both from Jepsen-style test harnesses:

**Jepsen log** (etcd), one event per line, fields separated by tabs or runs of
spaces after the logger prefix::

    INFO  jepsen.util - 3	:invoke	:cas	[3 0]
    INFO  jepsen.util - 3	:fail	:cas	[3 0]

Process number, event type, function (``:read``, ``:write``, ``:cas``) and
value (``nil``, an integer, ``[from to]`` or a keyword like ``:timed-out``).
A ``:fail`` of a cas is a compare-and-set that *ran* and found another value:
it is read as an ``ok`` event with result False, because that observation
constrains the register (this is how Porcupine reads these logs, and the
published verdicts depend on it). Any other ``:fail`` is a ``fail`` event (no
effect); ``:info`` is an unknown outcome. A cas invocation's value becomes
``(from, to)`` and a successful cas's result True.

**Clojure maps** (kv), one EDN map per line::

    {:process 0, :type :ok, :f :get, :key "4", :value "x 0 1 y"}

read as events with value ``(key, value)``, the kv model's shape.

`parse_history` recognizes the format from the first non-blank line; JSON
Lines (seedbed's own format) is recognized as well.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from seedbed.check._history import (
    EVENT_TYPES,
    Event,
    EventType,
    FrozenDict,
    History,
    HistoryError,
    history_text,
    parse_jsonl,
)

_JEPSEN = re.compile(r"^\s*\w+\s+jepsen\.util\s+-\s+(\d+)\s+:(\w+)\s+:([\w-]+)(?:\s+(.*?))?\s*$")
_JEPSEN_OTHER = re.compile(r"^\s*\w+\s+jepsen\.(?!util\b)[\w.]+\s")
_INT = re.compile(r"-?\d+")
_PAIR = re.compile(r"\[\s*(-?\d+)[\s,]+(-?\d+)\s*\]")


def _int(text: str, source: str, line: int) -> int:
    """An integer as written, refusing one past the interpreter's digit limit."""
    try:
        return int(text)
    except ValueError:
        raise HistoryError(source, line, f"integer of {len(text)} digits is too long") from None


def _jepsen_value(text: str | None, source: str, line: int) -> Any:
    if text is None or text == "" or text == "nil":
        return None
    if _INT.fullmatch(text):
        return _int(text, source, line)
    pair = _PAIR.fullmatch(text)
    if pair:
        return (_int(pair[1], source, line), _int(pair[2], source, line))
    if text.startswith(":"):
        return text[1:]
    raise HistoryError(source, line, f"cannot read value {text!r}")


def _jepsen_event(match: re.Match[str], source: str, line: int) -> Event:
    process, kind, f, raw = _int(match[1], source, line), match[2], match[3], match[4]
    if kind not in EVENT_TYPES:
        raise HistoryError(source, line, f"unknown event type :{kind}")
    value = _jepsen_value(raw, source, line)
    etype: EventType = kind  # type: ignore[assignment]
    if f == "cas" and kind == "ok":
        value = True
    elif f == "cas" and kind == "fail":
        etype, value = "ok", False
    return Event(process, etype, f, value, None, line)


def parse_jepsen_log(text: str, source: str = "<jepsen>") -> History:
    """Read a Jepsen log (the etcd format) into a `History`."""
    events = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or _JEPSEN_OTHER.match(raw):
            continue
        match = _JEPSEN.match(raw)
        if match is None:
            raise HistoryError(source, number, "not a Jepsen log event line")
        events.append(_jepsen_event(match, source, number))
    return History(events, source)


# --- EDN maps -----------------------------------------------------------------

_EDN_TOKEN = re.compile(
    r'\s*(?:(?P<open>[{\[])|(?P<close>[}\]])|(?P<str>"(?:[^"\\]|\\.)*")'
    r"|(?P<kw>:[^\s,{}\[\]\"]+)|(?P<num>-?\d+(?:\.\d+)?)|(?P<sym>nil|true|false))\s*,?"
)
_EDN_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_EDN_FAST = re.compile(
    r'\{:process (\d+), :type :(\w+), :f :(\w+), :key "([^"\\]*)", '
    r':value (?:nil|"([^"\\]*)")\}\s*'
)


class _EdnError(Exception):
    pass


def _edn_string(token: str) -> str:
    return re.sub(r"\\(.)", lambda m: _EDN_ESCAPES.get(m[1], m[1]), token[1:-1])


_EDN_MAX_DEPTH = 64


def _edn_value(text: str, pos: int, depth: int = 0) -> tuple[Any, int]:
    if depth > _EDN_MAX_DEPTH:
        raise _EdnError(f"nested more than {_EDN_MAX_DEPTH} deep")
    match = _EDN_TOKEN.match(text, pos)
    if match is None:
        raise _EdnError(f"unexpected {text[pos : pos + 10]!r}")
    end = match.end()
    kind = match.lastgroup
    token = match[kind or 0]
    if kind == "open":
        items: list[Any] = []
        closer = "}" if token == "{" else "]"
        while True:
            close = _EDN_TOKEN.match(text, end)
            if close is not None and close.lastgroup == "close":
                if close["close"] != closer:
                    raise _EdnError(f"mismatched {close['close']!r}")
                end = close.end()
                break
            if end >= len(text):
                raise _EdnError("unterminated collection")
            item, end = _edn_value(text, end, depth + 1)
            items.append(item)
        if token == "[":
            return tuple(items), end
        if len(items) % 2:
            raise _EdnError("map with an odd number of forms")
        return FrozenDict(zip(items[::2], items[1::2], strict=True)), end
    if kind == "close":
        raise _EdnError(f"unexpected {token!r}")
    return _edn_atom(kind, token), end


def _edn_atom(kind: str | None, token: str) -> Any:
    if kind == "str":
        return _edn_string(token)
    if kind == "kw":
        return token  # keywords keep their colon to stay apart from strings
    if kind == "num":
        if len(token) > 4000:  # past the interpreter's digit limit for int()
            raise _EdnError(f"number of {len(token)} digits is too long")
        return float(token) if "." in token else int(token)
    return {"nil": None, "true": True, "false": False}[token]


def _edn_map(raw: str, source: str, line: int) -> dict[Any, Any]:
    try:
        value, end = _edn_value(raw, 0)
    except _EdnError as exc:
        raise HistoryError(source, line, f"not a Clojure map: {exc}") from None
    if not isinstance(value, dict) or raw[end:].strip():
        raise HistoryError(source, line, "expected exactly one Clojure map")
    return value


def _kv_event(raw: str, source: str, line: int) -> Event:
    fast = _EDN_FAST.fullmatch(raw)
    if fast is not None and fast[2] in EVENT_TYPES:
        kind: EventType = fast[2]  # type: ignore[assignment]
        return Event(_int(fast[1], source, line), kind, fast[3], (fast[4], fast[5]), None, line)
    obj = _edn_map(raw, source, line)
    for key in (":process", ":type", ":f", ":key"):
        if key not in obj:
            raise HistoryError(source, line, f"missing {key}")
    kind_kw, f_kw = obj[":type"], obj[":f"]
    if not isinstance(kind_kw, str) or kind_kw[1:] not in EVENT_TYPES:
        raise HistoryError(source, line, f"unknown :type {kind_kw!r}")
    if not isinstance(f_kw, str) or not f_kw.startswith(":"):
        raise HistoryError(source, line, f":f must be a keyword, not {f_kw!r}")
    process = obj[":process"]
    if isinstance(process, dict | tuple):
        raise HistoryError(source, line, ":process must be a number or keyword")
    value = (obj[":key"], obj.get(":value"))
    return Event(process, kind_kw[1:], f_kw[1:], value, None, line)  # type: ignore[arg-type]


def parse_kv_log(text: str, source: str = "<kv>") -> History:
    """Read a history of Clojure maps (the kv format) into a `History`."""
    events = [
        _kv_event(raw.strip(), source, number)
        for number, raw in enumerate(text.splitlines(), start=1)
        if raw.strip()
    ]
    return History(events, source)


# --- detection ----------------------------------------------------------------


def detect_format(text: str, source: str = "<history>") -> str:
    """``"jepsen"``, ``"edn"`` or ``"jsonl"``, judged from the first non-blank line.

    A file without events (Jepsen leaves one when the cluster never started)
    is an empty history, trivially linearizable: ``"empty"``.
    """
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("{:") or line.startswith("{ :"):
            return "edn"
        if line.startswith("{"):
            return "jsonl"
        if "jepsen." in line:
            return "jepsen"
        raise HistoryError(source, number, "unrecognized history format")
    return "empty"


_PARSERS = {
    "jepsen": parse_jepsen_log,
    "edn": parse_kv_log,
    "jsonl": parse_jsonl,
    "empty": parse_jsonl,
}


def parse_history(text: str, source: str = "<history>") -> History:
    """Parse a history in any supported format, recognized from its content."""
    return _PARSERS[detect_format(text, source)](text, source)


def read_history(path: str | Path) -> History:
    """Read a history file in any supported format."""
    return parse_history(history_text(path), str(Path(path)))
