"""The Dask worker's side of a sweep: one long task per worker thread, fed batches.

A Dask task costs its cluster about 6 ms of CPU (the client's submit, the
scheduler's transitions, the worker's bookkeeping, the result and its
release), and a message about 1.3 ms; a swarm seed of the example store takes
0.6 s. So a sweep starts one `feed` task per worker thread and keeps it for
its whole life: the task takes batches of requests from its own Dask `Queue`
(an RPC to the scheduler each, about 0.3 ms), answers them on a seedbed worker
process of its thread, and sends records under the sweep's topic with
`Worker.log_event` (non-blocking: the worker's batched stream), a few at a
time: at most one message per `FLUSH` s while a batch runs, and one at its
end marked `done`, which tells the client the feeder is free again. Each
message names its batch: the client takes records only of batches it still
waits for.

A batch runs through seedbed's own worker process (`_pool.WorkerPool` with
one process, kept per thread across batches), never in the Dask worker
itself. That keeps every local guarantee: the fixed hash seed (identical
trace hashes), a seed that kills its process or outlives `--seed-timeout`
recorded as `crash`/`timeout` instead of taking the Dask worker down, and one
core per Dask worker thread without the GIL.

A feeder ends on `STOP` (its sweep closes), when `IDLE` s pass with no work
(its client is gone, or a search is between batches: the client starts it
again), or when its sweep's `local:N` cluster closes in this process.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from seedbed._harness.sweeps._pool import WorkerPool
from seedbed.errors import UsageError

Record = dict[str, Any]
FLUSH = 5.0  # seconds a finished record may wait on its worker to travel with others
TICK = 1.0  # seconds between a feeder's checks while a seed runs (the local pool's: 0.25)
IDLE = 30.0  # seconds a feeder waits for work before it ends (its client may be gone)
STOP = "stop"  # the item that ends a feeder: its sweep is closing
_INFO_EVERY = 30_000  # ms between the worker client's scheduler-info requests (Dask's: 2,000)

_local = threading.local()
# Set when a sweep closes its `local:N` cluster: the cluster's worker threads are
# this process's, so a batch still running must stop on its own (within the
# pool's `TICK` s wake) or the sweep would wait for it to finish before exiting.
stopping = threading.Event()


class _Stopped(Exception):
    """Raised inside a batch's pool loop when its sweep is closing."""


def _distributed() -> Any:
    import distributed  # a feeder runs only where Dask runs it

    return distributed


def _thread_pool(settings: dict[str, Any], seed_timeout: float, worker: str) -> WorkerPool:
    """This thread's seedbed worker process for these settings, started once.

    Per thread, because the process dies with the thread that started it
    (the worker asks Linux for that), so only that thread may use it.
    """
    key = json.dumps([settings, seed_timeout, worker], sort_keys=True)
    if getattr(_local, "key", None) != key:
        _drop_pool()
        log_dir = Path(tempfile.gettempdir()) / f"seedbed-dask-{uuid.uuid4().hex[:8]}"
        _local.pool = WorkerPool(settings, 1, log_dir, seed_timeout, worker=worker, tick=TICK)
        _local.key = key
    pool: WorkerPool = _local.pool
    return pool


def _drop_pool() -> None:
    if getattr(_local, "pool", None) is not None:
        _local.pool.close()
    _local.key = _local.pool = None


class Sender:
    """Sends finished records to the scheduler, a few at a time: one message per `FLUSH` s.

    Called on each record and on each wake of the worker's pool (at least
    every `TICK` s), so no record waits more than `FLUSH` + `TICK` s.
    """

    def __init__(self, worker: Any, topic: str) -> None:
        self._worker, self._topic = worker, topic
        self._pending: list[Record] = []
        self._sent = time.monotonic()
        self.batch = 0  # the batch running: every message names it, its records all of it

    def add(self, record: Record) -> None:
        self._pending.append(record)
        self.flush(force=False)

    def flush(self, force: bool = True, done: bool = False) -> None:
        now = time.monotonic()
        if not done and not (self._pending and (force or now - self._sent >= FLUSH)):
            return
        # One JSON string, not a list of dicts: Dask walks a nested message
        # several times (a msgpack check, a size estimate, encode and decode on
        # the scheduler and the client); a string it copies.
        message: Record = {"batch": self.batch, "records": json.dumps(self._pending)}
        if done:
            message["done"] = True
        self._worker.log_event(self._topic, message)
        self._pending, self._sent = [], now

    def usage(self, message: str) -> None:
        """Why the target cannot run on this worker: the client ends the sweep with it."""
        self._worker.log_event(
            self._topic, {"usage": f"on Dask worker {self._worker.address}: {message}"}
        )


def _quiet_client(client: Any, in_process: bool) -> None:
    """The worker's own client (made for the queue) asks for the cluster's identity
    every 30 s, not every 2 s: a feeder needs none of it. In the sweep's own process
    (`local:N`) all its housekeeping slows, as the rest of that cluster's."""
    callbacks = getattr(client, "_periodic_callbacks", {})
    for name, callback in callbacks.items():
        if in_process or name == "scheduler-info":
            callback.callback_time = max(callback.callback_time, _INFO_EVERY)


def feed(settings: dict[str, Any], queue: str, topic: str, seed_timeout: float,
         module: str, in_process: bool = False) -> str:  # fmt: skip
    """The Dask task: answer the batches put in `queue` on a seedbed worker running
    `module`, sending records under `topic`, until told to stop or left idle."""
    distributed = _distributed()
    worker = distributed.get_worker()
    work = distributed.Queue(queue)
    _quiet_client(work.client, in_process)
    # Only a feeder that runs gets batches: on a cluster shared with other work, one
    # still waiting for its thread would hold them while the others idle.
    worker.log_event(topic, {"started": queue})
    sender = Sender(worker, topic)
    try:
        while not stopping.is_set():
            try:
                item = work.get(timeout=IDLE)
            except TimeoutError:
                return "idle"
            if item == STOP:
                break
            batch = json.loads(item)
            sender.batch = int(batch["batch"])
            if not _run(settings, batch["requests"], sender, seed_timeout, module):
                break
            sender.flush(done=True)
        return "stopped"
    finally:
        _drop_pool()  # its seedbed process would outlive the sweep on a real cluster's thread


def _run(settings: dict[str, Any], requests: list[Record], sender: Sender, seed_timeout: float,
         module: str) -> bool:  # fmt: skip
    """Answer one batch; False when the feeder must end (its sweep closes, or the
    target cannot run: said to the client as data, which need not unpickle our class)."""
    pool = _thread_pool(settings, seed_timeout, module)

    def on_tick() -> None:
        if stopping.is_set():
            raise _Stopped
        sender.flush(False)

    try:
        pool.run(iter(requests), sender.add, on_tick)
    except _Stopped:  # the sweep is closing: the seed in progress is not recorded
        _drop_pool()
        return False
    except UsageError as exc:
        _drop_pool()
        sender.flush()
        sender.usage(str(exc))
        return False
    return True
