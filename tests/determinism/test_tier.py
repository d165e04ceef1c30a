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
    assert len(first) == 4 * SEEDS
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
        assert outcomes[minor]["results"] == outcomes["3.11"]["results"], minor
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
