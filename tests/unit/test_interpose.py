"""Interposition: inside a run clocks and entropy read the host; escapes raise.

Each test drives `activate`/`deactivate` the way the loop does (try/finally)
with a fake host, so these tests do not depend on the loop.
"""

from __future__ import annotations

import _thread
import contextlib
import datetime
import os
import queue
import random
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from seedbed.aio import _interpose
from seedbed.errors import SimulationEscape, UsageError

WALL_NS = 1_000_000_000_123_456_789  # 2001-09-09T01:46:40.123456789Z
MONO_NS = 5_250_000_000
REAL = {
    name: getattr(time, name)
    for name in ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns")
}
REAL_DATETIME, REAL_DATE = datetime.datetime, datetime.date
HIDDEN_REAL_DATETIME = (datetime.datetime,)
REAL_RANDOM_SEED = random.Random.seed
REAL_SLEEP, REAL_UUID4 = time.sleep, uuid.uuid4
# Everything a run rebinds, as (namespace, name, original), for leak checks.
ORIGINALS = [
    *((time, name, fn) for name, fn in REAL.items()),
    (time, "sleep", REAL_SLEEP),
    (datetime, "datetime", REAL_DATETIME),
    (datetime, "date", REAL_DATE),
    (os, "urandom", os.urandom),
    (random, "_urandom", os.urandom),
    (random, "seed", random.seed),
    (uuid, "uuid1", uuid.uuid1),
    (uuid, "uuid4", REAL_UUID4),
    (threading, "_start_new_thread", getattr(threading, "_start_new_thread", None)),
    (threading, "_start_joinable_thread", getattr(threading, "_start_joinable_thread", None)),
]


class FakeHost:
    """The InterposeHost protocol over a seeded generator and settable clocks."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.wall = WALL_NS
        self.mono = MONO_NS
        self.escapes: list[str] = []
        self.reasons: list[str] = []

    def monotonic_ns(self) -> int:
        return self.mono

    def wall_ns(self) -> int:
        return self.wall

    def urandom(self, n: int, reason: str) -> bytes:
        self.reasons.append(reason)
        return self.rng.getrandbits(8 * n).to_bytes(n, "big") if n else b""

    def seed_for(self, reason: str) -> int:
        self.reasons.append(reason)
        return self.rng.getrandbits(64)

    def node_name(self) -> str:
        return ""

    def escape(self, call: str, instead: str) -> SimulationEscape:
        self.escapes.append(call)
        return SimulationEscape(f"{call} inside a simulated run: {instead}")


def in_run(body: Callable[[], Any], host: FakeHost | None = None) -> Any:
    """Run `body` interposed, restoring in `finally` as the loop does."""
    _interpose.activate(host or FakeHost())
    try:
        return body()
    finally:
        _interpose.deactivate()


@pytest.fixture(autouse=True)
def _no_run_leaks() -> Iterator[None]:
    yield
    assert _interpose.active_host() is None, "a test left interposition active"
    leaked = [name for ns, name, fn in ORIGINALS if getattr(ns, name, None) is not fn]
    assert not leaked, f"not restored: {leaked}"
    assert random.Random.__dict__["seed"] is REAL_RANDOM_SEED


def near_real(value: float, real: Callable[[], float]) -> bool:
    return abs(value - real()) < 60


# -- clocks ----------------------------------------------------------------------


def test_every_time_function_reads_the_host_during_a_run_and_the_real_clock_after() -> None:
    host = FakeHost()

    def body() -> dict[str, float]:
        host.mono += 1_000  # the host's clock moves; the stand-ins follow it
        return {name: getattr(time, name)() for name in REAL}

    seen = in_run(body, host)
    assert seen["time"] == WALL_NS / 1e9 and seen["time_ns"] == WALL_NS
    assert seen["monotonic"] == seen["perf_counter"] == (MONO_NS + 1_000) / 1e9
    assert seen["monotonic_ns"] == seen["perf_counter_ns"] == MONO_NS + 1_000
    assert near_real(time.time(), REAL["time"])
    assert near_real(time.monotonic(), REAL["monotonic"])


def test_copies_made_with_from_import_read_the_host_and_are_restored(make_module: Any) -> None:
    in_run(lambda: None)  # warm the scan cache: the module below is new to it
    module = make_module("from time import monotonic, time as wall, perf_counter_ns")
    seen = in_run(
        lambda: (
            module.monotonic(),
            module.wall(),
            module.perf_counter_ns(),
            vars(queue)["time"](),  # queue.py: from time import monotonic as time
            vars(threading)["_time"](),
        )
    )
    assert seen == (MONO_NS / 1e9, WALL_NS / 1e9, MONO_NS, MONO_NS / 1e9, MONO_NS / 1e9)
    assert module.monotonic is REAL["monotonic"] and module.wall is REAL["time"]
    assert vars(queue)["time"] is REAL["monotonic"] is vars(threading)["_time"]


def test_a_module_first_imported_during_a_run_keeps_working_after_it(make_module: Any) -> None:
    module = in_run(lambda: make_module("from time import monotonic"))
    assert module.monotonic is not REAL["monotonic"]  # it copied the stand-in...
    assert near_real(module.monotonic(), REAL["monotonic"])  # ...which reads real time now


def test_other_threads_keep_the_real_clock_and_sockets_during_a_run() -> None:
    go, done = threading.Event(), threading.Event()
    seen: list[float] = []

    def other() -> None:
        go.wait()
        seen.append(time.monotonic())
        with socket.socket() as s:  # would escape on the run's thread
            seen.append(s.family.value)
        done.set()

    worker = threading.Thread(target=other)
    worker.start()  # before the run: starting a thread inside it escapes
    host = FakeHost()

    def body() -> None:
        go.set()
        assert done.wait(10)

    in_run(body, host)
    worker.join()
    assert near_real(seen[0], REAL["monotonic"]) and seen[1] == socket.AF_INET.value
    assert host.escapes == []


# -- datetime --------------------------------------------------------------------


def test_datetime_now_today_and_utcnow_read_the_virtual_wall_clock(make_module: Any) -> None:
    module = make_module("from datetime import datetime")
    utc = datetime.UTC
    plus2 = datetime.timezone(datetime.timedelta(hours=2))
    expected = REAL_DATETIME(2001, 9, 9, 1, 46, 40, 123456, tzinfo=utc)

    def body() -> tuple[Any, ...]:
        # Module globals such as REAL_DATETIME are rebound during the run
        # (that is the point): reach the real class through a tuple.
        real_made = HIDDEN_REAL_DATETIME[0].fromtimestamp(0)
        assert type(real_made) is not datetime.datetime
        return (
            datetime.datetime.now(utc),
            datetime.datetime.now(tz=plus2),
            datetime.datetime.now(),
            datetime.datetime.today(),
            datetime.datetime.utcnow(),
            datetime.date.today(),
            module.datetime.now(utc),
            isinstance(real_made, module.datetime),
            repr(datetime.datetime.now(utc)),
        )

    aware, shifted, local, today, utcnow, date, copied, accepts, text = in_run(body)
    assert aware == expected == copied and shifted == expected and shifted.hour == 3
    assert local == today == expected.astimezone().replace(tzinfo=None)
    assert utcnow == expected.replace(tzinfo=None)
    assert date == REAL_DATE.fromtimestamp(WALL_NS // 10**9)
    assert accepts, "code holding the stand-in class must accept real datetimes"
    assert text.startswith("datetime.datetime(2001, 9, 9, 1, 46, 40, 123456")
    assert datetime.datetime is REAL_DATETIME and datetime.date is REAL_DATE
    assert module.datetime is REAL_DATETIME
    assert datetime.datetime.now().year >= 2024


# -- entropy ---------------------------------------------------------------------


def test_the_random_module_is_seeded_by_the_host_and_its_state_restored() -> None:
    untouched = random.Random()
    untouched.setstate(random.getstate())

    def draw() -> list[float]:
        return [random.random() for _ in range(5)]

    first, again, other = in_run(draw, FakeHost(7)), in_run(draw, FakeHost(7)), in_run(draw)
    assert first == again != other
    assert random.random() == untouched.random(), "code outside the run saw the run's draws"


def test_unseeded_generators_inside_a_run_are_seeded_by_the_host() -> None:
    def draw() -> tuple[float, ...]:
        reseeded = random.Random(3)
        reseeded.seed()
        random.seed()
        return (
            random.Random().random(),
            random.Random(None).random(),
            reseeded.random(),
            random.random(),
        )

    first, again, other = in_run(draw, FakeHost(7)), in_run(draw, FakeHost(7)), in_run(draw)
    assert first == again and first != other
    assert random.Random.__dict__["seed"] is REAL_RANDOM_SEED
    assert random.Random().random() != random.Random().random()  # OS-seeded again


def test_urandom_secrets_and_uuids_are_deterministic_inside_a_run() -> None:
    def draw() -> tuple[Any, ...]:
        return (
            os.urandom(8),
            secrets.token_hex(8),
            random.SystemRandom().random(),
            uuid.uuid4(),
            uuid.uuid1(),
            uuid.uuid1(),
        )

    host = FakeHost(7)
    first, again, other = in_run(draw, host), in_run(draw, FakeHost(7)), in_run(draw)
    assert first == again
    assert all(a != b for a, b in zip(first, other, strict=True))
    assert {"os.urandom", "random.SystemRandom", "uuid.uuid4"} <= set(host.reasons)
    u4, u1, u1_again = first[3:]
    assert u4.version == 4 and u1.version == 1 and u1.node == u1_again.node
    assert u1.time == WALL_NS // 100 + 0x01B21DD213814000 and u1_again.time == u1.time + 1
    assert os.urandom(8) != os.urandom(8) and uuid.uuid4() != uuid.uuid4()


# -- escapes ---------------------------------------------------------------------


@pytest.fixture
def listener() -> Iterator[tuple[str, int]]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()


def _connect_real_socket(address: tuple[str, int]) -> None:
    with socket.socket() as sock:  # creating one is allowed (aiohappyeyeballs does)
        sock.settimeout(5)
        sock.connect(address)


ESCAPES: list[tuple[str, Callable[[tuple[str, int]], object]]] = [
    ("socket.connect()", _connect_real_socket),
    ("threading.Thread.start()", lambda _: threading.Thread(target=lambda: None).start()),
    ("subprocess.Popen()", lambda _: subprocess.Popen(["true"]).wait()),
    ("os.system()", lambda _: os.system("true")),
    ("time.sleep()", lambda _: time.sleep(0)),
]


@pytest.mark.parametrize(("call", "action"), ESCAPES, ids=[call for call, _ in ESCAPES])
def test_each_escape_raises_naming_the_call_and_works_again_after_the_run(
    call: str, action: Callable[[tuple[str, int]], object], listener: tuple[str, int]
) -> None:
    host = FakeHost()
    with pytest.raises(SimulationEscape, match=re.escape(call)):
        in_run(lambda: action(listener), host)
    assert host.escapes[-1] == call
    action(listener)  # the same call reaches the real world outside a run


def test_connecting_a_socket_made_before_the_run_escapes(listener: tuple[str, int]) -> None:
    host = FakeHost()
    with socket.socket() as client:
        client.settimeout(5)
        with pytest.raises(SimulationEscape, match=r"socket\.connect\(\)"):
            in_run(lambda: client.connect(listener), host)
        client.connect(listener)
    assert host.escapes == ["socket.connect()"]


# Copies out of reach of the rebinding (here: in a tuple) escape unless CPython
# audits the call: time.sleep from 3.13, _thread.start_new_thread from 3.12.
HELD_SLEEP, HELD_START_THREAD = (time.sleep,), (_thread.start_new_thread,)


def test_calls_out_of_reach_of_patching_are_caught_where_cpython_audits_them() -> None:
    host = FakeHost()

    def body() -> None:
        sleep_audited = sys.version_info >= (3, 13)
        with pytest.raises(SimulationEscape) if sleep_audited else contextlib.nullcontext():
            HELD_SLEEP[0](0)
        thread_audited = sys.version_info >= (3, 12)
        with pytest.raises(SimulationEscape) if thread_audited else contextlib.nullcontext():
            HELD_START_THREAD[0](lambda: None, ())

    in_run(body, host)
    expected = ["time.sleep()"] if sys.version_info >= (3, 13) else []
    expected += ["_thread.start_new_thread()"] if sys.version_info >= (3, 12) else []
    assert host.escapes == expected


# -- lifecycle -------------------------------------------------------------------


def test_everything_is_restored_when_the_body_raises(make_module: Any) -> None:
    module = make_module("from time import sleep\nfrom uuid import uuid4")
    state = random.getstate()

    def body() -> None:
        random.random()
        raise KeyError("boom")

    with pytest.raises(KeyError):
        in_run(body)
    assert random.getstate() == state
    assert module.sleep is REAL_SLEEP and module.uuid4 is REAL_UUID4
    assert datetime.datetime is REAL_DATETIME and _interpose.active_host() is None


def test_runs_do_not_nest_and_deactivate_is_idempotent() -> None:
    host = FakeHost()
    _interpose.activate(host)
    try:
        assert _interpose.active_host() is host
        with pytest.raises(UsageError):
            _interpose.activate(FakeHost())
        assert _interpose.active_host() is host
    finally:
        _interpose.deactivate()
        _interpose.deactivate()
    assert _interpose.active_host() is None


def test_a_thousand_activations_complete_and_leave_nothing_behind() -> None:
    state = random.getstate()
    for seed in range(1000):
        in_run(time.monotonic, FakeHost(seed))
    assert random.getstate() == state
