"""What the nemesis did, fault by fault: the timeline a failure report tells.

A count says how many faults a run had; a failure needs their story: which
fault, when, on whom, for how long, and what it did to the program (the
datagrams a partition dropped, the reads a bad disk corrupted). The ledger
keeps one `FaultRecord` per fault injected, in injection order, and fills in
what it did as the run goes, so a record read while the fault still lasts
(the run failed meanwhile) says what it did so far.

Records are plain data: `as_dict()` is JSON, what a failure report keeps.
Keeping them changes nothing in the run (nothing here draws or is hashed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

Link = tuple[str, str]


@dataclass
class FaultRecord:
    """One injected fault. `end` is None for an instant fault (a bounce, a clock
    jump) and for one still in force when the record was read; `did` counts what
    it did to the program (by what, e.g. "datagrams dropped"), `note` says how."""

    kind: str
    target: str
    nodes: tuple[str, ...]
    start: float
    lasting: bool = False
    end: float | None = None
    effective: bool = False
    did: dict[str, int] = field(default_factory=dict)
    note: str = ""
    hit: list[str] = field(default_factory=list)  # the links whose traffic it changed

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["nodes"] = list(self.nodes)
        return data


def links_target(links: Sequence[Link], names: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """How a set of directed links reads ("w3->coord", "n1<->n2", "n1's links to
    n2, n3", "n1, n2 | n3, n4"), and the nodes it touches, in the world's order."""
    touched = tuple(name for name in names if any(name in link for link in links))
    if len(links) == 1:
        return f"{links[0][0]}->{links[0][1]}", touched
    pairs = {frozenset(link) for link in links}
    if len(pairs) == 1 and len(links) == 2:
        a, b = links[0]
        return f"{a}<->{b}", touched
    hub = [name for name in touched if all(name in link for link in links)]
    if len(hub) == 1:
        return f"{hub[0]}'s links to {', '.join(n for n in touched if n != hub[0])}", touched
    one = [name for name in touched if _side(name, links, touched) == 0]
    two = [name for name in touched if name not in one]
    return f"{', '.join(one)} | {', '.join(two)}", touched


def _side(name: str, links: Sequence[Link], touched: Sequence[str]) -> int:
    """0 for the side of the first node of `touched`, 1 for the other side."""
    anchor = touched[0]
    return 0 if name == anchor or (anchor, name) not in links else 1


# What each count of `did` is called in words, singular and plural.
_WORDS = {
    "datagrams dropped": ("datagram dropped", "datagrams dropped"),
    "datagrams held": ("datagram held", "datagrams held"),
    "streams stalled": ("stream stalled with bytes waiting", "stream stalls with bytes waiting"),
    "connects blocked": ("connect blocked", "connects blocked"),
    "reads corrupted": ("read corrupted", "reads corrupted"),
    "reads failed": ("read failed", "reads failed"),
    "writes failed": ("write failed", "writes failed"),
    "fsyncs failed": ("fsync failed", "fsyncs failed"),
    "writes misdirected": ("write misdirected", "writes misdirected"),
    "writes torn": ("write torn", "writes torn"),
    "wall clock reads": ("wall clock read since", "wall clock reads since"),
}


# Counts that are yes or no, told without their number.
_FLAGS = {
    "paused while running": "the node stayed up through it",
    "crashed at the operation": "crashed there",
    "restarted on that version": "the node started again on it",
}


def describe_did(did: dict[str, int]) -> str:
    """'24 datagrams dropped, 1 stream stalled with bytes waiting' ('' for nothing)."""
    parts = []
    for what, count in did.items():
        if count <= 0:
            continue
        if what in _FLAGS:
            parts.append(_FLAGS[what])
            continue
        one, many = _WORDS.get(what, (what, what))
        parts.append(f"{count} {one if count == 1 else many}")
    return ", ".join(parts)
