"""Layer 1: the deterministic asyncio event loop and the single-program runner."""

from seedbed.aio._standalone import EventLoopPolicy, checkpoint, new_event_loop
from seedbed.aio._state import LoopConfig
from seedbed.aio.loop import SeedbedLoop
from seedbed.aio.runner import RunResult, replay, run

__all__ = [
    "EventLoopPolicy",
    "LoopConfig",
    "RunResult",
    "SeedbedLoop",
    "checkpoint",
    "new_event_loop",
    "replay",
    "run",
]
