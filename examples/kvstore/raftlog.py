"""The in-memory Raft log: entries after the last snapshot, addressed by log index.

Indexes start at 1. Entries up to `snap_index` live only in the snapshot
(`snap_term` is the term of the last of them), so the log stays bounded.
"""

from __future__ import annotations

from typing import Any

Entry = dict[str, Any]


class RaftLog:
    """Entries `snap_index + 1 .. last_index`, with the snapshot that precedes them."""

    def __init__(self, snap_index: int = 0, snap_term: int = 0) -> None:
        self.snap_index = snap_index
        self.snap_term = snap_term
        self.entries: list[Entry] = []

    @property
    def last_index(self) -> int:
        return self.snap_index + len(self.entries)

    @property
    def last_term(self) -> int:
        return self.entries[-1]["term"] if self.entries else self.snap_term

    def term_at(self, index: int) -> int | None:
        """The term of the entry at `index`, or None if it is not held here."""
        if index == self.snap_index:
            return self.snap_term
        if index < self.snap_index or index > self.last_index:
            return None
        term: int = self.entries[index - self.snap_index - 1]["term"]
        return term

    def entry(self, index: int) -> Entry:
        return self.entries[index - self.snap_index - 1]

    def slice(self, start: int, limit: int) -> list[Entry]:
        """Up to `limit` entries from `start` (which must be after the snapshot)."""
        offset = start - self.snap_index - 1
        return self.entries[offset : offset + limit]

    def append(self, entry: Entry) -> None:
        assert entry["index"] == self.last_index + 1, (entry["index"], self.last_index)
        self.entries.append(entry)

    def truncate_from(self, index: int) -> None:
        del self.entries[index - self.snap_index - 1 :]

    def compact(self, index: int, term: int) -> None:
        """Forget entries up to `index`, now held by a snapshot ending in `term`."""
        if index >= self.last_index:
            self.entries = []
        else:
            self.entries = self.entries[index - self.snap_index :]
        self.snap_index, self.snap_term = index, term

    def up_to_date(self, last_index: int, last_term: int) -> bool:
        """Raft's vote rule: is a candidate's log at least as complete as this one?"""
        return (last_term, last_index) >= (self.last_term, self.last_index)
