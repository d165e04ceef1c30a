"""The pytest plugin: seeds as test parameters, failures with the line that replays them.

`@pytest.mark.seedbed(seeds=N)` runs a test once per seed, with the seed in
the `seed` fixture and the test id (`test_x[seed=1234]`). Seeds derive from
the test's id and a base seed (`--seedbed-base-seed`), so they are the same
in every run and in every pytest-xdist worker, and differ between tests.
`--seedbed-seeds=N` overrides every count; `DST_SEED=N` (or
`--seedbed-seed=N`) runs just that seed. An `async def` test under the marker
runs on seedbed's loop (the marker's other arguments are run options such as
`max_time`). `seedbed_run(scenario)` runs a scenario (or an async main) with
the test's seed. A failing seed's report ends with the command that replays
it, and the terminal summary lists them all.

Like a sweep, the plugin checks itself (`--seedbed-recheck N`, 20 by
default, 0 off): 1 seed in N of each marked test, and at least its first,
runs twice in this process, which has run other seeds before it; a
different trace hash, result or failure fails the test with `Nondeterminism`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import inspect
import os
import shlex
from collections.abc import Callable, Generator
from typing import Any

import pytest
from _pytest._code.code import ExceptionRepr

from seedbed._core.hashseed import hash_seed_is_fixed
from seedbed._core.printable import terminal
from seedbed._harness.sweeps._command import runner_for_pytest
from seedbed._harness.sweeps._recheck import DEFAULT_SHARE, chosen_by_number

# The hooks pytest calls and the two fixtures; pytest finds them by name.
__all__ = [
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_generate_tests",
    "pytest_pyfunc_call",
    "pytest_report_header",
    "pytest_runtest_makereport",
    "seed",
    "seedbed_run",
]

DEFAULT_SEEDS = 10
_REPLAY = "seedbed_replay"  # the user property that carries a failing seed's replay line
_RUN_OPTIONS = ("max_steps", "max_time", "strict", "cpu_cost_min", "cpu_cost_max",
                "timer_jitter_max")  # fmt: skip
_HASH_ADVICE = (
    "string hashing is randomized in this pytest process (PYTHONHASHSEED is not 0): "
    "a test that iterates a set of strings may run differently under the same seed; "
    "run pytest with PYTHONHASHSEED=0 to make every seed replay"
)


def _parse_seed(text: str, where: str) -> int:
    try:
        seed = int(text, 0)
    except ValueError:
        raise pytest.UsageError(f"{where}={text!r} is not a seed: use an integer like 42") from None
    if seed < 0:
        raise pytest.UsageError(f"{where}={text!r} is negative: seeds are non-negative")
    return seed


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("seedbed", "deterministic simulation seeds")
    group.addoption("--seedbed-seeds", type=int, default=None, metavar="N",
                    help="run every @pytest.mark.seedbed test under N seeds")  # fmt: skip
    group.addoption("--seedbed-seed", default=None, metavar="SEED",
                    help="run marked tests under this one seed (or DST_SEED=N)")  # fmt: skip
    group.addoption("--seedbed-base-seed", default="0", metavar="SEED",
                    help="the base the per-test seeds derive from (default 0)")  # fmt: skip
    group.addoption("--seedbed-recheck", type=int, default=DEFAULT_SHARE, metavar="N",
                    help="run 1 seed in N of each marked test (and its first) twice and "
                         "fail on any difference (default 20; 0: off)")  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "seedbed(seeds=N, **run_options): run the test once per seed (the `seed` fixture); "
        "an async test runs on seedbed's loop",
    )
    config.stash[_chosen_seeds] = _chosen(config)  # bad seeds stop pytest here, clearly
    config.pluginmanager.register(_FailingSeeds(), "seedbed-failing-seeds")


_chosen_seeds = pytest.StashKey[tuple[int | None, int]]()


def _chosen(config: pytest.Config) -> tuple[int | None, int]:
    """The one seed asked for (--seedbed-seed or DST_SEED), if any, and the base seed."""
    given = config.getoption("seedbed_seed")
    env = os.environ.get("DST_SEED")
    single = None
    if given is not None:
        single = _parse_seed(str(given), "--seedbed-seed")
    elif env not in (None, ""):
        single = _parse_seed(str(env), "DST_SEED")
    base = _parse_seed(str(config.getoption("seedbed_base_seed")), "--seedbed-base-seed")
    return single, base


def derived_seed(base: int, test_id: str, index: int) -> int:
    """The index-th seed of a test: fixed by its id and the base, whoever collects it."""
    digest = hashlib.sha256(f"{base}:{test_id}:{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _seeds_for(config: pytest.Config, test_id: str, marker: pytest.Mark) -> list[int]:
    single, base = config.stash[_chosen_seeds]
    if single is not None:
        return [single]
    count = config.getoption("seedbed_seeds") or marker.kwargs.get("seeds", DEFAULT_SEEDS)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise pytest.UsageError(f"{test_id}: seeds={count!r} must be a positive integer")
    return [derived_seed(base, test_id, index) for index in range(count)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("seedbed")
    if marker is None:
        return
    unknown = sorted(set(marker.kwargs) - {"seeds", *_RUN_OPTIONS})
    if unknown or marker.args:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid}: @pytest.mark.seedbed takes seeds=N and run options "
            f"({', '.join(_RUN_OPTIONS)}), not {unknown[0] if unknown else marker.args!r}"
        )
    if "seed" not in metafunc.fixturenames:
        metafunc.fixturenames.append("seed")  # an async test gets a seed without asking
    seeds = _seeds_for(metafunc.config, metafunc.definition.nodeid, marker)
    metafunc.parametrize("seed", seeds, ids=[f"seed={seed}" for seed in seeds])
    share = metafunc.config.getoption("seedbed_recheck") or 0
    rechecked = metafunc.config.stash.setdefault(_rechecked, set())
    for index, seed in enumerate(seeds):
        if share > 0 and (index == 0 or chosen_by_number(seed, share)):
            rechecked.add((metafunc.definition.nodeid, seed))


_rechecked = pytest.StashKey[set[tuple[str, int]]]()


def _fingerprint(run: Callable[[], Any]) -> tuple[Any, BaseException | None, tuple[Any, ...]]:
    """Run once: (what it returned, what it raised, what a second run must match)."""
    from seedbed.aio._digest import failure_identity, result_digest

    try:
        result = run()
    except Exception as error:
        return None, error, ("failed", failure_identity(error))
    values = getattr(result, "values", getattr(result, "value", result))
    return result, None, (getattr(result, "trace_hash", None), result_digest(values))


def _run_checked(item: pytest.Item, seed: int, run: Callable[[], Any]) -> Any:
    """`run()`, and for a rechecked seed `run()` again, which must come out the same."""
    result, error, first = _fingerprint(run)
    if (item.nodeid.split("[")[0], seed) in item.config.stash.get(_rechecked, set()):
        _, _, again = _fingerprint(run)
        if again != first:
            from seedbed.errors import Nondeterminism

            raise Nondeterminism(
                f"seed {seed} ran differently when run again in this process right after: "
                f"{first!r:.200} then {again!r:.200} (--seedbed-recheck): its run depends on "
                "what ran before it (state leaking between seeds) or on entropy seedbed does "
                f"not reach; `seedbed check-determinism` names the cause\n"
                f"  replay: {replay_line(item, seed)}"
            ) from error
    if error is not None:
        raise error
    return result


@pytest.fixture
def seed(request: pytest.FixtureRequest) -> int:
    """This test's seed: its parameter under @pytest.mark.seedbed, else DST_SEED or one derived."""
    param = getattr(request, "param", None)
    if isinstance(param, int):
        return param
    single, base = request.config.stash[_chosen_seeds]
    if single is not None:
        return single
    return derived_seed(base, request.node.nodeid, 0)


def replay_line(item: pytest.Item, seed: int) -> str:
    """The shell line that reruns this test under this seed only."""
    hash_seed = "PYTHONHASHSEED=0 " if hash_seed_is_fixed() else ""
    return f"{hash_seed}DST_SEED={seed} {runner_for_pytest()} {shlex.quote(item.nodeid)}"


def _retarget(error: BaseException, replay: str) -> None:
    """Make the failure's own replay command the pytest line that reruns it, and
    keep the report pytest shows short: the last few events (the replay prints
    the whole report)."""
    from seedbed.errors import SimulationFailure

    if isinstance(error, SimulationFailure) and error.context is not None:
        error.context = dataclasses.replace(error.context, replay=replay)
    report = getattr(error, "report", None)
    if report is not None:
        from seedbed.scenario._report import is_plumbing

        shown = [line for line in report.last_events if not is_plumbing(line)]
        report.last_events = shown[-_EVENTS_SHOWN:]
    notes = getattr(error, "__notes__", None)
    if notes:
        error.__notes__ = [
            note.split("\n  replay: ")[0] + f"\n  replay: {replay}"
            if "  replay: " in note
            else note
            for note in notes
        ]


# The failure pytest shows is the user's: frames inside seedbed (the loop, the
# world, the scenario's phases) and asyncio's are left out of its traceback.
_HIDDEN_DIRS = (os.path.dirname(os.path.abspath(__file__)), os.path.dirname(asyncio.__file__))
_EVENTS_SHOWN = 5


def _user_frames(original: Callable[[Any], Any], excinfo: Any) -> Any:
    """pytest's own filter, then without seedbed's and asyncio's frames (unless
    nothing would be left, or `--fulltrace` asks for everything)."""
    traceback = original(excinfo)
    kept = traceback.filter(lambda entry: not str(entry.path).startswith(_HIDDEN_DIRS))
    return kept if len(kept) else traceback


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("seedbed") is None or item.config.getoption("fulltrace"):
        return
    original = getattr(item, "_traceback_filter", None)
    if original is not None:
        setattr(item, "_traceback_filter", functools.partial(_user_frames, original))  # noqa: B010


def pytest_runtest_teardown(item: pytest.Item) -> None:
    """After each test, what its simulated runs left goes once the heap has doubled
    (runs keep the collector off; see `seedbed.aio._collect.between_runs`)."""
    from seedbed.aio._collect import between_runs

    if asyncio.events._get_running_loop() is None:
        between_runs()


@pytest.fixture
def seedbed_run(request: pytest.FixtureRequest, seed: int) -> Callable[..., Any]:
    """`seedbed_run(scenario_or_main, **run_options)`: run it under the test's seed.

    A `Scenario` returns its `ScenarioResult`; an async main its `RunResult`.
    A failure is raised with the line that replays this test under this seed.
    """

    def run(target: Any, **options: Any) -> Any:
        from seedbed import Scenario
        from seedbed import run as run_main

        replay = replay_line(request.node, seed)

        def once() -> Any:
            if isinstance(target, Scenario):
                result, error = target.execute(seed, replay=replay, overrides=options or None)
                if error is not None:
                    raise error
                return result
            return run_main(target, seed=seed, **options)

        try:
            return _run_checked(request.node, seed, once)
        except Exception as error:
            _retarget(error, replay)
            raise

    return run


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run an `async def` test under the marker on seedbed's loop, under its seed."""
    if pyfuncitem.get_closest_marker("seedbed") is None:
        return None
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    from seedbed import run as run_main

    marker = pyfuncitem.get_closest_marker("seedbed")
    assert marker is not None
    options = {key: value for key, value in marker.kwargs.items() if key in _RUN_OPTIONS}
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    seed = pyfuncitem.callspec.params["seed"]
    assert isinstance(seed, int)

    async def test_main() -> Any:
        return await pyfuncitem.obj(**arguments)

    try:
        _run_checked(pyfuncitem, seed, lambda: run_main(test_main, seed=seed, **options))
    except Exception as error:
        _retarget(error, replay_line(pyfuncitem, seed))
        raise
    return True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse async seedbed tests that another plugin would run on a real event loop."""
    taken = [
        item.nodeid
        for item in items
        if item.get_closest_marker("seedbed") is not None
        and inspect.iscoroutinefunction(getattr(item, "obj", None))
        and (_asyncio_auto_mode(config) or item.get_closest_marker("asyncio") is not None)
    ]
    if taken:
        raise pytest.UsageError(
            f"seedbed runs async tests under @pytest.mark.seedbed on its own loop, but "
            f"pytest-asyncio would run {taken[0]} on a real loop (asyncio_mode=auto, or an "
            "asyncio marker): set asyncio_mode = strict (pytest-asyncio's default) and do not "
            "mark seedbed tests with @pytest.mark.asyncio"
        )


def _asyncio_auto_mode(config: pytest.Config) -> bool:
    if not config.pluginmanager.has_plugin("asyncio"):
        return False
    mode = config.getoption("asyncio_mode", None) or config.getini("asyncio_mode")
    return str(mode) == "auto"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    callspec = getattr(item, "callspec", None)
    seed = callspec.params.get("seed") if callspec is not None else None
    if report.failed and isinstance(seed, int):
        line = replay_line(item, seed)
        report.user_properties.append((_REPLAY, line))
        text = f"replay this seed: {line}"
        if not hash_seed_is_fixed():
            text = f"note: {_HASH_ADVICE}\n{text}"
        if isinstance(report.longrepr, ExceptionRepr):
            report.longrepr.addsection("seedbed", terminal(text))  # a test id is user text
    return report


def pytest_report_header(config: pytest.Config) -> str:
    if hash_seed_is_fixed():
        return "seedbed: string hashing fixed (PYTHONHASHSEED=0): seeds replay exactly"
    return f"seedbed: {_HASH_ADVICE}"


class _FailingSeeds:
    """Collects failing seeds' replay lines (from xdist workers too) for the summary."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            self.lines += [str(value) for name, value in report.user_properties if name == _REPLAY]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.lines:
            terminalreporter.section("seedbed: failing seeds")
            for line in dict.fromkeys(self.lines):
                terminalreporter.write_line(terminal(line))
