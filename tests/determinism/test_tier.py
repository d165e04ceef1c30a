"""The determinism tier: hundreds of seeds of several programs, in fresh processes
under different string-hash seeds, heap layouts and CPython versions, must
agree on every trace hash and every result digest."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import seedbed
from seedbed import Nondeterminism
from seedbed._core.tracefile import header_digest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SEEDS = 60  # per program and process: 4 programs x 60 seeds x 3 processes = 720 runs
SIMULATED = 3 * 8  # three worlds x their seeds (`_batch.SIMULATION_SEEDS`)
# Worlds whose events differ by interpreter on purpose: aiohttp and the
# program start eager tasks on 3.12+ only. Each must still agree with itself.
PER_VERSION = ("aiohttp_eager_tasks/", "aiohttp_plain_loopback/", "aiohttp_shared_lookup/")


def _start(python: str, pad: int, hash_seed: str, seeds: int, traces: Path | None = None) -> Any:
    """Start one batch process (see `_batch.py`); `_finish` collects it."""
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(REPO / "src")}
    command = [python, str(HERE / "_batch.py"), str(pad), str(seeds)]
    if traces is not None:
        command.append(str(traces))
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip


def _finish(process: Any) -> Any:
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr[-2000:]
    return json.loads(stdout.splitlines()[-1])


def test_every_seed_agrees_across_processes_hash_seeds_and_heaps() -> None:
    processes = [
        _start(sys.executable, pad, hash_seed, SEEDS)
        for pad, hash_seed in ((0, "0"), (1, "1"), (2, "random"))
    ]
    batches = [_finish(process) for process in processes]
    first = batches[0]["results"]
    assert len(first) == 4 * SEEDS + SIMULATED
    for other in batches[1:]:
        differing = [key for key in first if first[key] != other["results"][key]]
        assert not differing, f"{len(differing)} runs differ, first {differing[0]}"
    hashes = {value[0] for key, value in first.items() if key.startswith("named_workers/")}
    assert len(hashes) > SEEDS // 2  # the seeds do explore


def _interpreters() -> dict[str, str]:
    found = {}
    for minor in ("3.11", "3.12", "3.13"):
        pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
        candidates = sorted(glob.glob(f"{pyenv}/versions/{minor}.*/bin/python{minor}"))
        candidates.append(shutil.which(f"python{minor}") or "")
        for candidate in candidates:
            if candidate and os.access(candidate, os.X_OK):
                found[minor] = candidate
                break
    return found


def test_a_world_whose_tasks_bypass_create_task_gives_one_result_per_seed() -> None:
    # aiohttp's handler (3.12+) and the program's own start tasks with
    # `asyncio.Task(..., eager_start=True)`; `asyncio.wait` returns them in
    # sets. Two processes (hash seeds 0 and 1, shifted heaps) and a third
    # under a random hash seed: one trace hash and one result per seed.
    processes = [
        _start(sys.executable, pad, hash_seed, SIMULATED)
        for pad, hash_seed in ((0, "0"), (3, "1"), (1, "random"))
    ]
    batches = [_finish(process)["results"] for process in processes]
    keys = [key for key in batches[0] if key.startswith(PER_VERSION)]
    assert len(keys) == SIMULATED
    for key in keys:
        assert len({tuple(batch[key]) for batch in batches}) == 1, key


def _shared(results: dict[str, Any]) -> dict[str, Any]:
    """The results every interpreter must agree on."""
    return {key: value for key, value in results.items() if not key.startswith(PER_VERSION)}


@pytest.mark.skipif(
    sys.version_info[:2] != (3, 11),
    reason="runs once, in the 3.11 suite: it starts all three interpreters itself",
)
def test_one_program_gives_one_trace_on_every_supported_python(tmp_path: Path) -> None:
    interpreters = _interpreters()
    missing = sorted({"3.11", "3.12", "3.13"} - set(interpreters))
    if missing:
        pytest.skip(f"CPython {', '.join(missing)} not installed (pyenv install it)")
    traces = tmp_path / "traces"
    traces.mkdir()
    processes = {
        minor: _start(python, 0, "0", 15, traces if minor == "3.11" else None)
        for minor, python in interpreters.items()
    }
    outcomes = {minor: _finish(process) for minor, process in processes.items()}
    for minor, outcome in outcomes.items():
        assert outcome["python"].startswith(minor)
    for minor in ("3.12", "3.13"):
        assert _shared(outcomes[minor]["results"]) == _shared(outcomes["3.11"]["results"]), minor
    # A trace recorded on 3.11, named tasks included, replays on the others.
    for minor in ("3.12", "3.13"):
        code = (
            "import sys, seedbed, det_programs\n"
            "for name in ('named_workers', 'mixed'):\n"
            f"    trace = '{traces}/' + name + '.jsonl'\n"
            "    seedbed.replay(getattr(det_programs, name), trace=trace)\n"
        )
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": f"{REPO / 'src'}:{HERE}"}
        done = subprocess.run([interpreters[minor], "-c", code], env=env, capture_output=True,
                              text=True, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]


def test_a_divergent_replay_of_another_versions_trace_names_both_versions(
    tmp_path: Path,
) -> None:
    import asyncio

    path = tmp_path / "run.jsonl"
    delay = {"value": 1.0}

    async def main() -> None:
        await asyncio.sleep(delay["value"])

    seedbed.run(main, seed=0, trace=path)
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["python"] = "3.10.4"
    header["digest"] = header_digest(header)  # as a real recording on 3.10.4 would carry
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    delay["value"] = 2.0
    with pytest.raises(Nondeterminism) as caught:
        seedbed.replay(main, trace=path)
    message = str(caught.value)
    assert "recorded on Python 3.10.4" in message
    assert sys.version.split()[0] in message


@pytest.mark.skipif(
    sys.version_info[:2] != (3, 11),
    reason="runs in the 3.11 suite: it records on 3.12 and replays here",
)
def test_a_wait_for_trace_from_3_12_fails_on_3_11_in_one_line_naming_both(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    import gc
    import traceback

    import det_programs

    python = _interpreters().get("3.12")
    if python is None:
        pytest.skip("CPython 3.12 not installed (pyenv install it)")
    path = tmp_path / "wait_for.jsonl"
    code = (
        "import seedbed, det_programs\n"
        f"seedbed.run(det_programs.waits_for, seed=0, trace={str(path)!r})\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": f"{REPO / 'src'}:{HERE}"}
    done = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(path.read_text().splitlines()[0])["python"].startswith("3.12.")

    with pytest.raises(Nondeterminism) as caught:
        seedbed.replay(det_programs.waits_for, trace=path)
    first, *rest = str(caught.value).splitlines()
    assert "recorded on Python 3.12." in first and f"replayed on {sys.version.split()[0]}" in first
    # 3.11's wait_for runs one more step before the timer: the first difference
    # is where the next event happened (its position marker), not only which.
    assert "diverged from the recorded trace at event" in first
    assert "recorded: time" in first and "actual: at step" in first
    assert all(line.startswith(("  seed=", "  view:", "  replay:")) for line in rest), rest
    frames = traceback.extract_tb(caught.value.__traceback__)
    internal = [f.name for f in frames if "/src/seedbed/" in f.filename and f.name != "replay"]
    assert not internal  # no loop, trace or task frames: the stdlib differs, not seedbed
    gc.collect()
    assert "never retrieved" not in capfd.readouterr().err

    # The command says the same, with no traceback at all.
    command = [sys.executable, "-m", "seedbed", "replay",
               f"{HERE / 'det_programs.py'}:waits_for", "--trace", str(path)]  # fmt: skip
    shown = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert shown.returncode == 1, shown.stderr[-2000:]
    assert "recorded on Python 3.12." in shown.stderr
    assert "Traceback" not in shown.stderr and "never retrieved" not in shown.stderr


def test_a_seed_after_other_seeds_in_one_process_equals_that_seed_alone() -> None:
    # Default task names (`Task-N`, in the aiohttp world's result) came from
    # asyncio's process-wide counter on 3.12+: seed 5 after seeds 0-4 named
    # its tasks differently from seed 5 in a fresh process.
    batch = _start(sys.executable, 0, "0", 6)
    code = (
        "import json, seedbed, det_programs\n"
        "from seedbed.aio._digest import result_digest\n"
        "out = {}\n"
        "for name in ('named_workers', 'mixed'):\n"
        "    r = seedbed.run(getattr(det_programs, name), seed=5)\n"
        "    out[name + '/5'] = [r.trace_hash, r.result_digest]\n"
        "for name, simulate in det_programs.SIMULATIONS.items():\n"
        "    trace_hash, values = simulate(5)\n"
        "    out[name + '/5'] = [trace_hash, result_digest(values)]\n"
        "print(json.dumps(out))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": f"{REPO / 'src'}:{HERE}"}
    alone = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, check=False)  # fmt: skip
    assert alone.returncode == 0, alone.stderr[-2000:]
    after = _finish(batch)["results"]
    for key, value in json.loads(alone.stdout.splitlines()[-1]).items():
        assert after[key] == value, key
