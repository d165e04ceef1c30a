"""Copies of the clocks and entropy wherever they are held, and a scan nothing breaks.

Each holder is made at run time, after earlier runs of the session already
scanned every module, as a fixture or a test body would make it.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import random
import sys
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from test_interpose import MONO_NS, WALL_NS, FakeHost, in_run

import seedbed
from seedbed.aio import _interpose
from seedbed.errors import SimulationEscape, SimulatorBug

MONO, WALL = MONO_NS / 1e9, WALL_NS / 1e9
REAL_MONOTONIC, REAL_TIME, REAL_SLEEP, REAL_URANDOM = (
    time.monotonic,
    time.time,
    time.sleep,
    os.urandom,
)


@pytest.fixture(autouse=True)
def _settled() -> None:
    """A run first, so the holders below are new to an already warm cache."""
    in_run(lambda: None)


def _apply(fn: Callable[[], Any], *args: Any) -> Any:
    return fn(*args)


def _closure() -> Callable[[], float]:
    clock = time.monotonic

    def read() -> float:
        return clock()

    return read


def _default() -> Callable[[], float]:
    def read(clock: Callable[[], float] = time.monotonic) -> float:
        return clock()

    return read


def _kwdefault() -> Callable[[], float]:
    def read(*, clock: Callable[[], float] = time.monotonic) -> float:
        return clock()

    return read


def _class_attribute() -> Callable[[], float]:
    class Timer:
        clock = time.monotonic

    return lambda: Timer().clock() + Timer.clock() - Timer.clock()


def _static_method() -> Callable[[], float]:
    class Timer:
        clock = staticmethod(time.monotonic)

    return lambda: Timer().clock()


def _instance_attribute() -> Callable[[], float]:
    timer = types.SimpleNamespace(clock=time.monotonic)
    return lambda: timer.clock()  # type: ignore[no-any-return]


def _partial() -> Callable[[], float]:
    return functools.partial(time.monotonic)


def _partial_argument() -> Callable[[], float]:
    return functools.partial(_apply, time.monotonic)


def _dict_value() -> Callable[[], float]:
    clocks = {"monotonic": time.monotonic}
    return lambda: clocks["monotonic"]()


def _dataclass_factory() -> Callable[[], float]:
    @dataclasses.dataclass
    class Stamp:
        at: float = dataclasses.field(default_factory=time.monotonic)

    field = dataclasses.fields(Stamp)[0]
    real = types.BuiltinFunctionType  # (a module global copy of the original is rebound too)
    in_a_run = _interpose.active_host
    return lambda: -1.0 if isinstance(field.default_factory, real) and in_a_run() else Stamp().at


HOLDERS = [
    _closure,
    _default,
    _kwdefault,
    _class_attribute,
    _static_method,
    _instance_attribute,
    _partial,
    _partial_argument,
    _dict_value,
    _dataclass_factory,
]


@pytest.mark.parametrize("make", HOLDERS, ids=[m.__name__.strip("_") for m in HOLDERS])
def test_a_held_copy_of_the_clock_reads_virtual_time_and_the_real_one_after(
    make: Callable[[], Callable[[], float]],
) -> None:
    read = make()
    assert in_run(read) == MONO
    assert in_run(read) == MONO  # the second run rebinds the holders found by the first
    after = read()
    assert abs(after - REAL_MONOTONIC()) < 60


def test_held_entropy_and_wall_clock_copies_read_the_run() -> None:
    now = functools.partial(time.time)

    def draw(urandom: Callable[[int], bytes] = os.urandom) -> bytes:
        return urandom(8)

    host, twin = FakeHost(5), FakeHost(5)
    twin.seed_for("random module seed")
    assert in_run(lambda: (now(), draw()), host) == (WALL, twin.urandom(8, ""))
    assert host.reasons == ["random module seed", "os.urandom"]
    assert draw.__defaults__ == (REAL_URANDOM,) and now.func is REAL_TIME


def test_a_held_random_seed_reseeds_from_the_run_not_the_machine() -> None:
    """`random.seed` is a method of the module's generator; a copy of it too."""

    def fresh_draw(reseed: Callable[[], None] = random.seed) -> float:
        reseed()
        return random.random()

    assert in_run(fresh_draw, FakeHost(3)) == in_run(fresh_draw, FakeHost(3))
    assert in_run(fresh_draw, FakeHost(3)) != in_run(fresh_draw, FakeHost(4))


def test_a_sleep_wrapper_closing_over_the_original_escapes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A blocking-call detector in a test suite wraps time.sleep like this."""
    original = time.sleep
    calls: list[float] = []

    def detecting_sleep(seconds: float) -> None:
        calls.append(seconds)
        original(seconds)

    monkeypatch.setattr(time, "sleep", detecting_sleep)
    host = FakeHost()
    started = REAL_MONOTONIC()
    with pytest.raises(SimulationEscape, match=r"time\.sleep\(\)"):
        in_run(lambda: time.sleep(30.0), host)
    # Half the sleep: far more than an activation takes on a loaded machine.
    assert REAL_MONOTONIC() - started < 15.0 and calls == [30.0]
    assert host.escapes == ["time.sleep()"]
    time.sleep(0)  # outside the run the wrapper sleeps for real again
    assert detecting_sleep.__closure__ is not None
    assert detecting_sleep.__closure__[1].cell_contents is REAL_SLEEP


# -- a scan that no object in sys.modules can break ----------------------------


class Hostile:
    """Raises on every attribute, on hashing and on comparison (like a cffi Lib)."""

    def __getattribute__(self, name: str) -> Any:
        raise AttributeError(f"no attribute {name!r} here")

    def __hash__(self) -> int:
        raise AttributeError("no __hash__ here")

    def __eq__(self, other: object) -> bool:
        raise AttributeError("no __eq__ here")


class HostileModule(types.ModuleType):
    def __getattribute__(self, name: str) -> Any:
        raise RuntimeError(f"no attribute {name!r} here")  # not even an AttributeError


def _holding_a_clock(obj: object) -> object:
    """The hostile object also holds a copy of the clock, as a proxy might."""
    object.__setattr__(obj, "clock", REAL_MONOTONIC)
    return obj


@pytest.fixture
def in_sys_modules() -> Iterator[Callable[[str, object], None]]:
    added: list[str] = []

    def add(name: str, obj: object) -> None:
        sys.modules[name] = obj  # type: ignore[assignment]
        added.append(name)

    yield add
    for name in added:
        sys.modules.pop(name, None)


def _module_with(source: str, add: Callable[[str, object], None], name: str) -> Any:
    module = types.ModuleType(name)
    exec(source, vars(module))
    add(name, module)
    return module


@pytest.mark.parametrize("hostile", [Hostile, lambda: HostileModule("hostile_mod")])
def test_an_object_raising_on_every_attribute_in_sys_modules_breaks_nothing(
    hostile: Callable[[], object], in_sys_modules: Callable[[str, object], None]
) -> None:
    obj = _holding_a_clock(hostile())
    in_sys_modules("seedbed_probe_hostile", obj)
    held = object.__getattribute__(obj, "__dict__")
    assert in_run(lambda: held["clock"]()) == MONO  # its copy is rebound all the same
    assert held["clock"] is REAL_MONOTONIC
    for round_ in range(2):  # the second run must still rebind, not trust a half-done cache
        module = _module_with(
            "from time import monotonic", in_sys_modules, f"seedbed_probe_after_{round_}"
        )
        assert in_run(lambda m=module: m.monotonic()) == MONO  # type: ignore[misc]
        assert module.monotonic is REAL_MONOTONIC


def test_a_lazy_module_is_not_loaded_by_the_scan_and_is_scanned_once_loaded(
    in_sys_modules: Callable[[str, object], None], tmp_path: Any
) -> None:
    path = tmp_path / "seedbed_probe_lazy.py"
    path.write_text("from time import monotonic\n")
    spec = importlib.util.spec_from_file_location("seedbed_probe_lazy", path)
    assert spec is not None and spec.loader is not None
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    in_sys_modules("seedbed_probe_lazy", module)
    spec.loader.exec_module(module)
    lazy_class = type(module)
    in_run(lambda: None)
    assert type(module) is lazy_class  # still not loaded
    assert module.monotonic is REAL_MONOTONIC  # loads it, outside any run
    assert in_run(lambda: module.monotonic()) == MONO


def test_a_failed_activation_restores_everything_names_the_module_and_is_retried(
    in_sys_modules: Callable[[str, object], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _module_with("from time import monotonic", in_sys_modules, "seedbed_probe_broken")
    real_scan = _interpose._scan_module

    def scan(name: str, mod: object) -> Any:
        if name == "seedbed_probe_broken":
            raise RuntimeError("simulated scan failure")
        return real_scan(name, mod)

    monkeypatch.setattr(_interpose, "_scan_module", scan)
    state = random.getstate()
    with pytest.raises(SimulatorBug, match=r"'seedbed_probe_broken'.*simulated scan failure"):
        in_run(lambda: None)
    assert _interpose.active_host() is None and random.getstate() == state
    assert time.monotonic is REAL_MONOTONIC and module.monotonic is REAL_MONOTONIC
    monkeypatch.setattr(_interpose, "_scan_module", real_scan)
    assert in_run(lambda: module.monotonic()) == MONO  # scanned now, not skipped as "seen"


def test_a_failed_activation_in_a_run_carries_the_seed_and_replay_command(
    in_sys_modules: Callable[[str, object], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    _module_with("from time import sleep", in_sys_modules, "seedbed_probe_broken_run")
    real_scan = _interpose._scan_module

    def scan(name: str, mod: object) -> Any:
        if name == "seedbed_probe_broken_run":
            raise RuntimeError("simulated scan failure")
        return real_scan(name, mod)

    monkeypatch.setattr(_interpose, "_scan_module", scan)

    async def main() -> int:
        return 1

    with pytest.raises(SimulatorBug) as caught:
        seedbed.run(main, seed=5)
    assert caught.value.seed == 5 and "replay:" in str(caught.value)
    assert "seedbed_probe_broken_run" in str(caught.value)
