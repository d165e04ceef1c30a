"""Planted bugs found with seedbed's defaults (issue 24 item 6).

One small system per kind of bug in issue 24's table, each in a buggy and a
correct variant, written as ordinary asyncio code (a write-behind cache, an
id allocator, a payment client, a primary/backup pair, a price feed, a
counter collector, a Raft-style voter, a log store): nothing in them is
shaped for the simulator. `SYSTEMS` maps a name to its `run(seed, buggy)`,
which returns None when the run passed and a one-line description of the
failure otherwise. tests/quality/test_planted_defaults.py asserts that each
buggy variant fails within 20 seeds and each correct one passes 200;
bench/strategies.py counts the runs each exploration strategy needs.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.quality.planted import (
    heartbeat,
    recovery,
    retry,
    sleep_zero,
    tcp_reorder,
    timer_tie,
    udp_reorder,
    vote,
)

Run = Callable[[int, bool], "str | None"]

# name -> (the bug kind, as issue 24's table names it; run(seed, buggy))
SYSTEMS: dict[str, tuple[str, Run]] = {
    "timer_tie": ("two timers set for one instant by different tasks", timer_tie.run),
    "sleep_zero": ("three tasks racing across sleep(0)", sleep_zero.run),
    "retry": ("a client retrying a non-idempotent request after a timeout", retry.run),
    "heartbeat": ("a heartbeat failure detector with a fixed timeout", heartbeat.run),
    "tcp_reorder": ("reorder across two TCP connections", tcp_reorder.run),
    "udp_reorder": ("reorder over UDP", udp_reorder.run),
    "vote": ("a vote reply sent before its fsync", vote.run),
    "recovery": ("a damaged file recovered wrongly", recovery.run),
}
