"""One seed's outcome, whatever kind of target ran and whoever ran it.

`seedbed run` prints it, a sweep worker turns it into a results-file record,
the shrinker keeps its failure and steps, the self-check compares two of
them. A failed run is an outcome with an `error`, never a raised exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from seedbed.aio._digest import result_digest


@dataclass
class SeedOutcome:
    """One seed of a target, passed or failed.

    `kind` is "program" (an async main), "scenario", "simulation" (a plain
    function that builds and runs a `Simulation`), or "aborted" (the run
    tried to leave the process: `sys.exit`, Ctrl-C; `error` says which).
    `profile`, `faults` and `assertions` are JSON-able (None where the kind
    has none); `extra` holds fields a caller adds to the seed's record.
    """

    kind: str
    seed: int
    value: Any
    error: BaseException | None
    trace_hash: str | None
    steps: int | None
    virtual_time: float | None
    replay: str
    profile: dict[str, Any] | None = None
    faults: dict[str, Any] | None = None
    assertions: dict[str, Any] | None = None
    location: str | None = None  # the user's file:line where the run failed, if known
    report: Any = None  # a failed run's `FailureReport`, if one was made
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def result_digest(self) -> str | None:
        """A stable digest of the value returned (None for a failed run)."""
        return None if self.error is not None else result_digest(self.value)

    @property
    def status(self) -> str:
        return "pass" if self.error is None else "fail"

    def record(self) -> dict[str, Any]:
        """The fields of a sweep's per-seed line that a single run knows."""
        error = self.error
        message = str(error).splitlines()[0] if error is not None and str(error) else None
        return {
            "seed": self.seed,
            "status": self.status,
            "error_type": type(error).__name__ if error is not None else None,
            "message": message,
            "location": self.location,
            "replay": self.replay,
            "trace_hash": self.trace_hash,
            "steps": self.steps,
            "virtual_time": self.virtual_time,
            "profile": self.profile,
            "faults": self.faults,
            "assertions": self.assertions,
            "result_digest": self.result_digest,
        }
