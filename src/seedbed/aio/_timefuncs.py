"""Stand-ins for the other clocks of `time` and `os`, read from the run.

`_interpose` covers `time.time`, `monotonic` and `perf_counter`. A program can
also read the clock through `datetime`, CPU-time clocks, `clock_gettime`, or
the calendar functions that default to "now"; inside a run each of these
reads the run's virtual clocks instead of the machine's:

- `datetime.datetime.now/utcnow/today` and `datetime.date.today` read the
  virtual wall clock (the classes are replaced by look-alike subclasses:
  their methods are C code and cannot be patched);
- `time.process_time`, `thread_time` (and `_ns`) and the user time of
  `os.times()` read the virtual monotonic clock: a simulated process is busy
  for the whole of its virtual life, so its CPU time is its elapsed time,
  the same in every run of a seed (it is not a measure of real work);
- `time.clock_gettime(id)` (and `_ns`) reads the virtual wall clock for
  `CLOCK_REALTIME`/`CLOCK_TAI`, the virtual monotonic clock for the
  monotonic, boot-time and CPU-time clocks, and escapes for any other id;
- `time.localtime()`, `gmtime()`, `ctime()`, `asctime()` and `strftime(fmt)`
  called without a time read the virtual wall clock of the code now running
  (a node's own clock in a world). With an explicit time they are the real
  functions. Local time still follows the machine's time zone (`TZ`), as
  `datetime.now()` does: set `TZ=UTC` for runs that must replay anywhere.

Each stand-in falls back to the real function outside a run and on other
threads, like the rest of interposition.
"""

from __future__ import annotations

import _thread
import datetime as _dt
import os
import time
from typing import Any, Self

from seedbed.aio import _providers
from seedbed.aio._host import InterposeHost

_host: InterposeHost | None = None
_owner = 0
_get_ident = _thread.get_ident

_real_process_time = time.process_time
_real_process_time_ns = time.process_time_ns
_real_thread_time = time.thread_time
_real_thread_time_ns = time.thread_time_ns
_real_times = os.times
_real_clock_gettime = time.clock_gettime
_real_clock_gettime_ns = time.clock_gettime_ns
_real_localtime = time.localtime
_real_gmtime = time.gmtime
_real_ctime = time.ctime
_real_asctime = time.asctime
_real_strftime = time.strftime
_RealDatetime = _dt.datetime
_RealDate = _dt.date


def bind(host: InterposeHost | None, owner: int) -> None:
    """Point the stand-ins at `host` (None: no run is active)."""
    global _host, _owner
    _host, _owner = host, owner


def _run_host() -> InterposeHost | None:
    h = _host
    if h is None or _get_ident() != _owner:
        return None
    return h


# -- CPU time --------------------------------------------------------------------


def _process_time() -> float:
    h = _run_host()
    return _real_process_time() if h is None else h.monotonic_ns() / 1e9


def _process_time_ns() -> int:
    h = _run_host()
    return _real_process_time_ns() if h is None else h.monotonic_ns()


def _thread_time() -> float:
    h = _run_host()
    return _real_thread_time() if h is None else h.monotonic_ns() / 1e9


def _thread_time_ns() -> int:
    h = _run_host()
    return _real_thread_time_ns() if h is None else h.monotonic_ns()


def _times() -> os.times_result:
    h = _run_host()
    if h is None:
        return _real_times()
    elapsed = h.monotonic_ns() / 1e9
    return os.times_result((elapsed, 0.0, 0.0, 0.0, elapsed))


# -- clock_gettime ------------------------------------------------------------------

_WALL_CLOCKS = {getattr(time, n) for n in ("CLOCK_REALTIME", "CLOCK_TAI") if hasattr(time, n)}
_STEADY_CLOCKS = {
    getattr(time, n)
    for n in (
        "CLOCK_MONOTONIC",
        "CLOCK_MONOTONIC_RAW",
        "CLOCK_BOOTTIME",
        "CLOCK_UPTIME",
        "CLOCK_HIGHRES",
        "CLOCK_PROCESS_CPUTIME_ID",
        "CLOCK_THREAD_CPUTIME_ID",
    )
    if hasattr(time, n)
}


def _virtual_clock_ns(h: InterposeHost, clk_id: int) -> int:
    if clk_id in _WALL_CLOCKS:
        return h.wall_ns()
    if clk_id in _STEADY_CLOCKS:
        return h.monotonic_ns()
    raise h.escape(
        f"time.clock_gettime({clk_id})",
        "this clock is not simulated; use time.monotonic() or time.time(), "
        "which read the run's virtual clocks",
    )


def _clock_gettime(clk_id: int, /) -> float:
    h = _run_host()
    return _real_clock_gettime(clk_id) if h is None else _virtual_clock_ns(h, clk_id) / 1e9


def _clock_gettime_ns(clk_id: int, /) -> int:
    h = _run_host()
    return _real_clock_gettime_ns(clk_id) if h is None else _virtual_clock_ns(h, clk_id)


# -- calendar functions that default to "now" -----------------------------------------


def _now(secs: float | None) -> float | None:
    """`secs`, or the virtual wall clock when it is None inside a run."""
    if secs is None:
        h = _run_host()
        if h is not None:
            return h.wall_ns() // 1_000_000_000
    return secs


def _localtime(secs: float | None = None, /) -> time.struct_time:
    return _real_localtime(_now(secs))


def _gmtime(secs: float | None = None, /) -> time.struct_time:
    return _real_gmtime(_now(secs))


def _ctime(secs: float | None = None, /) -> str:
    return _real_ctime(_now(secs))


def _asctime(t: Any = None, /) -> str:
    if t is None and _run_host() is not None:
        t = _localtime()
    return _real_asctime() if t is None else _real_asctime(t)


def _strftime(format: str, t: Any = None, /) -> str:
    if t is None and _run_host() is not None:
        t = _localtime()
    return _real_strftime(format) if t is None else _real_strftime(format, t)


# -- datetime: C methods cannot be patched, so the classes are replaced ---------


class _LooksReal(type):
    """Metaclass making the stand-in classes accept instances of the real ones.

    Code holding the stand-in (`from datetime import datetime`) still gets
    True from `isinstance(x, datetime)` for a real datetime made by C code.
    """

    _real: type

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, cls._real)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls._real)


class _Datetime(_RealDatetime, metaclass=_LooksReal):
    _real = _RealDatetime

    @classmethod
    def now(cls, tz: _dt.tzinfo | None = None) -> Self:
        h = _run_host()
        if h is None:
            return super().now(tz)
        seconds, ns = divmod(h.wall_ns(), 1_000_000_000)
        return cls.fromtimestamp(seconds, tz).replace(microsecond=ns // 1000)

    @classmethod
    def utcnow(cls) -> Self:
        if _run_host() is None:
            return super().utcnow()
        return cls.now(_dt.UTC).replace(tzinfo=None)

    @classmethod
    def today(cls) -> Self:
        return cls.now()

    def __repr__(self) -> str:
        # The base repr uses the type's bare name, "datetime(...)".
        return "datetime." + super().__repr__()

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Pickle under whichever class `datetime.datetime` names right now, so
        # values made in a run still pickle after it.
        reduced = super().__reduce_ex__(protocol)
        return (_dt.datetime, *reduced[1:])


class _Date(_RealDate, metaclass=_LooksReal):
    _real = _RealDate

    @classmethod
    def today(cls) -> Self:
        h = _run_host()
        if h is None:
            return super().today()
        return cls.fromtimestamp(h.wall_ns() // 1_000_000_000)

    def __repr__(self) -> str:
        return "datetime." + super().__repr__()

    def __reduce_ex__(self, protocol: Any) -> Any:
        reduced = super().__reduce_ex__(protocol)
        return (_dt.date, *reduced[1:])


for _cls, _name in ((_Datetime, "datetime"), (_Date, "date")):
    _cls.__name__ = _cls.__qualname__ = _name
    _cls.__module__ = "datetime"


def pairs() -> list[tuple[object, object]]:
    """(original, stand-in) for each function above, for `_interpose` to rebind."""
    return [
        (_real_process_time, _process_time),
        (_real_process_time_ns, _process_time_ns),
        (_real_thread_time, _thread_time),
        (_real_thread_time_ns, _thread_time_ns),
        (_real_times, _times),
        (_real_clock_gettime, _clock_gettime),
        (_real_clock_gettime_ns, _clock_gettime_ns),
        (_real_localtime, _localtime),
        (_real_gmtime, _gmtime),
        (_real_ctime, _ctime),
        (_real_asctime, _asctime),
        (_real_strftime, _strftime),
    ]


_providers.register(__name__, pairs, bind=bind)
