"""`HistoryOracle`: record what a workload's clients saw, and check it when the run ends.

A scenario's workload records its operations on the oracle exactly as on a
`Recorder` (it is one); the scenario lists it among its ``checks``, which run
once, after the last phase, inside the run::

    jobs = HistoryOracle("queue")

    async def producer():
        for number in range(20):
            with jobs.operation("producer", "enqueue", number) as op:
                await queue.put(number)
                op.ok()

    scenario = Scenario("jobs", setup, checks=[jobs], ...)

One oracle serves every run of its scenario: the history it checks is the
one recorded in the run checking it (recording in a new run starts afresh,
and a run that recorded nothing checks an empty history, never the last
run's).

Calling the oracle checks the history with the named model (any of
``check-history --model``'s) and returns True when it passes; otherwise it
raises `AssertionError` whose message is the checker's explanation, which
fails the run. A history that cannot show the property (no read, no
dequeue succeeded) fails too, unless ``allow_empty``: a run in which the
system never answered is no evidence that it is correct. Inside a run that
writes a trace, `seedbed view` marks the operations a refusal blames.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import IO, Any

from seedbed.check._collections import CHECKERS, check_collection
from seedbed.check._history import EventType, History, Recorder, _loop_clock
from seedbed.check._linearizability import Outcome, Verdict, linearizable
from seedbed.check._models import MODELS
from seedbed.check._txn_history import TXN_MODELS
from seedbed.check._txn_verdict import TxnVerdict, check_transactions
from seedbed.check._verdict import CheckVerdict
from seedbed.errors import UsageError
from seedbed.faults._hooks import caller_location

ORACLE_MODELS = (*sorted(MODELS), *TXN_MODELS, *CHECKERS)
_MESSAGE_LIMIT = 2000


class HistoryOracle(Recorder):
    """A `Recorder` whose history is checked by ``model`` when called.

    ``options`` go to the checker: ``consistency`` for transactions,
    ``linearizable`` for a set, ``initial`` for a counter. ``timeout`` bounds
    a linearizability or transaction check (seconds of the clock the check
    runs under).
    """

    def __init__(
        self,
        model: str,
        sink: str | Path | IO[str] | None = None,
        *,
        name: str | None = None,
        allow_empty: bool = False,
        timeout: float | None = 60.0,
        clock: Callable[[], float | None] = _loop_clock,
        **options: Any,
    ) -> None:
        if model not in ORACLE_MODELS:
            raise UsageError(
                f"HistoryOracle: unknown model {model!r}; models are {', '.join(ORACLE_MODELS)}"
            )
        super().__init__(sink, clock=clock)
        self.model = model
        self.name = name or f"{model} history"
        self.allow_empty = allow_empty
        self.timeout = timeout
        self.options = options
        self.location = caller_location(2)  # where it was made: a failure names that line
        self._run: weakref.ref[asyncio.AbstractEventLoop] | None = None  # the loop recorded in

    def __repr__(self) -> str:
        return f"HistoryOracle({self.name!r})"

    def invoke(self, process: Hashable, f: str, value: Any = None) -> None:
        """Record that ``process`` starts operation ``f(value)`` (see `Recorder.invoke`)."""
        self._this_run()
        super().invoke(process, f, value)

    def _complete(self, process: Hashable, kind: EventType, value: Any) -> None:
        self._this_run()
        super()._complete(process, kind, value)

    def _this_run(self) -> None:
        """Forget a history recorded in another run (another event loop)."""
        loop = _running_loop()
        if loop is None or (self._run is not None and self._run() is loop):
            return
        if self._run is not None:
            self._events.clear()
            self._open.clear()
            self._noted = None
        self._run = weakref.ref(loop)

    @property
    def history(self) -> History:
        """What this run recorded so far (open operations count as unknown)."""
        self._this_run()
        return super().history

    def verdict(self) -> Verdict | TxnVerdict | CheckVerdict:
        """Check what this run recorded so far (open operations count as unknown)."""
        history = self.history
        if self.model in MODELS:
            model = MODELS[self.model]()
            return linearizable(history, model, self.timeout, allow_empty=self.allow_empty)
        if self.model in TXN_MODELS:
            return check_transactions(
                history, self.model,  # type: ignore[arg-type]
                timeout=self.timeout, allow_empty=self.allow_empty, **self.options,
            )  # fmt: skip
        return check_collection(history, self.model, allow_empty=self.allow_empty, **self.options)

    def __call__(self) -> bool:
        """True when the history checks out; else `AssertionError` saying why."""
        verdict = self.verdict()
        if verdict:
            return True
        if isinstance(verdict, Verdict) and verdict.outcome is Outcome.UNKNOWN:
            text = f"{self.name}: undecided within {self.timeout} s: {verdict.explain()}"
        else:
            text = f"{self.name}: {verdict.explain()}"
        if len(text) > _MESSAGE_LIMIT:
            text = text[: _MESSAGE_LIMIT - 4] + " ..."
        error = AssertionError(text)
        error.location = self.location  # type: ignore[attr-defined]
        raise error


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
