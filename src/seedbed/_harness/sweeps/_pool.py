"""The parent's side of a sweep: a pool of worker processes and their watchdog.

Each worker runs one seed at a time, so when a worker dies (a segfault,
`os._exit`, the out-of-memory killer) the seed it was running is known
exactly: it is recorded as a `crash` and a fresh worker takes its place. A
seed that runs past the wall-clock limit (a CPU loop never advances virtual
time, so no budget of the simulation can end it) has its worker killed and is
recorded as a `timeout`. Workers run in their own session, so the terminal's
Ctrl-C reaches only the sweep, which decides when they stop.

A caller may answer a record with a follow-up request for the worker that
sent it (`run`'s `follow_up`): it runs in that worker after `after` more of
its requests, or as soon as nothing else is queued; a worker that dies hands
its follow-ups to the others.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seedbed._core.hashseed import fixed_env
from seedbed._harness.sweeps._command import run_command
from seedbed._harness.sweeps._record import lost
from seedbed.errors import UsageError

Record = dict[str, Any]
_OUTPUT_KEPT = 2_000  # characters of a dead worker's last output kept in its record
_TICK = 0.25  # seconds between progress updates while waiting

_WORKER = "seedbed._harness.sweeps._worker"  # run as `python -m`: a fresh interpreter


@dataclass
class _Worker:
    slot: int
    process: subprocess.Popen[bytes]
    log_path: Path
    ready: bool = False
    request: Record | None = None
    started: float = 0.0
    log_offset: int = 0
    pending: bytes = b""
    answered: int = 0  # requests this worker answered
    # Follow-ups for this worker alone (a sweep's rechecks): (answered count from
    # which it may run, request), run once it answered that many or the queue is empty.
    later: deque[tuple[int, Record]] = field(default_factory=deque)


class WorkerPool:
    """`jobs` worker processes running the requests `run` is given."""

    def __init__(
        self,
        settings: dict[str, Any],
        jobs: int,
        log_dir: Path,
        seed_timeout: float,
        hash_seed: str | None = None,
        worker: str = _WORKER,
        tick: float = _TICK,
    ) -> None:
        self._settings = {**settings, "parent": os.getpid()}
        self._worker = worker  # the module each worker runs: a sweep's, or a search's
        self._jobs = jobs
        self._log_dir = log_dir
        self._seed_timeout = seed_timeout
        self._hash_seed = hash_seed
        self._tick = tick  # seconds between `on_tick` calls while seeds run, at most
        self._selector = selectors.DefaultSelector()
        self._workers: dict[int, _Worker] = {}  # by slot
        self._queue: deque[Record] = deque()
        self._follow_up: Callable[[Record], Record | None] = lambda record: None
        self._after = 0

    def run(
        self,
        requests: Iterable[Record],
        on_record: Callable[[Record], None],
        on_tick: Callable[[], None] = lambda: None,
        follow_up: Callable[[Record], Record | None] | None = None,
        after: int = 0,
    ) -> None:
        """Run every request; call `on_record` with each answer as it arrives.

        `follow_up(answer)` may return a request for the worker that answered,
        run after `after` of its other requests (see the module doc).
        Raises `UsageError` when the target cannot run at all (it does not
        import, or it is not something seedbed can run).
        """
        self._queue.extend(requests)
        if follow_up is not None:
            self._follow_up, self._after = follow_up, after
        for slot in range(min(self._jobs, len(self._queue))):
            if slot not in self._workers:
                self._spawn(slot)
        while self._queue or any(w.request is not None or w.later for w in self._workers.values()):
            self._respawn_missing()
            for worker in list(self._workers.values()):
                self._dispatch(worker)  # workers left idle by an earlier `run`
            for key, _ in self._selector.select(self._wait_time()):
                self._read(self._workers[key.data], on_record)
            self._watchdog(on_record)
            on_tick()

    def close(self) -> None:
        """Stop every worker now; a seed still running is simply not recorded."""
        for worker in list(self._workers.values()):
            self._kill(worker)
        self._selector.close()

    # -- workers -------------------------------------------------------------

    def _spawn(self, slot: int) -> None:
        self._log_dir.mkdir(parents=True, exist_ok=True)
        log_path = self._log_dir / f"worker-{slot}.log"
        env = fixed_env()
        if self._hash_seed is not None:
            env["PYTHONHASHSEED"] = self._hash_seed
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", self._worker, json.dumps(self._settings)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                env=env, start_new_session=True, close_fds=True,
            )  # fmt: skip
        assert process.stdout is not None
        os.set_blocking(process.stdout.fileno(), False)
        self._workers[slot] = _Worker(slot, process, log_path, started=time.monotonic())
        self._selector.register(process.stdout, selectors.EVENT_READ, slot)

    def _respawn_missing(self) -> None:
        idle_needed = len(self._queue) - sum(1 for w in self._workers.values() if w.request is None)
        for slot in range(self._jobs):
            if idle_needed <= 0:
                return
            if slot not in self._workers:
                self._spawn(slot)
                idle_needed -= 1

    def _kill(self, worker: _Worker) -> None:
        self._workers.pop(worker.slot, None)
        self._queue.extend(request for _, request in worker.later)  # another worker runs them
        worker.later.clear()
        stdout = worker.process.stdout
        if stdout is not None:
            with contextlib.suppress(KeyError, ValueError):  # already unregistered
                self._selector.unregister(stdout)
        if worker.process.poll() is None:
            worker.process.kill()
        worker.process.wait()
        for stream in (worker.process.stdin, stdout):
            if stream is not None:
                stream.close()

    # -- requests and answers -------------------------------------------------

    def _dispatch(self, worker: _Worker) -> None:
        if not worker.ready or worker.request is not None:
            return
        if worker.later and (worker.answered >= worker.later[0][0] or not self._queue):
            request = worker.later.popleft()[1]
        elif self._queue:
            request = self._queue.popleft()
        else:
            return
        worker.request = request
        worker.started = time.monotonic()  # the watchdog's wall clock, never a run's
        worker.log_offset = _size(worker.log_path)
        stdin = worker.process.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(request).encode() + b"\n")
            stdin.flush()
        except BrokenPipeError:
            pass  # it died: the end of its output follows, and the seed is a crash

    def _read(self, worker: _Worker, on_record: Callable[[Record], None]) -> None:
        stdout = worker.process.stdout
        assert stdout is not None
        try:
            chunk = os.read(stdout.fileno(), 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            self._died(worker, on_record)
            return
        worker.pending += chunk
        *lines, worker.pending = worker.pending.split(b"\n")
        for line in lines:
            self._answered(worker, json.loads(line), on_record)

    def _answered(
        self, worker: _Worker, message: Record, on_record: Callable[[Record], None]
    ) -> None:
        if message.get("kind") == "usage":
            raise UsageError(str(message.get("message")))
        if message.get("kind") == "ready":
            worker.ready = True
            self._dispatch(worker)
            return
        worker.request = None
        worker.answered += 1
        later = self._follow_up(message)
        if later is not None:
            worker.later.append((worker.answered + self._after, later))
        self._dispatch(worker)  # keep the worker busy while the answer is written down
        on_record(message)

    def _died(self, worker: _Worker, on_record: Callable[[Record], None]) -> None:
        request, ready = worker.request, worker.ready
        self._kill(worker)
        how = _death(worker.process.returncode)
        output = _tail(worker.log_path, worker.log_offset)
        if not ready:
            detail = output.strip().splitlines()[-1:] or ["no output"]
            raise UsageError(f"a sweep worker could not start ({how}): {detail[0]}")
        if request is not None:
            record = self._lost(request, "crash", f"the worker running this seed {how}", worker)
            record["output"] = output
            on_record(record)

    def _watchdog(self, on_record: Callable[[Record], None]) -> None:
        now = time.monotonic()
        for worker in list(self._workers.values()):
            if not worker.ready and now - worker.started > self._seed_timeout:
                raise UsageError(
                    f"a sweep worker did not import the target within {self._seed_timeout:g} s "
                    f"(--seed-timeout); see {worker.log_path}"
                )
            if worker.request is not None and now - worker.started > self._seed_timeout:
                request = worker.request
                self._kill(worker)
                message = (
                    f"the seed ran past the {self._seed_timeout:g} s wall-clock limit "
                    "(--seed-timeout) and its worker was killed"
                )
                record = self._lost(request, "timeout", message, worker)
                record["output"] = _tail(worker.log_path, worker.log_offset)
                on_record(record)

    def _lost(self, request: Record, status: str, message: str, worker: _Worker) -> Record:
        seed = int(request["seed"])
        settings = self._settings
        replay = run_command(settings["runner"], settings["target"], seed, settings["options"])
        record = lost(seed, replay, status, message, time.monotonic() - worker.started)
        if "recheck" in request:  # a follow-up's: the caller knows what it was
            record["recheck"] = True
        return record

    def _wait_time(self) -> float:
        deadlines = [
            worker.started + self._seed_timeout - time.monotonic()
            for worker in self._workers.values()
            if worker.request is not None or not worker.ready
        ]
        return max(0.0, min([self._tick, *deadlines]))


def _death(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _tail(path: Path, offset: int) -> str:
    """What the worker wrote to its log since `offset`, the last part of it."""
    try:
        with open(path, "rb") as log:
            log.seek(offset)
            data = log.read()
    except OSError:
        return ""
    return data[-_OUTPUT_KEPT:].decode("utf-8", "replace")
