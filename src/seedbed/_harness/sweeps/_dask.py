"""A sweep on a Dask cluster: the same records, streamed back per seed.

`DaskPool` has the local `WorkerPool`'s interface (`run`, `close`), so the
sweep engine, the results file, resume and the summary are the same code
whichever runs the seeds. Only the target's name, the run options and seed
numbers go over the wire; each Dask worker imports the target itself, and
records come back as JSON-able dicts.

The cluster runs one long `feed` task per worker thread (`_dask_feed`),
pinned to its worker, for the sweep's whole life: a task costs Dask about
6 ms of CPU, a batch put in the feeder's own `Queue` under 1 ms. Each feeder
runs its batches through seedbed's own worker process and sends the records
back under a topic of this sweep, a few at a time (`_dask_feed.FLUSH`), the
last of each batch marked `done`; the client takes records only of batches
it still waits for. The client keeps each feeder one batch
ahead while many seeds remain, so no worker waits for the client, and only
one batch each near the end, so none sits on a queued batch while another
worker idles. A feeder gets batches only once it says it runs: on a cluster
shared with other work, one still waiting for a thread holds none.

A worker that dies mid-batch loses only records it had not yet sent. The
client asks the scheduler for its workers every `_ASK_EVERY` s: a feeder
whose worker left is retired, the seeds of its batches with no record yet go
first to the others, and a worker that joins (a nanny's restart) gets
feeders of its own. Records of seeds already received are dropped (runs are
deterministic: they are equal), so no seed is lost or written twice. A
feeder idle for `_dask_feed.IDLE` s ends (its client may be gone); the next
batch for its worker starts another.

`local:N` runs its Dask workers as threads of this process (they only wait
on their seedbed processes), with Dask's housekeeping slowed to what a sweep
needs: 0.06 ms of CPU a second at rest, against 14 ms for worker processes.

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
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from seedbed._harness.sweeps import _dask_feed
from seedbed._harness.sweeps._pool import _WORKER
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
_TICK = 1.0  # seconds between progress checks while waiting (a status line is due every 5 s)
_MAX_BATCH = 100  # seeds per batch at most: a worker's death sends at most this many again
_IN_FLIGHT = 2  # batches per feeder: one running, the next waiting in its queue
_SHARE = 2  # a batch takes 1/(_SHARE * threads) of the seeds not yet sent: big first, small last
_SHORTEST = 0.1  # seconds of seeds a batch holds at least: a batch costs Dask ~1.5 ms of CPU
_ASK_EVERY = 5.0  # seconds between asking the scheduler how many worker threads it has
LOCAL_PROCESSES = False  # local:N runs its Dask workers as threads here (see `_connect`)
_ATTEMPTS = 3  # times a seed is sent before its missing record is an error


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise UsageError(EXTRA) from None
    return distributed


# -- the client's side -------------------------------------------------------


# A cluster we start spends its CPU on seeds: no statistical profiler sampling the
# worker thread every 10 ms, slower housekeeping. The event-loop health check runs
# every 20 ms in each of the scheduler, nannies and workers: at 1 s a 2-worker
# cluster at rest uses 23 ms of CPU a second instead of 115. Work stealing has
# nothing to balance (each feeder is pinned to its worker).
_HOUSEKEEPING = 30.0  # seconds between the in-process cluster's own checks and reports
_QUIET = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "30s",  # the dashboard's figures: none shown
    "distributed.admin.system-monitor.disk": False,
    "distributed.worker.memory.monitor-interval": "30s",  # a seed's memory is its process's
    "distributed.admin.tick.interval": "30s",
    "distributed.admin.tick.cycle": "30s",
    "distributed.scheduler.work-stealing": False,
    "distributed.scheduler.active-memory-manager.start": False,  # nothing to move: results are tiny
    "distributed.client.scheduler-info-interval": "30s",  # workers come and go rarely
}


def _quiet_worker(distributed: Any) -> type:
    """A Dask `Worker` that beats every `_HOUSEKEEPING` s: the scheduler (ours, in this
    process) has nothing to learn from it faster, and a beat costs a few hundred us."""

    class QuietWorker(distributed.Worker):  # type: ignore[misc]
        async def heartbeat(self) -> None:
            await super().heartbeat()  # which sets the interval the scheduler asks for
            _slow(self.periodic_callbacks)

    return QuietWorker


def _slow(callbacks: dict[str, Any]) -> None:
    """Every periodic callback of one part of our in-process cluster at most once per
    `_HOUSEKEEPING` s. Each wakes the event loop (about 0.15 ms of CPU a wake here):
    at Dask's intervals (0.25-5 s) the idle cluster used 1.5 ms of CPU a second.
    None of them has work here: a worker thread cannot die alone, nothing spills,
    no dashboard shows their figures, no idle or workerless timeout is set."""
    for callback in callbacks.values():
        callback.callback_time = max(callback.callback_time, _HOUSEKEEPING * 1000)


def _quiet_cluster(cluster: Any, client: Any) -> None:
    """Slow the housekeeping Dask's configuration does not reach (`_slow`)."""
    _slow(cluster.scheduler.periodic_callbacks)
    for worker in cluster.workers.values():
        _slow(worker.periodic_callbacks)
    _slow(getattr(client, "_periodic_callbacks", {}))


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
                scheduler_sync_interval=_HOUSEKEEPING,  # a dashboard's metadata: 1 RPC/s by default
            )  # fmt: skip
            # Made inside the block too: it reads its scheduler-info interval when made
            # (made after, it asked for every worker's identity every 2 s).
            client = distributed.Client(cluster)
        if not LOCAL_PROCESSES:
            _quiet_cluster(cluster, client)
        return client, cluster
    try:
        return distributed.Client(scheduler, timeout=CONNECT_TIMEOUT), None
    except (OSError, TimeoutError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(
            f"--scheduler {scheduler}: cannot reach a Dask scheduler there ({first}); "
            "is `dask scheduler` running, and the port open?"
        ) from None


@dataclass
class _Feeder:
    """One `feed` task on one worker thread, its queue, and the batches given to it."""

    worker: str  # the Dask worker it is pinned to
    queue: Any  # its `distributed.Queue` of batches
    future: Any
    name: str  # its queue's, which its first message names
    started: bool = False  # it said so: only then does it get batches
    batches: deque[int] = field(default_factory=deque)  # given, not yet done; oldest first


class DaskPool:
    """Seeds run as batches on a Dask cluster; `run` and `close` as `WorkerPool`'s."""

    def __init__(self, scheduler: str, settings: dict[str, Any], seed_timeout: float,
                 worker: str = _WORKER) -> None:  # fmt: skip
        _dask_feed.stopping.clear()  # a sweep before this one in the process closed its cluster
        self._client, self._cluster = _connect(scheduler)
        self._settings = settings
        self._seed_timeout = seed_timeout
        self._worker = worker  # the module a Dask worker's seedbed process runs
        # By seed, the requests that carry more than it (a search's plans): a sweep's
        # millions of seeds are kept as numbers only.
        self._requests: dict[int, Record] = {}
        self._topic = f"seedbed-sweep-{uuid.uuid4().hex}"
        # What the feeders said, a message's at once (one wake of `run` each).
        self._arrived: queue.SimpleQueue[Record] = queue.SimpleQueue()
        self._client.subscribe_topic(self._topic, self._received)
        self._seen: set[int] = set()
        self._sent: dict[int, int] = {}  # seed -> times sent, for seeds with no record yet
        self._feeders: list[_Feeder] = []
        self._batches: dict[int, tuple[_Feeder, list[int]]] = {}  # given, not yet done
        self._count = 0  # feeders and batches made: their names
        self._timed, self._seed_seconds = 0, 0.0  # records received and their seeds' wall time
        self._workers: dict[str, int] = {}  # the cluster's worker threads, by worker
        self._asked = -math.inf
        self._local = self._cluster is not None and not LOCAL_PROCESSES  # none join or leave

    @property
    def threads(self) -> int:
        """How many seeds the cluster runs at once (its worker threads), asked every few s.

        Workers may join or leave a real cluster during a sweep.
        """
        now = time.monotonic()
        if now - self._asked > _ASK_EVERY:
            self._workers = dict(self._client.nthreads())
            self._asked = math.inf if self._local else now
        return max(1, sum(self._workers.values()))

    def run(
        self,
        requests: Iterable[Record],
        on_record: Callable[[Record], None],
        on_tick: Callable[[], None] = lambda: None,
    ) -> None:
        """Run every request on the cluster; `on_record` once per seed, as records arrive.

        Batches are cut as feeders need them, each a share of the seeds not yet
        sent (guided self-scheduling): long batches while many seeds remain keep
        the messages per seed few, short ones at the end keep every worker busy
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
        while todo or self._batches:
            self._staff(todo)
            self._hand_out(todo)
            self._deliver(todo, on_record)
            on_tick()

    # -- feeders ---------------------------------------------------------------

    def _staff(self, todo: deque[int]) -> None:
        """One feeder per worker thread: new ones for workers that joined, and those of
        workers that left (or that ended idle, or failed) retired, their seeds sent again."""
        self.threads  # noqa: B018 (asks the scheduler for its workers every few s)
        for feeder in list(self._feeders):
            if feeder.worker not in self._workers or feeder.future.done():
                self._retire(feeder, todo)
        have = Counter(feeder.worker for feeder in self._feeders)
        for address, count in sorted(self._workers.items()):
            for _ in range(count - have[address]):
                self._feeders.append(self._start(address))

    def _start(self, address: str) -> _Feeder:
        distributed = _distributed()
        self._count += 1
        name = f"{self._topic}-{self._count}"
        work = distributed.Queue(name, client=self._client)
        future = self._client.submit(
            _dask_feed.feed, self._settings, name, self._topic, self._seed_timeout, self._worker,
            self._local,
            key=f"seedbed-feed-{self._topic[-8:]}-{self._count}", pure=False,
            workers=[address], allow_other_workers=False,
        )  # fmt: skip
        future.add_done_callback(lambda _: self._arrived.put({}))  # wakes `run`
        return _Feeder(address, work, future, name)

    def _retire(self, feeder: _Feeder, todo: deque[int]) -> None:
        """Forget a feeder; the seeds of its batches with no record yet go first next."""
        if feeder.future.status == "error":
            exc = feeder.future.exception()
            raise UsageError(
                f"a Dask task running seeds on {feeder.worker} failed "
                f"({type(exc).__name__}: {exc}); --resume continues the sweep"
            )
        self._feeders.remove(feeder)
        for batch in reversed(feeder.batches):
            todo.extendleft(reversed(self._unfinished(batch)))
        if not feeder.future.done():  # its worker left: Dask would wait for it to come back
            feeder.future.cancel()
            with contextlib.suppress(Exception):  # should the worker be alive after all
                feeder.queue.put(_dask_feed.STOP)

    def _hand_out(self, todo: deque[int]) -> None:
        """A batch to each feeder with none; a second, to start on at once, while many
        seeds remain (near the end a second would leave others idle at the last)."""
        ahead = len(todo) > _IN_FLIGHT * len(self._feeders)
        for feeder in self._feeders:
            while feeder.started and todo and len(feeder.batches) < (_IN_FLIGHT if ahead else 1):
                seeds = [todo.popleft() for _ in range(self._batch_size(len(todo)))]
                self._give(feeder, seeds)

    def _give(self, feeder: _Feeder, seeds: list[int]) -> None:
        for seed in seeds:
            self._sent[seed] = self._sent.get(seed, 0) + 1
            if self._sent[seed] > _ATTEMPTS:
                raise UsageError(
                    f"seed {seed} ran {_ATTEMPTS} times on the Dask cluster and its record "
                    "never arrived; --resume continues the sweep"
                )
        self._count += 1
        requests = [self._requests.get(seed, {"seed": seed}) for seed in seeds]
        feeder.queue.put(json.dumps({"batch": self._count, "requests": requests}))
        feeder.batches.append(self._count)
        self._batches[self._count] = (feeder, seeds)

    def _batch_size(self, unsent: int) -> int:
        size = math.ceil(unsent / (_SHARE * self.threads))
        if self._seed_seconds > 0:  # never so short that a message per batch outweighs its seeds
            size = max(size, math.ceil(_SHORTEST * self._timed / self._seed_seconds))
        return max(1, min(size, _MAX_BATCH, unsent))

    def _unfinished(self, batch: int) -> list[int]:
        """A batch's seeds with no record yet; the batch is forgotten."""
        _, seeds = self._batches.pop(batch)
        return [seed for seed in seeds if seed not in self._seen]

    # -- records -----------------------------------------------------------------

    def _received(self, event: tuple[float, Record]) -> None:
        """On the client's event-loop thread: hand the message to the sweep's thread."""
        message = event[1]
        if "records" in message:
            records = json.loads(message["records"])
            for record in records:
                record["worker"] = message.get("worker")  # which Dask worker ran it (display only)
            message = {**message, "records": records}
        self._arrived.put(message)

    def _deliver(self, todo: deque[int], on_record: Callable[[Record], None]) -> None:
        """Hand on what has arrived, waiting (at most `_TICK` s) for a message."""
        try:
            message = self._arrived.get(timeout=_TICK)
            while True:
                if "usage" in message:  # the target cannot run there: the sweep stops
                    raise UsageError(str(message["usage"]))
                if "started" in message:
                    self._started(str(message["started"]))
                # Only a batch still waited for: one of a feeder retired while its worker
                # lived on is sent again, and an earlier call's seed may be a new plan.
                if message.get("batch") in self._batches:
                    for record in message["records"]:
                        self._take(record, on_record)
                    if message.get("done"):
                        self._done(int(message["batch"]), todo)
                message = self._arrived.get_nowait()
        except queue.Empty:
            return

    def _started(self, name: str) -> None:
        for feeder in self._feeders:
            if feeder.name == name:
                feeder.started = True

    def _done(self, batch: int, todo: deque[int]) -> None:
        feeder, _ = self._batches[batch]
        feeder.batches.remove(batch)
        todo.extendleft(reversed(self._unfinished(batch)))

    def _take(self, record: Record, on_record: Callable[[Record], None]) -> None:
        if record["seed"] in self._seen:  # a batch sent again repeats equal records
            return
        self._seen.add(record["seed"])
        self._sent.pop(record["seed"], None)
        self._requests.pop(record["seed"], None)
        self._timed += 1
        self._seed_seconds += float(record.get("wall_time") or 0.0)
        on_record(record)

    def close(self) -> None:
        """Stop the feeders; close the client and any cluster we started."""
        if self._cluster is not None:
            _dask_feed.stopping.set()  # our cluster's batches run in this process's threads
        try:
            # Only to a scheduler still there: a put to a lost one waits to reconnect.
            for feeder in self._feeders if self._client.status == "running" else ():
                with contextlib.suppress(Exception):  # it may go while we tell them
                    feeder.queue.put(_dask_feed.STOP, timeout=_TICK)
            self._client.unsubscribe_topic(self._topic)
            self._client.close()
        finally:
            if self._cluster is not None:
                self._cluster.close()
