"""Every replay command seedbed prints parses, and reproduces the failure.

One target per kind of failure (a broken `always`, a deadlock, a spent
budget, an escape, an uncaught error, a swallowed cancellation under
--strict, a scenario's invariant and liveness predicate, a replay that
diverged): `seedbed run` it, take the `replay:` line it printed, run that
command, and it must fail the same way (exit 1, the same first line).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from seedbed._core.naming import replay_command
from seedbed.cli import cli

PROGRAM = """
import asyncio, os, time
import seedbed
from seedbed import FaultProfile, Scenario

async def invariant():
    seedbed.always(False, "never true")

async def deadlock():
    await asyncio.Event().wait()

async def budget():
    while True:
        await asyncio.sleep(0)

async def escape():
    time.sleep(0.01)

async def uncaught():
    raise ValueError("bad value")

async def swallowed():
    async def stubborn():
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            pass
        await asyncio.sleep(1)
    task = asyncio.ensure_future(stubborn())
    await asyncio.sleep(0.1)
    task.cancel()
    await task

async def drifting():
    await asyncio.sleep(2 if os.environ.get("SEEDBED_TEST_CHANGED") else 1)

async def _idle():
    await asyncio.sleep(1)
    return "ok"

def _setup(sim):
    sim.client("c1", _idle)

def _never():
    return False

scenario_invariant = Scenario("inv", _setup, duration=2.0, invariants=[_never])
scenario_liveness = Scenario("live", _setup, duration=2.0, liveness=[_never], liveness_timeout=1.0)
"""

KINDS = [
    ("invariant", []),
    ("deadlock", []),
    ("budget", ["--max-steps", "500"]),
    ("escape", []),
    ("uncaught", []),
    ("swallowed", ["--strict"]),
    ("scenario_invariant", []),
    ("scenario_liveness", []),
]


def _replay_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip().startswith("replay:")]
    assert lines, output
    return lines[-1].split("replay:", 1)[1].strip()


def _arguments(command: str) -> list[str]:
    """A printed command's arguments after the program (`seedbed`, `uv run seedbed`...)."""
    words = shlex.split(command)
    return words[words.index("run") :] if "run" in words else words


@pytest.mark.parametrize(("name", "flags"), KINDS, ids=[kind for kind, _ in KINDS])
def test_the_printed_replay_command_parses_and_fails_alike(
    name: str, flags: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "prog.py").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    first = runner.invoke(cli, ["run", f"prog.py:{name}", "--seed", "3", *flags])
    assert first.exit_code == 1, first.output
    command = _replay_line(first.output)
    again = runner.invoke(cli, _arguments(command))
    assert again.exit_code == 1, f"{command}\n{again.output}"
    head = next(line for line in first.output.splitlines() if "Error" in line or ":" in line)
    assert head in again.output, (command, again.output)


def test_a_divergence_prints_a_replay_command_that_parses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "prog.py").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    recorded = runner.invoke(cli, ["run", "prog.py:drifting", "--seed", "3", "--trace", "t.jsonl"])
    assert recorded.exit_code == 0, recorded.output
    monkeypatch.setenv("SEEDBED_TEST_CHANGED", "1")
    diverged = runner.invoke(cli, ["replay", "prog.py:drifting", "--trace", "t.jsonl"])
    assert diverged.exit_code == 1 and "Nondeterminism" in diverged.output, diverged.output
    again = runner.invoke(cli, _arguments(_replay_line(diverged.output)))
    assert again.exit_code == 0, again.output  # the changed program, run alone, passes


def test_a_switch_left_off_is_not_printed_as_a_value() -> None:
    from examples.race import main

    command = replay_command(main, 7, {"strict": False, "max_steps": 10, "explore_tasks": True})
    assert "False" not in command and "--strict" not in command
    assert command.endswith("--seed 7 --max-steps 10 --explore-tasks")
