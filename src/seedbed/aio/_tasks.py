"""Task bookkeeping: swallowed cancellations, and the hooks a world uses on tasks.

A task that catches its cancellation and carries on breaks `asyncio.timeout`,
`TaskGroup` and whoever awaits it; the loop reports it when the task returns
normally with a cancellation still pending, or is still running at the end.
Only cancellations requested outside a TaskGroup count (see `SimTask.cancel`).
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

from seedbed.aio._diagnose import swallowed_message
from seedbed.aio._handles import SimTask
from seedbed.aio._services import LoopServices
from seedbed.errors import CancellationSwallowed, SeedbedWarning, SimulationFailure

_unregister_task = asyncio.tasks._unregister_task


class TaskWatch(LoopServices):
    """The task-watching half of `SeedbedLoop`."""

    def _task_finished(self, task: asyncio.Future[Any]) -> None:
        assert isinstance(task, SimTask)
        self._st.tasks.pop(task.number, None)
        # asyncio's registry of tasks is one WeakSet for the process, and a
        # task hashes by its number in its run: the finished tasks of earlier
        # runs, kept by the cycles a run leaves until a full collection, pile
        # up under the same few hashes and made every `create_task` of a long
        # sweep probe past all of them (issue 30). A done task is in no
        # `asyncio.all_tasks()` answer, so leaving the registry changes nothing.
        _unregister_task(task)
        if (
            not task.cancelled()
            and min(task.cancelling(), task.user_cancels) > 0
            and task.exception() is None
        ):
            self._report_swallowed(task, "caught its cancellation and returned normally")

    def _failure_to_raise(self) -> SimulationFailure:
        """The run's recorded failure (stamped when recorded), the tasks it ended settled.

        A task that raised the failure (an `always` that broke, say) holds it as
        its exception, but the loop halts before that task's done callbacks
        run, so nothing retrieves it, and asyncio would log "exception was never
        retrieved" whenever the task is collected, after the run already
        reported it. The failure leaves the loop once, as the run's error: those
        tasks are marked retrieved. A task that ended with another error is left
        as asyncio leaves it.
        """
        failure = self._st.failure
        assert failure is not None
        # It leaves the loop once, as stock asyncio's errors do: a loop that is
        # run again (an `asyncio.Runner` reused across tests, its `close()`
        # shutting down async generators) starts clean instead of raising it again.
        self._st.failure = None
        for task in list(self._st.tasks.values()):
            if task.done() and not task.cancelled() and _stems_from(task._exception, failure):
                task.exception()  # marks it retrieved
        return failure

    def report_unfinished_cancellations(self) -> None:
        """Report tasks still running although they were cancelled (end of a run)."""
        for task in list(self._st.tasks.values()):
            if not task.done() and min(task.cancelling(), task.user_cancels) > 0:
                self._report_swallowed(task, "was cancelled but is still running")

    def _report_swallowed(self, task: asyncio.Task[Any], what: str) -> None:
        message = swallowed_message(task, what)
        if message is None:  # the standard library swallowed it, not the user's code
            return
        if self._st.config.strict:
            self._record_failure(CancellationSwallowed(message))
        else:
            warnings.warn(message, SeedbedWarning, stacklevel=1)

    def tasks_in_lane(self, lane: object) -> list[SimTask]:
        """The unfinished tasks created in `lane`, in creation order."""
        return [task for task in self._st.tasks.values() if task.lane is lane and not task.done()]

    def bury(self, task: SimTask) -> None:
        """Forget a task that must never run again (its node crashed).

        It leaves asyncio's registry (so no teardown cancels it and runs its
        `finally` blocks), the loop's, and its destroy warning is silenced; the
        caller keeps it referenced for as long as it must not be collected.
        """
        self._st.tasks.pop(task.number, None)
        task._log_destroy_pending = False  # type: ignore[attr-defined]
        asyncio.tasks._unregister_task(task)


def _stems_from(error: BaseException | None, failure: BaseException) -> bool:
    """Is `error` the failure, or raised while handling it (its cause or context)?"""
    seen: set[int] = set()  # ids only guard against a cycle; nothing is ordered by them
    while error is not None and id(error) not in seen:
        if error is failure:
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False
