"""Bad input never crashes (issue 11, items 1-3).

Each case here crashed, or was misreported, before: the trace reader and the
history parsers on huge integers and deep nesting, the checker on dict
values (including histories seedbed's own `Recorder` wrote), replay on
malformed or cut traces. Each is now refused in one line naming the file and
line, or accepted and checked.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

import seedbed
from seedbed import Nondeterminism, UsageError
from seedbed._core.tracefile import FLUSH_EVERY, TraceIncomplete, read_trace
from seedbed.check import MODELS, HistoryError, Recorder, linearizable, parse_history

REPO = Path(__file__).resolve().parents[2]
HUGE = "9" * 4301  # one digit past CPython's int-from-string limit
DEEP = "[" * 5000 + "]" * 5000
HEADER = '{"seedbed": "0.1.0", "format": 2, "python": "3.11.7", "seed": 1, "options": {}}'


def _trace(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("lines", "line", "what"),
    [
        ((HEADER, f'["time", {HUGE}]', '{"end": 1}'), 2, "too long"),
        ((HEADER, DEEP, '{"end": 1}'), 2, "nested more than"),
        ((HEADER, '["time", NaN]', '{"end": 1}'), 2, "NaN"),
        ((HEADER.replace('"seed": 1', '"seed": -1'), '{"end": 0}'), 1, "seed"),
        ((HEADER.replace('"seed": 1', f'"seed": {HUGE}'), '{"end": 0}'), 1, "too long"),
        ((HEADER.replace('"seed": 1', '"seed": 18446744073709551616'), '{"end": 0}'), 1, "seed"),
    ],
)
def test_trace_reader_refuses_huge_ints_deep_nesting_and_bad_seeds(
    tmp_path: Path, lines: tuple[str, ...], line: int, what: str
) -> None:
    with pytest.raises(UsageError) as info:
        read_trace(_trace(tmp_path, *lines))
    message = str(info.value)
    assert f"t.jsonl:{line}:" in message and what in message and "\n" not in message


async def _sleeper() -> int:
    for _ in range(3):
        await asyncio.sleep(1)
    return 7


def _recorded(tmp_path: Path) -> list[str]:
    path = tmp_path / "run.jsonl"
    seedbed.run(_sleeper, seed=1, trace=path)
    return path.read_text().splitlines()


@pytest.mark.parametrize(
    "damage",
    [
        lambda lines: [*lines[:3], f'["time", {HUGE}]', *lines[4:]],
        lambda lines: [*lines[:3], DEEP, *lines[4:]],
        lambda lines: [lines[0].replace('"seed": 1', '"seed": -1'), *lines[1:]],
    ],
)
def test_a_malformed_trace_is_never_replayed(tmp_path: Path, damage: object) -> None:
    lines = damage(_recorded(tmp_path))  # type: ignore[operator]
    path = _trace(tmp_path, *lines)
    with pytest.raises(UsageError) as info:
        seedbed.replay(_sleeper, trace=path)
    assert not isinstance(info.value, Nondeterminism)
    assert "t.jsonl:" in str(info.value)


def test_replay_compares_as_it_reads_and_stops_at_the_first_divergence(tmp_path: Path) -> None:
    lines = _recorded(tmp_path)
    wrong_first = lines[1].replace("callback cpu costs", "something else")
    junk = ["not json at all"] * 50_000  # never read: the replay stops at event 0
    path = _trace(tmp_path, lines[0], wrong_first, *lines[2:-1], *junk)
    with pytest.raises(Nondeterminism, match="at event 0"):
        seedbed.replay(_sleeper, trace=path)


def test_replay_of_an_endless_file_fails_at_once(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a regular file"):  # refused before it is read
        seedbed.replay(_sleeper, trace="/dev/zero")
    endless_line = tmp_path / "long.jsonl"  # a regular file: bounded per line instead
    endless_line.write_bytes(b"x" * (2 << 20))
    with pytest.raises(UsageError, match="longer than"):
        seedbed.replay(_sleeper, trace=endless_line)


def test_a_cut_trace_is_reported_incomplete_not_nondeterministic(tmp_path: Path) -> None:
    lines = _recorded(tmp_path)
    path = _trace(tmp_path, *lines[:-3])  # cut: no end line, the last events missing
    with pytest.raises(TraceIncomplete, match="incomplete"):
        seedbed.replay(_sleeper, trace=path)


def test_an_interrupted_run_ends_its_trace_saying_so(tmp_path: Path) -> None:
    async def interrupted() -> None:
        for _ in range(2):  # as _sleeper does, until someone presses Ctrl-C
            await asyncio.sleep(1)
        raise KeyboardInterrupt

    path = tmp_path / "run.jsonl"
    with pytest.raises(KeyboardInterrupt):
        seedbed.run(interrupted, seed=1, trace=path)
    end = json.loads(path.read_text().splitlines()[-1])
    assert end["interrupted"] == "KeyboardInterrupt"
    with pytest.raises(TraceIncomplete, match="interrupted"):
        seedbed.replay(_sleeper, trace=path)


def test_the_trace_is_written_as_the_run_goes(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    seen: list[int] = []

    async def long_run() -> None:
        for _ in range(3 * FLUSH_EVERY):
            await asyncio.sleep(0.001)
        seen.append(path.exists())  # the path is not written until the run is over
        partial = path.with_name(f".{path.name}.partial")  # what a SIGKILL now would leave
        with open(partial, encoding="utf-8") as written:
            seen.append(sum(1 for _ in written))

    seedbed.run(long_run, seed=1, trace=path)
    assert seen[0] is False and seen[1] > 2 * FLUSH_EVERY
    assert "end" in json.loads(path.read_text().splitlines()[-1])
    assert list(tmp_path.iterdir()) == [path]  # renamed into place


# -- histories -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (f'{{"process": 0, "type": "invoke", "f": "write", "value": {HUGE}}}\n', 1),
        (f'{{"process": 0, "type": "invoke", "f": "write", "value": {DEEP}}}\n', 1),
        (f'{{:process {HUGE}, :type :invoke, :f :get, :key "k", :value nil}}\n', 1),
        ("{:process 0, :type :invoke, :f :get, :key " + DEEP + ", :value nil}\n", 1),
        (f"INFO  jepsen.util - {HUGE}\t:invoke\t:read\tnil\n", 1),
        (f"INFO  jepsen.util - 0\t:invoke\t:write\t{HUGE}\n", 1),
    ],
)
def test_history_parsers_refuse_huge_ints_and_deep_nesting(text: str, line: int) -> None:
    with pytest.raises(HistoryError) as info:
        parse_history(text, "h.txt")
    assert f"h.txt:{line}:" in str(info.value) and "\n" not in str(info.value)


def test_history_parsers_read_maps_used_as_keys_and_values() -> None:
    text = (
        '{:process 0, :type :invoke, :f :put, :key {:a 1}, :value {[1 2] "x"}}\n'
        '{:process 0, :type :ok, :f :put, :key {:a 1}, :value {[1 2] "x"}}\n'
    )
    history = parse_history(text, "h.edn")
    assert len(history.operations()) == 1


DICT_HISTORY = [
    {"process": 0, "type": "invoke", "f": "write", "value": {"x": 1}},
    {"process": 0, "type": "ok", "f": "write", "value": {"x": 1}},
    {"process": 1, "type": "invoke", "f": "read", "value": None},
    {"process": 1, "type": "ok", "f": "read", "value": {"x": 1}},
]


@pytest.mark.parametrize("model", sorted(MODELS))
def test_the_checker_takes_dict_values_for_every_model(model: str) -> None:
    text = "".join(json.dumps(event) + "\n" for event in DICT_HISTORY)
    history = parse_history(text, "h.jsonl")
    try:
        verdict = linearizable(history, MODELS[model]())
    except UsageError as exc:  # the model cannot read these operations: said in one line
        assert "\n" not in str(exc)
    else:
        assert verdict.outcome is seedbed.check.Outcome.LINEARIZABLE


def test_a_recorder_history_with_dict_values_checks_in_memory_and_from_the_cli(
    tmp_path: Path,
) -> None:
    path = tmp_path / "recorded.jsonl"
    with Recorder(path, clock=lambda: None) as recorder:
        recorder.invoke(0, "write", {"balance": [1, 2]})
        recorder.ok(0)
        recorder.invoke(1, "read")
        recorder.ok(1, {"balance": [1, 2]})
    verdict = linearizable(recorder.history, seedbed.check.register())
    assert verdict.outcome is seedbed.check.Outcome.LINEARIZABLE
    done = subprocess.run(
        [sys.executable, "-m", "seedbed", "check-history", "--model", "register", str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def test_a_world_writes_its_trace_as_the_run_goes_and_says_when_interrupted(
    tmp_path: Path,
) -> None:
    path = tmp_path / "world.jsonl"
    seen: list[dict[str, object]] = []

    async def client() -> None:
        await asyncio.sleep(1)
        partial = path.with_name(f".{path.name}.partial")  # on disk mid-run, beside the path
        seen.append(json.loads(partial.read_text().splitlines()[0]))
        raise KeyboardInterrupt  # as if someone pressed Ctrl-C

    sim = seedbed.Simulation(seed=3, trace=path)
    sim.client("c1", client)
    with pytest.raises(KeyboardInterrupt):
        sim.run(max_time=10)
    assert seen and seen[0]["seed"] == 3 and "network" in seen[0]  # the world's header
    end = json.loads(path.read_text().splitlines()[-1])
    assert end["interrupted"] == "KeyboardInterrupt"

    async def uninterrupted() -> None:  # the same run, had nobody pressed Ctrl-C
        await asyncio.sleep(1)
        path.read_text()
        await asyncio.sleep(1)

    replayed = seedbed.Simulation(seed=3, replay=path)
    replayed.client("c1", uninterrupted)
    with pytest.raises(TraceIncomplete, match="interrupted"):
        replayed.run(max_time=10)
