"""Planted bugs: named switches that make the store wrong in one known way.

Each is off by default. A sweep should find every one of them; the quality
tests and `bench/bugs.py` check that it does. Switch one on for a whole
process with the environment (so sweep workers inherit it):

    KVSTORE_BUG=ack_before_fsync seedbed sweep examples.kvstore.scenarios:crash_recovery ...

or sweep a planted-bug scenario, whose replay command needs no environment:

    seedbed sweep examples.kvstore.scenarios:bug_ack_before_fsync --seeds 100

or in a test with `with bugs.planting("follower_reads"): ...`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

BUGS: dict[str, str] = {
    "ack_before_fsync": "a replica acknowledges log entries it has not fsynced",
    "follower_reads": "clients spread gets over all replicas, which answer from their own state",
    "forget_vote": "a restarted replica forgets whom it voted for in its current term",
    "commit_without_quorum": "the leader commits an entry once it alone has it",
    "trust_without_checksum": "records and frames are used even when their checksum fails",
    "skip_read_validation": "a transaction's commit checks only the keys it writes",
}

# The scenario whose pressure exposes each bug (tests/quality and bench/bugs.py sweep it).
HUNTED_BY: dict[str, str] = {
    "ack_before_fsync": "crash_recovery",
    "follower_reads": "happy_path",
    "forget_vote": "crash_recovery_wan",
    "commit_without_quorum": "partitions",
    "trust_without_checksum": "disk_faults",
    "skip_read_validation": "contention",
}

_planted: list[str] = []


def _from_environment() -> list[str]:
    names = [name for name in os.environ.get("KVSTORE_BUG", "").split(",") if name]
    for name in names:
        if name not in BUGS:
            raise SystemExit(f"KVSTORE_BUG: unknown bug {name!r}; known: {', '.join(BUGS)}")
    return names


_planted.extend(_from_environment())


_for_run: list[str] = []  # the bug a planted-bug scenario switches on for its runs


def planted(name: str) -> bool:
    """Whether bug `name` is switched on."""
    return name in _planted or name in _for_run


def plant_for_runs(name: str | None) -> None:
    """Switch on `name` (None: none) for the scenario runs that follow; see `scenarios`."""
    if name is not None and name not in BUGS:
        raise ValueError(f"unknown bug {name!r}; known: {', '.join(BUGS)}")
    _for_run[:] = [] if name is None else [name]


@contextmanager
def planting(name: str) -> Iterator[None]:
    """Switch bug `name` on for the duration of the block."""
    if name not in BUGS:
        raise ValueError(f"unknown bug {name!r}; known: {', '.join(BUGS)}")
    _planted.append(name)
    try:
        yield
    finally:
        _planted.remove(name)
