"""A sweep on a Dask cluster: the same records, streamed back per seed.

`DaskPool` has the local `WorkerPool`'s interface (`run`, `close`), so the
sweep engine, the results file, resume and the summary are the same code
whichever runs the seeds. Only the target's name, the run options and seed
numbers go over the wire; each Dask worker imports the target itself, and
records come back as JSON-able dicts.

On a Dask worker a task runs a batch of seeds through seedbed's own worker
process (`_pool.WorkerPool` with one process, kept per worker thread across
batches), never in the Dask worker itself. That keeps every local guarantee:
the fixed hash seed (identical trace hashes), a seed that kills its process
or outlives `--seed-timeout` recorded as `crash`/`timeout` instead of taking
the Dask worker down, and one core per Dask worker thread without the GIL.

Records travel by `Worker.log_event` on a topic of this sweep: non-blocking
(the worker's batched stream to the scheduler) and ordered with the task's
own completion on the same streams, so when a batch's future is done its
records have arrived. A Distributed `Queue` would add a blocking round trip
per message, and Pub/Sub promises no delivery. A message per seed costs Dask
about as much CPU as a short seed, so records go a few at a time, as one
JSON string (Dask walks nested messages several times on each hop). The
rule: a worker thread sends at most one message per `_FLUSH` s, with every
record finished since the last, and its `WorkerPool` wakes at least every
0.25 s, so a record leaves its worker at most 0.35 s after its seed ends; the
sweep writes it to the results file on arrival.
A worker that dies mid-batch loses only records it had not yet sent; Dask
runs the batch again elsewhere. Records of seeds already received are then
dropped (runs are deterministic: they are equal), and a batch that ends with
seeds missing has them sent again, so no seed is lost or written twice.

`local:N` runs its Dask workers as threads of this process (they only wait
on their seedbed processes), with Dask's housekeeping slowed to what a sweep
needs: 2 ms of CPU a second at rest, against 14 ms for worker processes.

A search (`seedbed explore --scheduler`) uses the same pool with its own
worker module: its requests are plans (each with its seed, still the key),
and a plan's result is a function of the plan, so the search is the same.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import queue
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from seedbed._harness.sweeps._pool import _WORKER, WorkerPool
from seedbed.errors import UsageError

Record = dict[str, Any]
# seedbed is installed from a clone or a git URL, not an index, so the command
# names what the `dask` extra holds (pyproject.toml; a test keeps them equal).
DASK_REQUIREMENT = "dask[distributed]>=2024.1"
EXTRA = (
    f"the Dask backend needs dask.distributed, which is not installed here: "
    f"pip install '{DASK_REQUIREMENT}' (or uv add '{DASK_REQUIREMENT}')"
)
CONNECT_TIMEOUT = 10.0  # seconds to reach a scheduler before giving up
_TICK = 0.25  # seconds between progress updates while waiting
_FLUSH = 0.1  # seconds a finished record may wait on its worker to travel with others
_MAX_BATCH = 100  # seeds per task at most: a worker's death reruns at most this many
_IN_FLIGHT = 2  # batches per worker thread: one running, the next waiting on the worker
_SHARE = 2  # a batch takes 1/(_SHARE * threads) of the seeds not yet sent: big first, small last
_SHORTEST = 0.1  # seconds of seeds a batch holds at least: a task costs Dask ~5 ms of CPU
_ASK_EVERY = 5.0  # seconds between asking the scheduler how many worker threads it has
LOCAL_PROCESSES = False  # local:N runs its Dask workers as threads here (see `_connect`)
_ATTEMPTS = 3  # times a seed is sent before its missing record is an error


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise UsageError(EXTRA) from None
    return distributed


# -- the worker's side -------------------------------------------------------

_local = threading.local()
# Set when a sweep closes its `local:N` cluster: the cluster's worker threads are
# this process's, so a batch still running must stop on its own (within the
# pool's 0.25 s wake) or the sweep would wait for it to finish before exiting.
_stopping = threading.Event()


class _Stopped(Exception):
    """Raised inside a batch's pool loop when its sweep is closing."""


def _thread_pool(settings: dict[str, Any], seed_timeout: float, worker: str) -> WorkerPool:
    """This thread's seedbed worker process for these settings, started once.

    Per thread, because the process dies with the thread that started it
    (the worker asks Linux for that), so only that thread may use it.
    """
    key = json.dumps([settings, seed_timeout, worker], sort_keys=True)
    if getattr(_local, "key", None) != key:
        if getattr(_local, "pool", None) is not None:
            _local.pool.close()
        log_dir = Path(tempfile.gettempdir()) / f"seedbed-dask-{uuid.uuid4().hex[:8]}"
        _local.pool = WorkerPool(settings, 1, log_dir, seed_timeout, worker=worker)
        _local.key = key
    pool: WorkerPool = _local.pool
    return pool


class _Sender:
    """Sends finished records to the scheduler, a few at a time: one message per `_FLUSH` s.

    Called on each record and on each wake of the worker's pool (at least
    every 0.25 s), so no record waits more than `_FLUSH` + 0.25 s; one message
    per seed would cost about as much CPU in Dask's comms as a short seed.
    """

    def __init__(self, worker: Any, topic: str) -> None:
        self._worker, self._topic = worker, topic
        self._pending: list[Record] = []
        self._sent = time.monotonic()

    def add(self, record: Record) -> None:
        self._pending.append(record)
        self.flush(force=False)

    def flush(self, force: bool = True) -> None:
        now = time.monotonic()
        if self._pending and (force or now - self._sent >= _FLUSH):
            # One JSON string, not a list of dicts: Dask walks a nested message
            # several times (a msgpack check, a size estimate, encode and decode on
            # the scheduler and the client); a string it copies.
            self._worker.log_event(self._topic, {"records": json.dumps(self._pending)})
            self._pending, self._sent = [], now


def run_batch(settings: dict[str, Any], requests: list[Record], topic: str, seed_timeout: float,
              module: str = _WORKER) -> None:  # fmt: skip
    """The Dask task: answer `requests` (seeds, or a search's plans) on a seedbed
    worker running `module`, sending each record under `topic` soon after it finishes."""
    worker = _distributed().get_worker()
    pool = _thread_pool(settings, seed_timeout, module)
    sender = _Sender(worker, topic)

    def on_tick() -> None:
        if _stopping.is_set():
            raise _Stopped
        sender.flush(False)

    try:
        pool.run(iter(requests), sender.add, on_tick)
    except _Stopped:  # the sweep is closing: the seed in progress is not recorded
        pool.close()
        _local.key = _local.pool = None
    except UsageError as exc:  # sent as data: the client need not unpickle our class
        pool.close()
        _local.key = _local.pool = None
        sender.flush()
        worker.log_event(topic, {"usage": f"on Dask worker {worker.address}: {exc}"})
    finally:
        sender.flush()


# -- the client's side -------------------------------------------------------


# A cluster we start spends its CPU on seeds: no statistical profiler sampling the
# worker thread every 10 ms, slower housekeeping. The event-loop health check runs
# every 20 ms in each of the scheduler, nannies and workers: at 1 s a 2-worker
# cluster at rest uses 23 ms of CPU a second instead of 115. Work stealing has
# nothing to balance (batches wait on the scheduler until a worker thread is free).
_QUIET = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "10s",  # the dashboard's figures: none shown
    "distributed.admin.system-monitor.disk": False,
    "distributed.worker.memory.monitor-interval": "5s",  # a seed's memory is its process's
    "distributed.admin.tick.interval": "5s",
    "distributed.admin.tick.cycle": "5s",
    "distributed.scheduler.work-stealing": False,
    "distributed.scheduler.active-memory-manager.start": False,  # nothing to move: results are tiny
    "distributed.client.scheduler-info-interval": "10s",  # workers come and go rarely
}
_HEARTBEAT = 5.0  # seconds between a local worker's heartbeats (Dask's: 0.5 s for <= 10 workers)


def _quiet_worker(distributed: Any) -> type:
    """A Dask `Worker` that beats every `_HEARTBEAT` s: the scheduler (ours, in this
    process) has nothing to learn from it faster, and a beat costs a few hundred us."""

    class QuietWorker(distributed.Worker):  # type: ignore[misc]
        async def heartbeat(self) -> None:
            await super().heartbeat()  # which sets the interval the scheduler asks for
            self.periodic_callbacks["heartbeat"].callback_time = _HEARTBEAT * 1000
            # Looks for a task's missing inputs every second: a batch has none.
            missing = self.periodic_callbacks.get("find-missing")
            if missing is not None:
                missing.callback_time = _HEARTBEAT * 1000

    return QuietWorker


def _quiet_scheduler(cluster: Any) -> None:
    """Our in-process scheduler checks for an idle or workerless cluster every 5 s, not
    every 0.25 s: neither timeout is set here, so each check only wakes the event loop."""
    for name in ("idle-timeout", "no-workers-timeout"):
        callback = cluster.scheduler.periodic_callbacks.get(name)
        if callback is not None:
            callback.callback_time = max(callback.callback_time, _HEARTBEAT * 1000)


def check_address(scheduler: str) -> None:
    """A one-line `UsageError` unless `scheduler` reads as `tcp://HOST:PORT` or `local:N`
    (before anything is written: whether the scheduler answers is `_connect`'s to find)."""
    if scheduler.startswith("local:"):
        count = scheduler.removeprefix("local:")
        if not count.isdigit() or int(count) < 1:
            raise UsageError(f"--scheduler {scheduler}: write local:N with N >= 1 workers")
    elif "://" not in scheduler or not scheduler.rsplit(":", 1)[-1].isdigit():
        raise UsageError(
            f"--scheduler {scheduler}: not a scheduler address; "
            "write tcp://HOST:PORT (as `dask scheduler` prints) or local:N"
        )


@contextlib.contextmanager
def _hash_seed_kept() -> Iterator[None]:
    """Undo what a Dask nanny does to this process's environment: it sets
    PYTHONHASHSEED to 6640 before spawning a worker ("even if this means
    poisoning the process running the Nanny"), and every later subprocess of
    this process (a pool's seedbed workers, a test's pytest) would inherit it."""
    saved = os.environ.get("PYTHONHASHSEED")
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("PYTHONHASHSEED", None)
        else:
            os.environ["PYTHONHASHSEED"] = saved


def _connect(scheduler: str) -> tuple[Any, Any]:
    """(client, cluster we started or None) for `tcp://HOST:PORT` or `local:N`."""
    check_address(scheduler)
    distributed = _distributed()
    import dask

    if scheduler.startswith("local:"):
        count = scheduler.removeprefix("local:")
        # Worker threads in this process, not worker processes: a Dask worker only
        # waits on its seedbed process (the GIL is no matter), and in-process there
        # are no nannies, no comms between processes and one event loop to tick:
        # half the idle CPU of a cluster of processes (bench/sweep.py --versus-dask).
        with dask.config.set(_QUIET), _hash_seed_kept():
            cluster = distributed.LocalCluster(
                n_workers=int(count), threads_per_worker=1, processes=LOCAL_PROCESSES,
                **({} if LOCAL_PROCESSES else {"worker_class": _quiet_worker(distributed)}),
                dashboard_address=None, silence_logs=50,
                scheduler_sync_interval=_HEARTBEAT,  # a dashboard's metadata: 1 RPC/s by default
            )  # fmt: skip
            # Made inside the block too: it reads its scheduler-info interval when made
            # (made after, it asked for every worker's identity every 2 s).
            client = distributed.Client(cluster)
        if not LOCAL_PROCESSES:
            _quiet_scheduler(cluster)
        return client, cluster
    try:
        return distributed.Client(scheduler, timeout=CONNECT_TIMEOUT), None
    except (OSError, TimeoutError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(
            f"--scheduler {scheduler}: cannot reach a Dask scheduler there ({first}); "
            "is `dask scheduler` running, and the port open?"
        ) from None


class DaskPool:
    """Seeds run as batches on a Dask cluster; `run` and `close` as `WorkerPool`'s."""

    def __init__(self, scheduler: str, settings: dict[str, Any], seed_timeout: float,
                 worker: str = _WORKER) -> None:  # fmt: skip
        _stopping.clear()  # a sweep before this one in the process closed its cluster
        self._client, self._cluster = _connect(scheduler)
        self._settings = settings
        self._seed_timeout = seed_timeout
        self._worker = worker  # the module a Dask worker's seedbed process runs
        # By seed, the requests that carry more than it (a search's plans): a sweep's
        # millions of seeds are kept as numbers only.
        self._requests: dict[int, Record] = {}
        self._topic = f"seedbed-sweep-{uuid.uuid4().hex}"
        # Records as they arrive, a message's at once (one wake of `run` each); a batch's
        # end puts an empty list, so `run` sends the next batch without delay.
        self._arrived: queue.SimpleQueue[list[Record]] = queue.SimpleQueue()
        self._client.subscribe_topic(self._topic, self._received)
        self._seen: set[int] = set()
        self._sent: dict[int, int] = {}  # seed -> times sent, for seeds with no record yet
        self._batches = 0
        self._timed, self._seed_seconds = 0, 0.0  # records received and their seeds' wall time
        self._threads, self._asked = 1, -math.inf
        if self._cluster is not None and not LOCAL_PROCESSES:  # threads here: none join or leave
            self._threads, self._asked = int(scheduler.removeprefix("local:")), math.inf

    @property
    def threads(self) -> int:
        """How many seeds the cluster runs at once (its worker threads), asked every few s.

        Workers may join or leave a real cluster during a sweep.
        """
        now = time.monotonic()
        if now - self._asked > _ASK_EVERY:
            nthreads: dict[str, int] = self._client.nthreads()
            self._threads, self._asked = max(1, sum(nthreads.values())), now
        return self._threads

    def run(
        self,
        requests: Iterable[Record],
        on_record: Callable[[Record], None],
        on_tick: Callable[[], None] = lambda: None,
    ) -> None:
        """Run every request on the cluster; `on_record` once per seed, as records arrive.

        Batches are cut as workers need them, each a share of the seeds not yet
        sent (guided self-scheduling): long batches while many seeds remain keep
        Dask's per-task cost small, short ones at the end keep every worker busy
        until the last seed instead of one finishing a long batch alone.
        """
        # Each call's seeds are its own (a search calls once per batch of plans, and
        # two batches may draw one seed): every batch of an earlier call is done.
        self._seen.clear()
        todo: deque[int] = deque()
        for request in requests:
            if len(request) > 1:
                self._requests[int(request["seed"])] = request
            todo.append(int(request["seed"]))
        running: dict[Any, list[int]] = {}
        while todo or running:
            while todo and len(running) < self.threads * _IN_FLIGHT:
                seeds = [todo.popleft() for _ in range(self._batch_size(len(todo)))]
                running[self._submit(seeds)] = seeds
            self._deliver(on_record)  # a batch's records arrive before it is done
            for future in [future for future in running if future.done()]:
                todo.extendleft(reversed(self._finished(future, running.pop(future))))
            on_tick()

    def _batch_size(self, unsent: int) -> int:
        size = math.ceil(unsent / (_SHARE * self.threads))
        if self._seed_seconds > 0:  # never so short that Dask's cost per task outweighs the seeds
            size = max(size, math.ceil(_SHORTEST * self._timed / self._seed_seconds))
        return max(1, min(size, _MAX_BATCH, unsent))

    def _received(self, event: tuple[float, Record]) -> None:
        """On the client's event-loop thread: hand the records to the sweep's thread."""
        message = event[1]
        if "usage" in message:
            self._arrived.put([message])  # the target cannot run there: the sweep stops
            return
        records = json.loads(message["records"])
        for record in records:
            record["worker"] = message.get("worker")  # which Dask worker ran it (display only)
        self._arrived.put(records)

    def _submit(self, seeds: list[int]) -> Any:
        self._batches += 1
        for seed in seeds:
            self._sent[seed] = self._sent.get(seed, 0) + 1
            if self._sent[seed] > _ATTEMPTS:
                raise UsageError(
                    f"seed {seed} ran {_ATTEMPTS} times on the Dask cluster and its record "
                    "never arrived; --resume continues the sweep"
                )
        future = self._client.submit(
            run_batch, self._settings, [self._requests.get(seed, {"seed": seed}) for seed in seeds],
            self._topic, self._seed_timeout, self._worker,
            key=f"seedbed-batch-{self._topic[-8:]}-{self._batches}", pure=False,
        )  # fmt: skip
        future.add_done_callback(lambda _: self._arrived.put([]))  # wakes `run`
        return future

    def _deliver(self, on_record: Callable[[Record], None]) -> None:
        """Hand on what has arrived, waiting (at most `_TICK` s) for a record or a batch's end."""
        try:
            records = self._arrived.get(timeout=_TICK)
            while True:
                for record in records:
                    self._take(record, on_record)
                records = self._arrived.get_nowait()
        except queue.Empty:
            return

    def _take(self, record: Record, on_record: Callable[[Record], None]) -> None:
        if "usage" in record:
            raise UsageError(str(record["usage"]))
        if record["seed"] in self._seen:  # a rerun batch repeats equal records
            return
        self._seen.add(record["seed"])
        self._sent.pop(record["seed"], None)
        self._requests.pop(record["seed"], None)
        self._timed += 1
        self._seed_seconds += float(record.get("wall_time") or 0.0)
        on_record(record)

    def _finished(self, future: Any, seeds: list[int]) -> list[int]:
        """The batch's seeds with no record yet; raise if the target cannot run."""
        if future.status == "error":
            exc = future.exception()
            raise UsageError(
                f"a Dask task running seeds {seeds[0]}-{seeds[-1]} failed "
                f"({type(exc).__name__}: {exc}); --resume continues the sweep"
            )
        return [seed for seed in seeds if seed not in self._seen]

    def close(self) -> None:
        """Cancel what still runs; close the client and any cluster we started."""
        if self._cluster is not None:
            _stopping.set()  # our cluster's batches run in this process's threads
        try:
            self._client.unsubscribe_topic(self._topic)
            self._client.close()
        finally:
            if self._cluster is not None:
                self._cluster.close()
