"""Raft messages and log entries for the kvstore tests that drive a replica by hand."""

from __future__ import annotations

from typing import Any


def noop_entries(first: int, last: int, term: int) -> list[dict[str, Any]]:
    """Entries `first..last` of `term`, each a no-op the state machine applies."""
    return [{"index": i, "term": term, "cmd": {"op": "noop"}} for i in range(first, last + 1)]


def append(
    leader: str, term: int, prev: int, prev_term: int, entries: list[Any], commit: int = 0
) -> dict[str, Any]:
    """An append from `leader` of `term`: `entries` after (`prev`, `prev_term`)."""
    return {
        "type": "append",
        "from": leader,
        "term": term,
        "prev_index": prev,
        "prev_term": prev_term,
        "entries": entries,
        "commit": commit,
    }
