"""`seedbed.run` and `seedbed.replay`: one async program, one seed, one execution.

`run` executes `main()` on a fresh `SeedbedLoop` and, like `asyncio.run`,
cancels what is left when it returns and closes async generators. The result
carries the trace hash: the same program and seed give the same hash in any
process. `replay` re-runs a recorded trace and stops at the first event that
differs from the recording.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import platform
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from seedbed._core import Trace
from seedbed._core.naming import replay_command
from seedbed._core.trace import Event
from seedbed._core.tracefile import RecordedTrace, TraceWriter, write_trace
from seedbed._core.validate import check_seed as check_seed  # re-exported: callers import it here
from seedbed._core.version import TRACE_FORMAT, VERSION
from seedbed.aio._digest import result_digest, seal_run, short_repr
from seedbed.aio._state import LoopConfig
from seedbed.aio.loop import SeedbedLoop
from seedbed.errors import Nondeterminism, RunContext, UsageError, attach_context

Main = Callable[[], Any]
_TEARDOWN_STEPS = 100_000  # how long cancelled leftovers get to finish


@dataclass(frozen=True)
class RunResult:
    """What a completed run returns."""

    value: Any
    seed: int
    trace_hash: str
    steps: int
    virtual_time: float  # seconds
    result_digest: str | None = None  # of `value` (see _digest); None for a failed run


def make_config(
    max_steps: int | None, max_time: float | None, options: dict[str, Any]
) -> LoopConfig:
    try:
        return LoopConfig(max_steps=max_steps, max_time=max_time, **options)
    except TypeError as exc:
        raise UsageError(f"unknown run option: {exc}") from None


async def _call_main(main: Main) -> Any:
    awaitable = main()
    if not inspect.isawaitable(awaitable):
        raise UsageError(
            f"main must be an async callable taking no arguments; {main!r} returned "
            f"{type(awaitable).__name__}"
        )
    return await awaitable


def _teardown(loop: SeedbedLoop) -> None:
    """Cancel what `main` left running, let it finish, close async generators."""
    loop.report_unfinished_cancellations()
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    st = loop._st
    st.set_step_limit(min(st.step_limit, st.steps + _TEARDOWN_STEPS))
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())


def abandon_pending(loop: SeedbedLoop) -> None:
    """Close what a failed (or stubborn) run left pending, now and quietly.

    Left to the garbage collector, their coroutines would be finalized at an
    arbitrary later moment, with "Task was destroyed but it is pending!" noise.
    Closing them here runs their `finally` blocks at a fixed point, after the
    run's outcome is settled and outside its clocks.
    """
    for task in list(loop._st.tasks.values()):
        if task.done():
            continue
        task._log_destroy_pending = False  # type: ignore[attr-defined]
        with contextlib.suppress(BaseException):  # a dying coroutine's complaint changes nothing
            task.get_coro().close()


def _annotate(exc: BaseException, loop: SeedbedLoop) -> None:
    """Make sure the error leaving a run carries its seed and replay command."""
    attach_context(exc, loop.run_context())


@dataclass(frozen=True)
class RunOutcome:
    """A run that may have failed: what the CLI and sweeps report either way."""

    result: RunResult
    error: BaseException | None


def execute(
    main: Main, seed: int, config: LoopConfig, trace: Trace, trace_path: str | Path | None
) -> RunOutcome:
    """Run `main` once; a failure of the run is returned, not raised.

    Usage errors (a bad `main`) and KeyboardInterrupt/SystemExit still raise.
    """
    if not callable(main):
        raise UsageError(f"main must be an async callable taking no arguments, got {main!r}")
    if sys.flags.optimize:
        raise UsageError("python -O strips the assertions a simulation checks; run without -O")
    if trace_path is not None:  # written as the run goes (see `tracefile`)
        trace.events = writer = TraceWriter(trace_path, trace_header(seed, config))  # type: ignore[assignment]
        trace.notes = writer.note  # annotations for `seedbed view`, outside the hash
    loop = SeedbedLoop(seed, config, trace)
    loop._st.replay = replay_command(main, seed, config.changed())
    value: Any = None
    failure: BaseException | None = None
    task = loop.create_task(_call_main(main), name="main")
    try:
        value = loop.run_until_complete(task)
        _teardown(loop)
    except UsageError:
        raise
    except (KeyboardInterrupt, SystemExit) as exc:
        failure = exc  # the trace's end line says the run was interrupted
        if task.done() and not task.cancelled():
            task.exception()  # raised to the caller: not logged again at GC time
        raise
    except BaseException as exc:
        failure = exc
        loop.note_failure(exc)
        _annotate(exc, loop)
        if task.done() and not task.cancelled():
            task.exception()  # raised to the caller: retrieved, so not logged at GC time
    finally:
        abandon_pending(loop)
        loop.close()
        st = loop._st
        digest = None if failure is not None else result_digest(value)
        seal_run(trace, st.steps, st.clock.now, value, failure, digest)
        if trace_path is not None:
            write_run_trace(trace_path, loop, config, failure, value=value)
    result = RunResult(value, seed, trace.hash, st.steps, st.clock.now / 1e9, digest)
    return RunOutcome(result, failure)


def _raise_or_return(outcome: RunOutcome) -> RunResult:
    if outcome.error is not None:
        raise outcome.error
    return outcome.result


def write_run_trace(
    path: str | Path,
    loop: SeedbedLoop,
    config: LoopConfig,
    failure: BaseException | None,
    *,
    world: dict[str, Any] | None = None,
    value: Any = None,
) -> None:
    """Finish a run's trace file: the end line after the events (written as the
    run went, or all now). An interrupted run's end line says so.

    `world` adds a simulated world's settings (network, disk, clock configs,
    a scenario's fault profile) to the header. The end line carries the
    result's digest and a short stable repr, which a replay compares (a
    program can return something else with the same events).
    """
    st = loop._st
    end: dict[str, Any] = {
        "end": st.trace.count,
        "hash": st.trace.hash,
        "steps": st.steps,
        "virtual_time_ns": st.clock.now,
        "failure": failure_line(failure),
        "result": None if failure is not None else result_digest(value),
        "result_repr": None if failure is not None else short_repr(value),
    }
    if isinstance(failure, KeyboardInterrupt | SystemExit):
        end = {"end": st.trace.count, "interrupted": type(failure).__name__}
    events = st.trace.events
    if isinstance(events, TraceWriter):
        events.finish(end)
    else:
        write_trace(path, {**trace_header(loop.seed, config), **(world or {})}, events or [], end)


def trace_header(seed: int, config: LoopConfig) -> dict[str, Any]:
    return {
        "seedbed": VERSION,
        "format": TRACE_FORMAT,
        "python": platform.python_version(),
        "seed": seed,
        "options": config.as_dict(),
    }


def failure_line(failure: BaseException | None) -> str | None:
    if failure is None:
        return None
    message = str(failure).splitlines()[0] if str(failure) else ""
    return f"{type(failure).__name__}: {message}"


def run(
    main: Main,
    *,
    seed: int,
    max_steps: int | None = None,
    max_time: float | None = None,
    trace: str | Path | None = None,
    **options: Any,
) -> RunResult:
    """Run `main()` deterministically under `seed` on virtual time.

    `max_steps` (callbacks) and `max_time` (virtual seconds) are budgets;
    `trace=PATH` writes the run's events as JSON Lines for `replay`. Other
    options are `LoopConfig` fields (`strict`, `timer_jitter_max`,
    `cpu_cost_min`, `cpu_cost_max`, `explore_tasks`, `clock_resolution`,
    `strategy`, `pct_depth`, `pct_steps`, `threads`). Any error leaving the run carries
    the seed and the command that replays it.
    """
    config = make_config(max_steps, max_time, options)
    keep = trace is not None
    return _raise_or_return(execute(main, check_seed(seed), config, Trace(keep=keep), trace))


def replay(main: Main, *, trace: str | Path) -> RunResult:
    """Re-run a recorded trace; raise `Nondeterminism` at the first differing event,
    or if the same events returned a different result.

    The trace is read as a stream, compared as the run goes. A recorded
    failure that happens again is raised as it was. A malformed or cut trace
    is a `UsageError` naming the line, never a divergence or a replay. A trace
    recorded on another Python version says so in the `Nondeterminism` it
    raises: where the standard library changed (docs/explanation/streams-and-hash.md,
    "One trace across versions"), such a trace cannot replay.
    """
    recorded = RecordedTrace(trace)
    try:
        return _replay(main, recorded)
    except Nondeterminism as exc:
        raise_defect_after(recorded, exc)
        if note_python_version(exc, recorded.header.get("python")):
            # The standard library differs, not seedbed: its frames say nothing.
            raise exc.with_traceback(None) from None
        raise
    finally:
        recorded.close()


_WIND_DOWN = 2  # events a stopped run still records: its position marker and its unseed


def raise_defect_after(recorded: RecordedTrace, divergence: Nondeterminism) -> None:
    """A divergence within a stop's wind-down of a cut or interrupted recording's
    end is that defect (the recording run was stopped there). Reads at most
    `_WIND_DOWN` events on: a divergence never reads the rest of the file."""
    for _ in range(_WIND_DOWN):
        if recorded.next_event() is None:
            break
    if recorded.defect is not None:
        raise recorded.defect from divergence


def _replay(main: Main, recorded: RecordedTrace) -> RunResult:
    try:
        config = LoopConfig(**recorded.header["options"])
    except (TypeError, UsageError) as exc:
        raise UsageError(
            f"{recorded.path}:1: the header's run options are invalid ({exc})"
        ) from None
    checking = Trace(expected=cast(Sequence[Event], recorded.events))
    try:
        outcome = execute(main, recorded.seed, config, checking, None)
    except Nondeterminism:  # raised before the run began (the loop's first draws)
        recorded.raise_if_defective()  # a cut or damaged trace is that, never a divergence
        raise
    recorded.raise_if_defective()  # the recording stopped the comparison, not the run
    try:
        _compare(recorded, checking, outcome)
    except Nondeterminism as exc:
        if exc.context is None:
            exc.context = RunContext(
                recorded.seed, outcome.result.steps, round(outcome.result.virtual_time * 1e9),
                replay_command(main, recorded.seed, config.changed()),
            )  # fmt: skip
        raise
    return outcome.result


def _compare(recorded: RecordedTrace, checking: Trace, outcome: RunOutcome) -> None:
    """Raise what a replay must: a divergence, a different ending or result, or
    the recorded failure happening again."""
    error = outcome.error
    if checking.divergence is not None:
        raise checking.divergence
    if isinstance(error, Nondeterminism):
        raise error
    if error is None:
        checking.check_complete()
    recorded_failure = recorded.end.get("failure")  # reads on to the end line
    if error is not None:
        if recorded_failure is None or checking.count < recorded.count:
            raise _diverged(checking, recorded_failure, failure_line(error)) from error
        raise error
    if recorded_failure is not None:
        raise _diverged(checking, recorded_failure, None)
    check_result(recorded.end, outcome.result.value)
    check_ending(recorded.end, outcome.result.steps, round(outcome.result.virtual_time * 1e9))


def check_ending(end: dict[str, Any], steps: int, now_ns: int) -> None:
    """The same events must also have ended at the same step and virtual time
    (the hash seals both: callbacks after the last event still count)."""
    recorded = (end.get("steps"), end.get("virtual_time_ns"))
    if None in recorded or recorded == (steps, now_ns):
        return
    raise Nondeterminism(
        "the replay ended at another step or time than the recording, after the same "
        f"events\n  recorded: step {recorded[0]}, t={recorded[1]}ns\n"
        f"  actual:   step {steps}, t={now_ns}ns"
    )


def note_python_version(exc: Nondeterminism, recorded: object) -> bool:
    """A divergence from a trace of another Python version says so in one line.

    `recorded` is the trace header's `python`. Where minor versions differ the
    message becomes one line naming both versions and the first differing
    event (docs/explanation/streams-and-hash.md, "One trace across versions":
    `wait_for`, for one, runs differently before 3.12). Returns whether it did;
    a second call does not add it again.
    """
    actual = platform.python_version()
    if not isinstance(recorded, str) or recorded.split(".")[:2] == actual.split(".")[:2]:
        return False
    if not exc.message.startswith("the trace was recorded on Python"):
        head, *details = exc.message.split("\n")
        what = f" ({'; '.join(' '.join(line.split()) for line in details)})" if details else ""
        exc.message = (
            f"the trace was recorded on Python {recorded} and replayed on {actual}, "
            f"and {head}{what}: record it again on this version "
            "(docs/explanation/streams-and-hash.md, 'One trace across versions')"
        )
        exc.args = (exc.message,)
    return True


def check_result(end: dict[str, Any], value: Any) -> None:
    """The same events must also have produced the same value (see `_digest`).

    `end` is a recorded trace's end line; a trace written before result
    digests has none, and passes.
    """
    recorded, actual = end.get("result"), result_digest(value)
    if recorded is None or recorded == actual:
        return
    raise Nondeterminism(
        "the replay returned a different result with the same events "
        f"(result digest {recorded} recorded, {actual} now)\n"
        f"  recorded: {end.get('result_repr')}\n  actual:   {short_repr(value)}"
    )


def _diverged(checking: Trace, recorded: str | None, actual: str | None) -> Nondeterminism:
    return Nondeterminism(
        f"the replay ended differently from the recording after event {checking.count}\n"
        f"  recorded: {recorded or 'completed'}\n  actual:   {actual or 'completed'}"
    )
