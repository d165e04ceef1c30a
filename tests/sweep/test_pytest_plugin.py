"""The pytest plugin, run on small test files through pytest's own `pytester`."""

from __future__ import annotations

import re

import pytest

pytest_plugins = ["pytester"]
QUIET_ASYNCIO = "asyncio_default_fixture_loop_scope = function\n"  # pytest-asyncio is installed


@pytest.fixture(autouse=True)
def _ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n" + QUIET_ASYNCIO)


SEEDED = """
import pytest

@pytest.mark.seedbed(seeds=4)
def test_even(seed):
    assert isinstance(seed, int)

@pytest.mark.seedbed(seeds=3)
def test_other(seed):
    pass
"""

FAILING = """
import pytest

@pytest.mark.seedbed(seeds=6)
def test_parity(seed):
    assert seed % 2 == 0, f"odd seed {seed}"
"""


def _ids(output: str, test: str) -> list[str]:
    return re.findall(rf"{test}\[(seed=\d+)\] PASSED", output)


def test_the_marker_runs_a_test_once_per_seed_with_stable_readable_ids(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_seeded=SEEDED)
    first = pytester.runpytest_subprocess("-v")
    first.assert_outcomes(passed=7)
    again = pytester.runpytest_subprocess("-v")
    even = _ids(first.stdout.str(), "test_even")
    assert len(set(even)) == 4 and even == _ids(again.stdout.str(), "test_even")
    assert not set(even) & set(_ids(first.stdout.str(), "test_other"))  # per-test seeds
    base = pytester.runpytest_subprocess("-v", "--seedbed-base-seed=5")
    assert _ids(base.stdout.str(), "test_even") != even


def test_the_count_can_be_overridden_and_one_seed_chosen(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_seeded=SEEDED)
    pytester.runpytest_subprocess("--seedbed-seeds=2").assert_outcomes(passed=4)
    chosen = pytester.runpytest_subprocess("-v", "--seedbed-seed=0x2A")
    chosen.assert_outcomes(passed=2)
    assert "test_even[seed=42] PASSED" in chosen.stdout.str()
    monkeypatch.setenv("DST_SEED", "7")
    only = pytester.runpytest_subprocess("-v", "test_seeded.py::test_even")
    only.assert_outcomes(passed=1)
    assert "test_even[seed=7] PASSED" in only.stdout.str()
    monkeypatch.setenv("DST_SEED", "seven")
    refused = pytester.runpytest_subprocess()
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert "DST_SEED='seven' is not a seed" in refused.stderr.str()


def test_a_failing_seed_ends_with_the_line_that_replays_it_and_the_summary_lists_all(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_parity=FAILING)
    result = pytester.runpytest_subprocess()
    output = result.stdout.str()
    lines = re.findall(r"replay this seed: (.*)", output)
    failed = result.parseoutcomes()["failed"]
    assert failed >= 1 and len(lines) == failed
    summary = output[output.index("seedbed: failing seeds") :]
    for line in lines:
        assert line in summary
    line = lines[0]
    assert re.fullmatch(r"PYTHONHASHSEED=0 DST_SEED=(\d+) (uv run )?pytest "
                        r"'test_parity.py::test_parity\[seed=\1\]'", line), line  # fmt: skip
    seed = re.search(r"DST_SEED=(\d+)", line)
    assert seed is not None
    monkeypatch.setenv("DST_SEED", seed.group(1))
    replayed = pytester.runpytest_subprocess(line.rsplit(" ", 1)[1].strip("'"))
    replayed.assert_outcomes(failed=1)
    assert f"odd seed {seed.group(1)}" in replayed.stdout.str()


ASYNC = """
import asyncio, random
import pytest
import seedbed

@pytest.mark.seedbed(seeds=3, max_time=100_000)
async def test_sleeps_a_virtual_day(seed):
    loop = asyncio.get_running_loop()
    assert type(loop).__name__ == "SeedbedLoop"
    await asyncio.sleep(86_400)
    assert loop.time() >= 86_400

@pytest.mark.seedbed(seeds=1)
async def test_fails_inside_the_loop():
    await asyncio.sleep(1)
    assert random.random() > 2, "impossible draw"
"""


def test_async_tests_under_the_marker_run_on_seedbeds_loop(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_async=ASYNC)
    result = pytester.runpytest_subprocess("-v")
    result.assert_outcomes(passed=3, failed=1)
    output = result.stdout.str()
    assert "AssertionError: impossible draw" in output
    replay = r"replay: PYTHONHASHSEED=0 DST_SEED=\d+ (uv run )?pytest 'test_async.py::test_fails_"
    assert re.search(replay + r"inside_the_loop\[seed=\d+\]'", output)


def test_pytest_asyncio_in_auto_mode_is_refused_with_a_clear_message(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_async=ASYNC)
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )
    result = pytester.runpytest_subprocess("-p", "asyncio")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    error = result.stderr.str()
    assert re.search(r"pytest-asyncio would run test_async.py::test_\w+\[seed=\d+\] on a real loop",
                     error), error  # fmt: skip
    assert "asyncio_mode = strict" in error
    pytester.makeini(
        "[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.runpytest_subprocess("-p", "asyncio").assert_outcomes(passed=3, failed=1)


SCENARIO = """
import asyncio
import pytest
import seedbed

def world(sim):
    async def client():
        await asyncio.sleep(1)
        return seedbed.current_node()
    sim.client("c1", client)

def broken(sim):
    async def client():
        await asyncio.sleep(1)
        raise RuntimeError("client gave up")
    sim.client("c1", client)

calm = seedbed.Scenario("calm", world, duration=5.0)
failing = seedbed.Scenario("failing", broken, duration=5.0)

@pytest.mark.seedbed(seeds=2)
def test_calm(seedbed_run, seed):
    result = seedbed_run(calm)
    assert result.seed == seed and result.values == {"c1": "c1"}

@pytest.mark.seedbed(seeds=1)
def test_failing(seedbed_run):
    seedbed_run(failing)
"""


def test_seedbed_run_runs_a_scenario_under_the_tests_seed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plugin_scenarios=SCENARIO)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=2, failed=1)
    output = result.stdout.str()
    assert "client gave up" in output
    assert re.search(r"replay: PYTHONHASHSEED=0 DST_SEED=\d+ (uv run )?pytest "
                     r"'test_plugin_scenarios.py::test_failing\[seed=\d+\]'", output)  # fmt: skip


def test_seeds_are_the_same_under_xdist_workers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_seeded=SEEDED, test_parity=FAILING)
    alone = pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider")
    spread = pytester.runpytest_subprocess("-v", "-p", "xdist", "-n", "2", "-p", "no:cacheprovider")
    assert "Different tests were collected" not in spread.stdout.str() + spread.stderr.str()
    assert spread.parseoutcomes() == alone.parseoutcomes()
    ids = sorted(re.findall(r"test_even\[(seed=\d+)\]", alone.stdout.str()))
    assert ids and ids == sorted(set(re.findall(r"test_even\[(seed=\d+)\]", spread.stdout.str())))
    failing = sorted(re.findall(r"replay this seed: (.*)", alone.stdout.str()))
    summary = spread.stdout.str()[spread.stdout.str().index("seedbed: failing seeds") :]
    assert failing and all(line in summary for line in failing)


def test_randomized_string_hashing_is_announced_in_the_header_and_each_failure(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_parity=FAILING)
    monkeypatch.setenv("PYTHONHASHSEED", "random")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    output = result.stdout.str()
    assert "seedbed: string hashing is randomized in this pytest process" in output
    assert "run pytest with PYTHONHASHSEED=0" in output
    assert "note: string hashing is randomized" in output
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    fixed = pytester.runpytest_subprocess("-p", "no:cacheprovider").stdout.str()
    assert "seedbed: string hashing fixed (PYTHONHASHSEED=0)" in fixed
    assert "note: string hashing" not in fixed


BROKEN_INVARIANT = """
import asyncio
import pytest
from seedbed import FaultProfile, Scenario

async def idle():
    await asyncio.sleep(5)

def setup(sim):
    sim.host("n1", idle)
    sim.client("c1", idle)

def count_never_drops():
    assert False, "the count went down"

broken = Scenario("broken", setup, faults=FaultProfile(crash_per_second=1.0), duration=5.0,
                  invariants=[count_never_drops])

@pytest.mark.seedbed(seeds=1)
def test_broken(seedbed_run):
    seedbed_run(broken)
"""


def test_a_failing_invariant_shows_the_users_frames_in_at_most_40_lines(
    pytester: pytest.Pytester,
) -> None:
    """Issue 28.8: 123 lines, 80 of them seedbed's frames, for one failure."""
    pytester.makepyfile(test_broken=BROKEN_INVARIANT)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if "FAILURES" in line)
    end = next(i for i, line in enumerate(lines) if "short test summary" in line)
    failure = lines[start:end]
    assert len(failure) <= 40, "\n".join(failure)
    shown = "\n".join(failure)
    assert 'assert False, "the count went down"' in shown  # the invariant's own line
    assert "seedbed_run(broken)" in shown  # the test's line
    assert "site-packages" not in shown and "/seedbed/" not in shown.replace("/seedbed/sweeps", "")
    assert "replay this seed: " in shown


def test_fulltrace_still_shows_every_frame(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_broken=BROKEN_INVARIANT)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--fulltrace")
    assert "seedbed/aio/loop.py" in "\n".join(result.outlines)
