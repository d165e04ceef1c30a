"""Module state a real deployment keeps once per process."""

from __future__ import annotations

import asyncio

import seedbed

peers: list[str] = []


class State:
    leader: str | None = None
    started = 0


async def serve() -> tuple[str | None, list[str], int]:
    """Claim leadership unless someone in this process already has it."""
    State.started += 1
    me = seedbed.current_node()
    assert me is not None
    if State.leader is None:
        State.leader = me
    peers.append(me)
    await asyncio.sleep(0.1)
    return State.leader, list(peers), State.started
