"""What interposition needs from the run it serves.

The loop implements this protocol; `seedbed.aio._interpose` only sees it, so
the patched clocks and entropy never reach into loop internals.
"""

from __future__ import annotations

from typing import Protocol

from seedbed.errors import SimulationEscape


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

    def escape(self, call: str, instead: str) -> SimulationEscape:
        """Record that user code tried `call`; return the error to raise.

        The host remembers the escape, so the run fails even if the user's code
        catches the exception.
        """
