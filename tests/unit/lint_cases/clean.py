# ruff: noqa
"""Correct code `seedbed lint` must not report: never imported, only read by test_lint.py.

Clocks and entropy read inside functions are virtualized during a run;
references to the module functions are rebound wherever they are held; tasks
hash by creation number; executors run inline on seedbed's loop.
"""

import asyncio
import datetime
import functools
import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime as DateTime
from time import monotonic
from time import time as now

CLOCK = time.monotonic  # a module global holding the function: rebound in a run
DEFAULT_TIMEOUT = 5.0
EPOCH = time.localtime(0)  # an explicit time: no clock read
random.seed(1234)  # reseeded by every run anyway
a_clock, b_clock = (time.monotonic, time.time)  # unpacked, not held in the tuple
PORTS = {8080, 8081}


def elapsed(clock=time.monotonic, wall=now):  # defaults holding functions are rebound
    return clock() - wall()


@dataclass
class Event:
    at: float = field(default_factory=time.time)
    clock = monotonic  # class attributes are rebound
    names: set[str] = field(default_factory=set)

    def __hash__(self):
        return hash((self.at, 1))

    def sorted_names(self):
        return sorted(self.names)


class Service:
    def __init__(self):
        self._tasks = set()
        self.ports: set[int] = set()

    def spawn(self):
        task = asyncio.create_task(asyncio.sleep(1))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def stop(self):
        for task in self._tasks:  # tasks hash by creation number
            task.cancel()
        return [p for p in self.ports]


async def main(names: list[str]):
    start = time.time()  # inside a run: virtual time
    await asyncio.sleep(1)
    today = datetime.date.today()
    now_fn = DateTime.now  # inside a function: the stand-in's method
    token = uuid.uuid4()
    jitter = random.uniform(0, 1)
    rng = random.Random(7)
    loop = asyncio.get_running_loop()
    await asyncio.to_thread(print, "runs inline")
    await loop.run_in_executor(None, print, "runs inline")
    done, pending = await asyncio.wait([asyncio.create_task(asyncio.sleep(0))], timeout=1)
    for task in done:
        task.result()
    for task in pending:
        task.cancel()
    background = set()
    for _ in range(3):
        background.add(asyncio.create_task(asyncio.sleep(0)))
    await asyncio.gather(*background)
    for port in PORTS:
        print(port)
    for i in set(range(3)):
        print(i)
    ordered = sorted({"b", "a"})
    count = len(set(names))
    found = "a" in {"a", "b"}
    some = any(n.startswith("x") for n in set(names))
    total = sum(len(n) for n in {"a", "bb"})
    by_id = {id(obj): obj for obj in names}  # id() as a key: fine
    same = names[0] is names[-1]
    hash(tuple(names))  # asks only whether it is hashable
    lock = threading.Lock()
    event = asyncio.Event()
    wait_event = threading.Event()
    ids: set[int] = set(range(4))
    for i in ids:
        print(i)
    return start, today, now_fn, token, jitter, rng, ordered, count, found, some, total, by_id


def make_timer():
    started = time.monotonic()
    return lambda: time.monotonic() - started


async def make_async_timer():
    return time.monotonic()


@functools.cache
def parse_port(text: str) -> int:  # cached, but reads no clock
    return int(text)


def run_later():
    return make_timer()  # inside a function: the factory runs inside the run


ASYNC_TIMER = make_async_timer  # a reference, not a call
PORT = parse_port("8080")


def is_ready(event: threading.Event) -> bool:
    return event.is_set()


if __name__ == "__main__":
    print(time.time(), random.random())  # a script's main, not an import
