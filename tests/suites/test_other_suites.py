"""Six widely used pure-asyncio libraries' own test suites, run on seedbed's loop.

Each suite comes from the library's sdist on PyPI and runs unmodified, with
its own pytest configuration (`filterwarnings = error` included), through
pytest-asyncio's loop-factory hook, or seedbed's event loop policy for suites
that make loops otherwise (`seedbed_conftest.py`: what a user adds).
Every test not excluded below must pass; each exclusion says why the test
cannot run on a deterministic loop. Downloads and the virtual environment
are cached under `.cache/suites/` (gitignored): about 35 s warm, a minute
cold.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _suites import Library, environment, run_suite

_FAKE_CLOCK = (
    "UsageError: loop.time cannot be patched",
    "fakes the clock with mock.patch.object(loop, 'time', ...): refused with a "
    "UsageError (virtual time makes a fake clock unnecessary)",
)

LIBRARIES = [
    Library("async-lru", "2.4.0", "tests"),
    Library(
        "async-timeout",
        "5.0.1",
        "tests",
        excluded={
            "tests/test_timeout.py::test_timeout_blocking_loop": (
                "SimulationEscape: time.sleep()",
                "blocks the loop with time.sleep(0.1) by design",
            ),
            "tests/test_timeout.py::test_shift": (
                "assert (",
                "asserts (t0 + 1) + 1 >= t0 + 2 in floats, true at the real monotonic "
                "clock's magnitude, false at t0 = 2.8 us (virtual time starts at 0)",
            ),
        },
    ),
    Library(
        "aiolimiter",
        "1.3.0",
        "tests",
        test_deps=("dunamai==1.26.5", "typing-extensions>=4.12"),
        excluded={
            "tests/test_aiolimiter.py::test_version": (
                "AssertionError",
                "compares the version with the git checkout's (dunamai); an sdist has no .git",
            ),
            "tests/test_aiolimiter.py::test_acquire_zero_and_fractional_amounts": _FAKE_CLOCK,
            "tests/test_aiolimiter.py::test_acquire": _FAKE_CLOCK,
            "tests/test_aiolimiter.py::test_acquire_wait_time": _FAKE_CLOCK,
            "tests/test_aiolimiter.py::test_decreasing_acquire": _FAKE_CLOCK,
            "tests/test_aiolimiter.py::test_task_cancelled": _FAKE_CLOCK,
        },
    ),
]

# Three more, each for a path into the loop the first three do not take:
# aiojobs' suite uses pytest-aiohttp's aiohttp_client, whose TestServer binds
# 127.0.0.1 (the plain loop's loopback network); aiometer's runs under anyio's
# pytest plugin, which reuses one asyncio.Runner across tests and makes its
# loops through the event loop policy; aioitertools' is unittest code that makes
# a loop per test with asyncio.new_event_loop() and closes it without
# shutdown_asyncgens (the teardown that printed noise on 3.13).
LIBRARIES += [
    Library(
        "aiojobs",
        "1.4.0",
        "tests",
        test_deps=("pytest-aiohttp==1.1.1", "aiohttp==3.14.5"),
        # The sdist ships no pytest settings: its tests need auto mode, as upstream sets it.
        ini="asyncio_mode = auto\nfilterwarnings = error\n",
    ),
    Library(
        "aiometer",
        "1.0.0",
        "tests",
        test_deps=("anyio==4.16.0", "trio==0.35.0"),  # its pytest settings name trio
        policy=True,
        options=("-k", "not trio"),  # the trio backend's half never touches asyncio
    ),
    Library(
        "aioitertools",
        "0.13.0",
        "aioitertools/tests",
        policy=True,
        # unittest modules not named test_*; their package imports them all, so
        # each is named once (upstream runs `python -m unittest aioitertools.tests`).
        options=("-o", "python_files=asyncio.py builtins.py helpers.py itertools.py "
                 "more_itertools.py"),
        excluded={
            "aioitertools/tests/asyncio.py::AsyncioTest::test_gather_cancel": (
                "AssertionError: False is not true",
                "cancels a task one sleep(0) after creating it and asserts its grandchild "
                "started: that holds only if the grandchild's first step runs before the "
                "cancellation's, two steps ready together from different causes, whose "
                "order task-order exploration (on by default) draws",
            ),
        },
    ),
]  # fmt: skip

# Tests that pass on seedbed's loop, measured: a drop means tests were lost.
PASSING = {
    "async-lru": 89, "async-timeout": 31, "aiolimiter": 7,
    "aiojobs": 59, "aiometer": 63, "aioitertools": 132,
}  # fmt: skip
# What a suite's teardown must not print when stock asyncio prints none of it.
NOISE = ("Task was destroyed but it is pending", "was never awaited", "Exception ignored in")


@pytest.fixture(scope="module")
def python() -> Path:
    try:
        return environment(LIBRARIES)
    except (RuntimeError, OSError) as exc:  # no PyPI: the tier cannot run at all
        pytest.fail(f"could not install the libraries' suites from PyPI: {exc}")


@pytest.mark.parametrize("lib", LIBRARIES, ids=[lib.name for lib in LIBRARIES])
def test_the_library_suite_passes_on_seedbeds_loop(
    lib: Library, python: Path, tmp_path: Path
) -> None:
    outcome = run_suite(lib, python, tmp_path)
    assert not outcome.failed, f"{lib.name}: {outcome.failed}\n{outcome.log}"
    assert len(outcome.passed) >= PASSING[lib.name], outcome.log
    assert outcome.loops > 0, "the suite did not run on seedbed's loop"
    noise = [line for line in outcome.log.splitlines() if any(n in line for n in NOISE)]
    assert not noise, f"{lib.name} printed teardown noise: {noise}"
    ran = {test_id.split("[")[0] for test_id in outcome.passed}
    assert not ran & set(lib.excluded), "an excluded test ran"
    print(
        f"{lib.name}: {len(outcome.passed)} pass on seedbed's loop, "
        f"{len(outcome.skipped)} skipped by the suite, {len(lib.excluded)} excluded"
    )


@pytest.mark.parametrize(
    "lib", [lib for lib in LIBRARIES if lib.excluded], ids=lambda lib: lib.name
)
def test_each_excluded_test_fails_for_the_reason_given(
    lib: Library, python: Path, tmp_path: Path
) -> None:
    """An exclusion whose reason no longer holds (the test passes, or fails
    otherwise) must be revisited, not kept out of sight."""
    outcome = run_suite(lib, python, tmp_path, excluded_only=True)
    assert not outcome.passed, f"excluded tests now pass: {outcome.passed}"
    for test_id, message in outcome.failed.items():
        expected, why = lib.excluded[test_id.split("[")[0]]
        assert expected in message, f"{test_id} ({why}) failed otherwise: {message}"
    assert {t.split("[")[0] for t in outcome.failed} == set(lib.excluded)
