# ruff: noqa
"""Banned uses for `seedbed lint`: never imported, only read by test_lint.py.

Every line ending in `# expect: CODE [CODE...]` must produce exactly those
findings (a code twice: two findings on that line), and no other line any.
"""

import _thread
import asyncio
import concurrent.futures
import datetime
import datetime as dt
import functools
import multiprocessing
import os
import random
import secrets
import select
import signal
import socket
import subprocess
import threading
import time
import time as t
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from datetime import datetime as DateTime
from os import urandom
from random import Random, SystemRandom
from socket import create_connection
from time import monotonic
from time import sleep as snooze
from time import time as now

import numpy as np

# -- SB101: a clock read at import time ---------------------------------------
START = time.time()  # expect: SB101
BOOT = t.monotonic_ns()  # expect: SB101
STAMP = now()  # expect: SB101
TODAY = date.today()  # expect: SB101
NOW = DateTime.now()  # expect: SB101
UTC = datetime.datetime.utcnow()  # expect: SB101
ALIASED = dt.datetime.now()  # expect: SB101
YEAR = time.strftime("%Y")  # expect: SB101
CPU = os.times()  # expect: SB101
ELAPSED = monotonic() - START  # expect: SB101


def deadline(at=time.monotonic() + 5):  # expect: SB101
    return at


def stamped(*, when=time.time_ns()):  # expect: SB101
    return when


class Config:
    created = time.perf_counter()  # expect: SB101
    timeout: float = 1.0


@functools.lru_cache(maxsize=int(time.time()))  # expect: SB101
def cached() -> int:
    return 1


# -- SB102: entropy or a process id read at import time -------------------------
TOKEN = secrets.token_hex(8)  # expect: SB102
NODE_ID = uuid.uuid4()  # expect: SB102
SALT = urandom(16)  # expect: SB102
PICK = random.choice([1, 2, 3])  # expect: SB102
PID = os.getpid()  # expect: SB102


def connect(retry_id=uuid.uuid1()):  # expect: SB102
    return retry_id


# -- SB103: a copy of a clock that interposition cannot rebind ------------------
CLOCK = datetime.datetime.now  # expect: SB103
TODAY_FN = date.today  # expect: SB103
CLOCKS = [time.time, monotonic]  # expect: SB103 SB103


def stamp(clock=DateTime.now):  # expect: SB103
    return clock()


# -- SB101, SB102: a function of this module that reads them, run at import time
def make_timer():
    started = time.monotonic()
    return lambda: time.monotonic() - started


def make_id():
    return uuid.uuid4().hex


TIMER = make_timer()  # expect: SB101
INSTANCE = make_id()  # expect: SB102


# -- SB104: a clock or entropy read in a cached function -------------------------
@functools.cache
def boot_time():
    return time.time()  # expect: SB104


@functools.lru_cache(maxsize=1)
def instance_token():
    def inner():
        return secrets.token_hex(4)  # runs when inner is called, not cached

    return inner, random.random()  # expect: SB104


# -- SB201: a generator without a seed --------------------------------------------
_rng = random.Random()  # expect: SB201
_sys = SystemRandom()  # expect: SB201
secure = secrets.SystemRandom()  # expect: SB201


def make_rng():
    return Random(None)  # expect: SB201


# -- SB202: numpy's random numbers ----------------------------------------------------
def numbers():
    a = np.random.rand(3)  # expect: SB202
    g = np.random.default_rng()  # expect: SB202
    return a, g


# -- SB203: a generator made at import time ------------------------------------------
SHARED = Random(42)  # expect: SB203


class Node:
    rng = random.Random(7)  # expect: SB203


# -- SB301-SB305: escapes, wherever they are ------------------------------------------
class Worker(threading.Thread):  # a simulated thread inside a run: not reported
    pass


async def escapes():
    threading.Thread(target=print).start()
    pool = ThreadPoolExecutor(max_workers=2)
    timer = threading.Timer(1.0, print)
    _thread.start_new_thread(print, ())  # expect: SB301
    subprocess.run(["ls"])  # expect: SB302
    os.system("ls")  # expect: SB302
    os.popen("ls")  # expect: SB302
    multiprocessing.Process(target=print)  # expect: SB302
    concurrent.futures.ProcessPoolExecutor()  # expect: SB302
    await asyncio.create_subprocess_exec("ls")  # expect: SB302
    socket.socket()  # expect: SB303
    create_connection(("example.com", 80))  # expect: SB303
    time.sleep(1)  # expect: SB304
    snooze(0.1)  # expect: SB304
    select.select([], [], [], 1)  # expect: SB305
    signal.alarm(1)  # expect: SB305
    return pool, timer


# -- SB401-SB403: orders and values set by id() and hash() ----------------------------
def order(items):
    a = sorted(items, key=id)  # expect: SB401
    b = sorted(items, key=hash)  # expect: SB401
    c = max(items, key=lambda x: id(x))  # expect: SB401
    items.sort(key=lambda x: (hash(x), 0))  # expect: SB401
    return id(a) < id(b), c  # expect: SB401 SB401


def shard(key, n):
    return hash(key) % n  # expect: SB402


def label(obj):
    return f"obj-{id(obj)}", str(id(obj))  # expect: SB403 SB403


# -- SB411: iteration over a set ------------------------------------------------------
def sets(names):
    for x in {"a", "b"}:  # expect: SB411
        print(x)
    seen = set(names)
    out = list(seen)  # expect: SB411
    joined = ",".join({n.upper() for n in names})  # expect: SB411
    keys = frozenset(["x", "y"])
    first = [k for k in keys]  # expect: SB411
    both = seen | keys
    for y in both:  # expect: SB411
        print(y)
    print(*seen)  # expect: SB411
    seen.pop()  # expect: SB411
    index = dict.fromkeys(seen)  # expect: SB411
    lengths = list(map(len, keys))  # expect: SB411
    return out, joined, first


def annotated(tags: set[str]):
    for tag in tags:  # expect: SB411
        print(tag)


class Registry:
    def __init__(self):
        self.names = set()

    def add(self, name: str):
        self.names.add(name)

    def dump(self):
        return [n for n in self.names]  # expect: SB411


# -- SB501, SB502: pragmas --------------------------------------------------------
NO_REASON = time.time()  # seedbed: allow  # expect: SB501 SB101
UNKNOWN = time.time()  # seedbed: permit it is fine  # expect: SB501 SB101
STALE = 1  # seedbed: allow there is nothing here  # expect: SB502
ALLOWED = time.time()  # seedbed: allow a build stamp, printed and never compared
