"""Transaction histories: what each client's transactions did and saw.

A transaction is an operation whose value is a list of *micro-operations*:

- list-append: ``("append", key, value)`` adds ``value`` to the end of the
  list at ``key``; ``("r", key, list)`` reads the whole list (None on the
  invocation, the list seen on completion; None or ``()`` for a key never
  written);
- rw-register: ``("w", key, value)`` and ``("r", key, value)``.

Each value is written at most once per key: that is what lets a checker tell
from a read which write it saw. A transaction completes ``ok`` (committed,
its value shows what it read), ``fail`` (certainly no effect) or ``info``
(unknown: it may or may not have committed; its reads are unknown).

Histories come from the `Recorder` (``f="txn"``, JSON Lines on disk) or from
Jepsen's EDN files (one operation map per line, ``:f :txn``). Real-time order
is the order of the events, as for single-object histories: ``:time`` is
carried along but never trusted (Jepsen's clocks go backwards).
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from seedbed._core.files import NotRegular, regular_file
from seedbed.check._history import EVENT_TYPES, Event, EventType, History, HistoryError, Status
from seedbed.check._history import parse_jsonl as _parse_jsonl

TxnModel: TypeAlias = Literal["list-append", "rw-register"]
TXN_MODELS: Final = ("list-append", "rw-register")
_MOP_NAMES: Final = {
    "append": "append",
    "r": "r",
    "read": "r",
    "w": "w",
    "write": "w",
}
_ALLOWED: Final = {"list-append": ("append", "r"), "rw-register": ("w", "r")}


@dataclass(frozen=True, slots=True)
class Txn:
    """One transaction: its micro-operations and what became of it.

    ``mops`` is the completion's value for a committed transaction (reads
    filled in) and the invocation's otherwise. ``call`` and ``ret`` are event
    indices (real-time order); ``ret`` is None unless the outcome is known.
    ``lines`` are the source lines of invocation and completion, for people.
    """

    id: int
    process: Hashable
    status: Status
    mops: tuple[tuple[str, Hashable, Any], ...]
    call: int
    ret: int | None
    lines: tuple[int | None, int | None] = (None, None)

    def describe(self) -> str:
        """``T3 (process 2, lines 7-9): [append x 1] [r y [1 2]]``: a name a reader can find."""
        where = _lines(self.lines)
        process = "" if self.process is None else f"process {self.process}, "
        status = "" if self.status == "ok" else f", {self.status}"
        return f"T{self.id} ({process}{where}{status}): {format_mops(self.mops)}"


def _lines(lines: tuple[int | None, int | None]) -> str:
    first, last = lines
    if first is None:
        return "unknown line"
    return f"line {first}" if last is None or last == first else f"lines {first}-{last}"


def format_value(value: Any) -> str:
    """A value as the EDN reader would write it: lists in brackets, nil for None."""
    if value is None:
        return "nil"
    if isinstance(value, tuple):
        return "[" + " ".join(format_value(v) for v in value) + "]"
    if isinstance(value, str):
        return value if value.startswith(":") else repr(value)
    return str(value)


def format_mops(mops: Iterable[tuple[str, Hashable, Any]]) -> str:
    """Micro-operations as ``[append 3 1] [r 4 [1 2]]``."""
    return " ".join(f"[{f} {format_value(k)} {format_value(v)}]" for f, k, v in mops)


@dataclass(frozen=True, slots=True)
class TxnHistory:
    """The transactions of one history, in invocation order, and its model."""

    txns: tuple[Txn, ...]
    model: TxnModel
    source: str = "<history>"

    def __len__(self) -> int:
        return len(self.txns)


# --- from events ----------------------------------------------------------------


def _names(model: TxnModel) -> dict[str, str]:
    """Accepted spellings of each micro-op (EDN keywords keep their colon)."""
    return {
        prefix + raw: f
        for raw, f in _MOP_NAMES.items()
        if f in _ALLOWED[model]
        for prefix in ("", ":")
    }


def _mops(
    value: Any, names: dict[str, str], model: TxnModel, source: str, line: int | None
) -> tuple[Any, ...]:
    if not isinstance(value, tuple | list):
        raise HistoryError(source, line, "a transaction's value must be a list of micro-ops")
    out = []
    reused = isinstance(value, tuple)  # whether `value` itself can stand for the result
    for mop in value:
        if not isinstance(mop, tuple | list) or len(mop) != 3:
            raise HistoryError(source, line, f"micro-op {mop!r} is not [f key value]")
        raw_f, raw_key, raw_arg = mop
        f = names.get(raw_f) if isinstance(raw_f, str) else None
        if f is None:
            allowed = " and ".join(_ALLOWED[model])
            raise HistoryError(
                source, line, f"micro-op {raw_f!r} is not allowed in {model} (only {allowed})"
            )
        key, arg = _freeze(raw_key), _freeze(raw_arg)
        if f == "r" and model == "list-append" and arg is not None and not isinstance(arg, tuple):
            raise HistoryError(source, line, f"a list-append read must return a list, not {arg!r}")
        try:
            hash((key, arg))
        except TypeError:
            raise HistoryError(
                source, line, f"micro-op {mop!r} holds a value that cannot be compared (a map?)"
            ) from None
        if f == raw_f and key is raw_key and arg is raw_arg and type(mop) is tuple:
            out.append(mop)  # already in shape: the history's own tuple, not a copy
        else:
            out.append((f, key, arg))
            reused = False
    # A million transactions' micro-ops are a third of a checked history's
    # memory: a value already in shape is kept, not copied.
    return tuple(value) if reused else tuple(out)  # tuple() of a tuple is that tuple


def _freeze(value: Any) -> Any:
    """Lists (from JSON) become tuples, so values compare and hash as EDN vectors do."""
    if isinstance(value, list):
        if any(isinstance(v, list) for v in value):
            return tuple(_freeze(v) for v in value)
        return tuple(value)
    return value


def txns_from_history(history: History, model: TxnModel) -> TxnHistory:
    """The transactions of a `History` whose operations are ``f="txn"``."""
    txns = []
    names = _names(model)
    for op in history.operations():
        first = history[op.call].line
        last = history[op.ret].line if op.ret is not None else None
        if op.f != "txn":
            raise HistoryError(history.source, first, f"operation {op.f!r} is not a transaction")
        value = op.result if op.status == "ok" else op.value
        mops = _mops(value, names, model, history.source, last if op.status == "ok" else first)
        lines = (first, last) if last is not None else (first, None)
        txns.append(Txn(op.id, op.process, op.status, mops, op.call, op.ret, lines))
    return TxnHistory(tuple(txns), model, history.source)


# --- EDN ----------------------------------------------------------------------------

_TOKEN: Final = re.compile(
    r"""[\s,]*(?:
      (?P<open>\#\{|[{\[(])
    | (?P<close>[}\])])
    | (?P<str>"(?:[^"\\]|\\.)*")
    | (?P<num>[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?[NM]?)(?![\w.])
    | (?P<word>[^\s,{}\[\]()";#]+)
    | (?P<comment>;.*)
    | (?P<bad>.)
    )""",
    re.VERBOSE,
)
_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "\\": "\\"}
# A string's escapes, as Clojure's reader takes them: \uXXXX (a surrogate
# pair is one character), or one character (\n and the rest of _ESCAPES).
_ESCAPE: Final = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|(.))"
)
_CLOSERS: Final = {"{": "}", "[": "]", "(": ")", "#{": "}"}


_PLAIN_LINE: Final = re.compile(r"\{[^\"\\;#(){}]*\}")
_KEYWORD: Final = re.compile(r"(:[^\s,\[\]{}]+)")


def _read_plain_map(text: str) -> dict[Any, Any] | None:
    """The common line (one flat map of keywords, numbers and vectors) through `json`.

    Jepsen writes millions of such lines; the general reader's per-token work
    is the slow part. None when the line needs the general reader.
    """
    if _PLAIN_LINE.fullmatch(text) is None:
        return None
    # Splitting on keywords puts each at an odd index: joining with '"' quotes them all.
    body = '"'.join(_KEYWORD.split(text[1:-1]))
    body = ",".join(body.replace(",", " ").split()).replace("[,", "[").replace(",]", "]")
    body = f"[{body}]".replace("nil,", "null,").replace("nil]", "null]")
    try:
        items = json.loads(body)
    except ValueError:
        return None
    if len(items) % 2 or not {type(k) for k in items[::2]} <= {str, int}:
        return None
    return dict(zip(items[::2], items[1::2], strict=True))


def read_edn_line(text: str, source: str, line: int, *, sets: bool = False) -> Any:
    """One EDN form from one line, without recursion (deep nesting cannot crash it).

    Vectors and lists become tuples, maps dicts, keywords strings that keep
    their colon (``":ok"``), numbers ints or floats; sets are refused unless
    ``sets`` (then read as tuples, in the order written: a set read's elements).
    """
    stack: list[tuple[str, list[Any]]] = []
    result: list[Any] = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind is None or kind == "comment":
            continue
        token = match[kind]
        if kind == "bad":
            raise HistoryError(source, line, f"unexpected {token!r} in EDN")
        if kind == "open":
            if token == "#{" and not sets:
                raise HistoryError(source, line, "EDN sets are not supported in histories")
            stack.append((token, []))
            continue
        try:
            value = _close(stack, token, source, line) if kind == "close" else _atom(kind, token)
        except HistoryError:  # an unbalanced form (a ValueError too): its own message
            raise
        except ValueError as exc:
            raise HistoryError(source, line, f"cannot read EDN number: {exc}") from None
        (stack[-1][1] if stack else result).append(value)
    if stack:
        raise HistoryError(source, line, f"unclosed {stack[-1][0]!r} in EDN")
    if len(result) != 1:
        raise HistoryError(source, line, "expected exactly one EDN form on the line")
    return result[0]


def _close(stack: list[tuple[str, list[Any]]], token: str, source: str, line: int) -> Any:
    if not stack or _CLOSERS[stack[-1][0]] != token:
        raise HistoryError(source, line, f"unbalanced {token!r} in EDN")
    opener, items = stack.pop()
    if opener != "{":
        return tuple(items)
    if len(items) % 2:
        raise HistoryError(source, line, "EDN map with an odd number of forms")
    keys = items[::2]
    try:
        hash(tuple(keys))
    except TypeError:
        raise HistoryError(source, line, "an EDN map key cannot be a map") from None
    return dict(zip(keys, items[1::2], strict=True))


def _unescape(match: re.Match[str]) -> str:
    high, low, code, char = match.groups()
    if high is not None:
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00)
    if code is not None:
        return chr(int(code, 16))
    return _ESCAPES.get(char, char)


def _atom(kind: str, token: str) -> Any:
    if kind == "str":
        return _ESCAPE.sub(_unescape, token[1:-1])
    if kind == "num":
        token = token.rstrip("NM")
        if re.fullmatch(r"[-+]?\d+", token):
            if len(token) > 4000:
                raise ValueError(f"integer of {len(token)} digits")
            return int(token)
        return float(token)
    return {"nil": None, "true": True, "false": False}.get(token, token)


def _edn_event(obj: Any, source: str, line: int) -> Event | None:
    if not isinstance(obj, dict):
        raise HistoryError(source, line, "expected an operation map {:type ... :value ...}")
    process = obj.get(":process")
    if process == ":nemesis":
        return None
    kind = obj.get(":type")
    if not isinstance(kind, str) or kind[1:] not in EVENT_TYPES:
        raise HistoryError(source, line, f"missing or unknown :type {kind!r}")
    f = obj.get(":f", ":txn")
    if f != ":txn":
        raise HistoryError(source, line, f":f is {f!r}; transaction histories need :f :txn")
    if isinstance(process, tuple | dict):
        raise HistoryError(source, line, ":process must be a number or keyword")
    etype: EventType = kind[1:]  # type: ignore[assignment]
    return Event(process, etype, "txn", obj.get(":value"), None, line)


def parse_edn_txns(text: str, model: TxnModel, source: str = "<edn>") -> TxnHistory:
    """Read a Jepsen EDN transaction history (one operation map per line).

    ``;`` comments, commas and extra spaces are allowed; ``:process``, ``:f``
    and ``:time`` may be missing. Operations without a process are taken to
    come from one client, one after the other (and get no process order).
    """
    events = []
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith(";"):
            continue
        obj = _read_plain_map(stripped)
        if obj is None:
            obj = read_edn_line(stripped, source, number)
        event = _edn_event(obj, source, number)
        if event is not None:
            events.append(event)
    return txns_from_history(History(events, source), model)


def parse_txn_history(text: str, model: TxnModel, source: str = "<history>") -> TxnHistory:
    """A transaction history in EDN or JSON Lines, recognized from the content."""
    if model not in TXN_MODELS:
        raise HistoryError(source, None, f"unknown transaction model {model!r}")
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith(";"):
            continue
        if stripped.startswith("{:") or stripped.startswith("{ :"):
            return parse_edn_txns(text, model, source)
        break
    return txns_from_history(_parse_jsonl(text, source), model)


def read_txn_history(path: str | Path, model: TxnModel) -> TxnHistory:
    """Read a transaction history file (EDN or JSON Lines)."""
    path = Path(path)
    try:
        regular_file(path)  # /dev/zero or a FIFO would read (or block) forever
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise HistoryError(str(path), None, f"not UTF-8 text ({exc.reason})") from None
    except NotRegular:
        raise HistoryError(str(path), None, "not a regular file (a device or FIFO)") from None
    except OSError as exc:
        raise HistoryError(str(path), None, exc.strerror or "cannot read") from None
    return parse_txn_history(text, model, str(path))


def check_unique_writes(history: TxnHistory) -> None:
    """Refuse a history that writes one value twice to a key: reads would be ambiguous."""
    seen: dict[tuple[Hashable, Hashable], int] = {}
    for txn in history.txns:
        mine: set[tuple[Hashable, Hashable]] = set()
        for f, key, value in txn.mops:
            if f == "r":
                continue
            pair = (key, value)
            if pair in mine or pair in seen:
                raise HistoryError(
                    history.source,
                    txn.lines[0],
                    f"value {format_value(value)} is written to key {format_value(key)} "
                    f"more than once (T{seen.get(pair, txn.id)} and T{txn.id}); "
                    "each write needs a unique value",
                )
            mine.add(pair)
        seen.update(dict.fromkeys(mine, txn.id))
