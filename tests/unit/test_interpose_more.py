"""CPU clocks, clock_gettime and "now" calendar functions are virtual; select,
timer signals and sockets made before the run escape.

The parameter tables call through `time.` at call time: a function object
stored in a tuple inside a list is out of interposition's reach (README).
"""

from __future__ import annotations

import os
import re
import select
import selectors
import signal
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from test_interpose import MONO_NS, WALL_NS, FakeHost, in_run

from seedbed.errors import SimulationEscape

MONO, WALL_S = MONO_NS / 1e9, WALL_NS // 1_000_000_000

CPU_CLOCKS: list[tuple[str, Callable[[], float], float]] = [
    ("process_time", lambda: time.process_time(), MONO),
    ("process_time_ns", lambda: time.process_time_ns(), MONO_NS),
    ("thread_time", lambda: time.thread_time(), MONO),
    ("thread_time_ns", lambda: time.thread_time_ns(), MONO_NS),
    ("os.times().user", lambda: os.times().user, MONO),
    ("os.times().elapsed", lambda: os.times().elapsed, MONO),
    ("clock_gettime(MONOTONIC)", lambda: time.clock_gettime(time.CLOCK_MONOTONIC), MONO),
    ("clock_gettime_ns(REALTIME)", lambda: time.clock_gettime_ns(time.CLOCK_REALTIME), WALL_NS),
    (
        "clock_gettime(PROCESS_CPUTIME_ID)",
        lambda: time.clock_gettime(time.CLOCK_PROCESS_CPUTIME_ID),
        MONO,
    ),
]


@pytest.mark.parametrize(("name", "read", "virtual"), CPU_CLOCKS, ids=[c[0] for c in CPU_CLOCKS])
def test_cpu_clocks_and_clock_gettime_read_virtual_time(
    name: str, read: Callable[[], float], virtual: float
) -> None:
    assert in_run(lambda: (read(), read())) == (virtual, virtual)
    assert in_run(read) == in_run(read)  # the same in every run of a seed
    outside = read()
    assert outside != virtual


def test_an_unsimulated_clock_id_escapes() -> None:
    host = FakeHost()
    with pytest.raises(SimulationEscape, match=r"time\.clock_gettime\(12345\)"):
        in_run(lambda: time.clock_gettime(12345), host)


CALENDAR: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
    ("localtime()", lambda: time.localtime(), lambda: time.localtime(WALL_S)),
    ("gmtime()", lambda: time.gmtime(), lambda: time.gmtime(WALL_S)),
    ("ctime()", lambda: time.ctime(), lambda: time.ctime(WALL_S)),
    ("asctime()", lambda: time.asctime(), lambda: time.asctime(time.localtime(WALL_S))),
    ("strftime(fmt)", lambda: time.strftime("%Y-%m-%d %H:%M:%S"),
     lambda: time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(WALL_S))),
]  # fmt: skip


@pytest.mark.parametrize(("name", "now", "virtual"), CALENDAR, ids=[c[0] for c in CALENDAR])
def test_calendar_functions_without_a_time_read_the_virtual_wall_clock(
    name: str, now: Callable[[], Any], virtual: Callable[[], Any]
) -> None:
    expected = virtual()
    assert in_run(now) == expected
    assert now() != expected  # 2001 outside the run
    assert in_run(lambda: time.localtime(0)) == time.localtime(0)  # an explicit time is kept


# -- escapes -----------------------------------------------------------------------


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    a, b = socket.socketpair()
    a.settimeout(5)
    b.settimeout(5)
    yield a, b
    a.close()
    b.close()


WAITS: list[tuple[str, Callable[[], object]]] = [
    ("select.select()", lambda: select.select([], [], [], 0.05)),
    ("select.poll()", lambda: select.poll().poll(50)),
    ("select.epoll()", lambda: select.epoll()),
    ("select.epoll()", lambda: selectors.DefaultSelector().select(0.05)),
    ("signal.alarm()", lambda: signal.alarm(1)),
    ("signal.setitimer()", lambda: signal.setitimer(signal.ITIMER_REAL, 1.0)),
]


WAIT_IDS = ["select", "poll", "epoll", "selectors", "alarm", "setitimer"]


@pytest.mark.parametrize(("call", "wait"), WAITS, ids=WAIT_IDS)
def test_real_waits_and_timer_signals_escape(call: str, wait: Callable[[], object]) -> None:
    host = FakeHost()
    with pytest.raises(SimulationEscape, match=re.escape(call)):
        in_run(wait, host)
    assert host.escapes == [call]
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # no real timer was armed


IO: list[tuple[str, Callable[[socket.socket], object]]] = [
    ("socket.send()", lambda s: s.send(b"x")),
    ("socket.sendall()", lambda s: s.sendall(b"x")),
    ("socket.recv()", lambda s: s.recv(1)),
    ("socket.recv_into()", lambda s: s.recv_into(bytearray(1))),
    ("socket.recvfrom()", lambda s: s.recvfrom(1)),
]


@pytest.mark.parametrize(("call", "io"), IO, ids=[c for c, _ in IO])
def test_real_io_on_a_socket_made_before_the_run_escapes(
    call: str, io: Callable[[socket.socket], object], pair: tuple[socket.socket, socket.socket]
) -> None:
    a, b = pair
    host = FakeHost()
    with pytest.raises(SimulationEscape, match=re.escape(call)):
        in_run(lambda: io(a), host)
    assert host.escapes == [call]
    a.sendall(b"ok")  # outside the run the socket works again
    assert b.recv(2) == b"ok"
