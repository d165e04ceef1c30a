"""What interposition needs from the run it serves.

The loop implements this protocol; `seedbed.aio._interpose` only sees it, so
the patched clocks and entropy never reach into loop internals.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from seedbed._core import WALL_EPOCH_NS
from seedbed.errors import SimulationEscape

if TYPE_CHECKING:
    from seedbed.aio.loop import SeedbedLoop


class InterposeHost(Protocol):
    """The active run, as seen by the patched `time`, `random`, `os.urandom`..."""

    def monotonic_ns(self) -> int:
        """Virtual monotonic time of the code now running, in nanoseconds."""

    def wall_ns(self) -> int:
        """Virtual wall-clock time (ns since the Unix epoch) of the code now running."""

    def urandom(self, n: int, reason: str) -> bytes:
        """n bytes drawn from the run's entropy, labelled with `reason`."""

    def seed_for(self, reason: str) -> int:
        """A 64-bit seed drawn from the run's entropy, labelled with `reason`."""

    def node_name(self) -> str:
        """The name of the node whose code is running ("" outside any node)."""

    def escape(self, call: str, instead: str) -> SimulationEscape:
        """Record that user code tried `call`; return the error to raise.

        The host remembers the escape, so the run fails even if the user's code
        catches the exception.
        """


class RunHost:
    """The run as interposition sees it: clocks, entropy and escape reporting."""

    __slots__ = ("_loop",)

    def __init__(self, loop: SeedbedLoop) -> None:
        self._loop = loop

    def monotonic_ns(self) -> int:
        return self._loop._st.clock.now

    def wall_ns(self) -> int:
        st = self._loop._st
        if st.wall_clock is not None:
            return st.wall_clock(st.clock.now)
        return WALL_EPOCH_NS + st.clock.now

    def urandom(self, n: int, reason: str) -> bytes:
        stream = self._loop._st.user
        value = stream.raw(8 * n, reason) if n else 0
        self._loop._st.trace.emit("draw", stream.name, reason, value & ((1 << 64) - 1))
        return value.to_bytes(n, "little")

    def seed_for(self, reason: str) -> int:
        return self._loop._st.user.seed_for(reason)

    def node_name(self) -> str:
        # A world's lanes are its nodes' incarnations, each with a name (`enable_lanes`).
        lane_var = self._loop._st.lane_var
        lane = lane_var.get() if lane_var is not None else None
        name = getattr(lane, "name", "")
        return name if isinstance(name, str) else ""

    def escape(self, call: str, instead: str) -> SimulationEscape:
        failure = SimulationEscape(f"{call} inside a simulated run: {instead}")
        self._loop._record_failure(failure)
        return failure
