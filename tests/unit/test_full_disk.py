"""A full disk (ENOSPC) while seedbed writes its own files (issue 27, item 9).

The disk is simulated: the trace writer's `open` returns a file whose writes
fail with ENOSPC after a given number, and the results writer's `os.write`
does the same. Each case must name the file and what to do, leave no empty
or cut file that a later command would trust, and, for a sweep, print the
command that continues it.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import seedbed
from seedbed._core import files, tracefile
from seedbed._core.files import WriteFailed
from seedbed.cli import cli

RACE = "examples.race:main"
FULL = os.strerror(errno.ENOSPC)


class _FullAfter:
    """A file whose writes fail with ENOSPC once `room` of them went through."""

    def __enter__(self) -> _FullAfter:
        return self

    def __exit__(self, *exc: object) -> None:
        self._real.close()

    def __init__(self, real: Any, room: int) -> None:
        self._real, self._room = real, room

    def write(self, text: str | bytes) -> int:
        if self._room <= 0:
            raise OSError(errno.ENOSPC, FULL)
        self._room -= 1
        return int(self._real.write(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@pytest.fixture
def disk_fills(monkeypatch: pytest.MonkeyPatch) -> Any:
    """`disk_fills(room)`: from now on trace files take `room` writes, then ENOSPC."""

    def fill(room: int) -> None:
        real_fdopen = os.fdopen

        def full_fdopen(fd: int, mode: str = "r", **kwargs: Any) -> Any:
            return _FullAfter(real_fdopen(fd, mode, **kwargs), room)

        monkeypatch.setattr(files.os, "fdopen", full_fdopen)

    return fill


@pytest.mark.parametrize("room", [0, 1, 8])  # the header, the first event, mid-run
def test_run_with_a_trace_on_a_full_disk_names_the_file_and_leaves_none(
    tmp_path: Path, disk_fills: Any, room: int
) -> None:
    disk_fills(room)
    trace = tmp_path / "run.trace"
    result = CliRunner().invoke(cli, ["run", RACE, "--seed", "0", "--trace", str(trace)])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1
    assert f"cannot write the trace {trace}: {FULL}" in result.output
    assert "make room" in result.output
    assert not trace.exists()  # no empty or cut trace left to mislead a replay


def test_a_program_catching_oserror_cannot_swallow_the_full_disk(
    tmp_path: Path, disk_fills: Any
) -> None:
    caught: list[BaseException] = []

    async def main() -> int:
        for _ in range(50):
            try:
                await asyncio.sleep(0.01)
            except OSError as exc:  # a program's own handler: the trace's error is not its
                caught.append(exc)
        return 1

    disk_fills(3)
    trace = tmp_path / "main.trace"
    with pytest.raises(WriteFailed, match=r"cannot write the trace .*main\.trace"):
        seedbed.run(main, seed=1, trace=trace)
    assert caught == [] and not trace.exists()


def test_a_simulation_trace_on_a_full_disk_fails_the_same_way(
    tmp_path: Path, disk_fills: Any
) -> None:
    from _viewworld import world

    disk_fills(20)
    trace = tmp_path / "world.trace"
    _, error = world(3, trace)  # the world's own assertion fails too: the disk is named
    assert isinstance(error, WriteFailed) and FULL in str(error)
    assert not trace.exists()


def test_a_trace_with_room_is_written_whole(tmp_path: Path, disk_fills: Any) -> None:
    disk_fills(10**9)  # the fake itself changes nothing
    trace = tmp_path / "ok.trace"
    seedbed.run(lambda: asyncio.sleep(0.1), seed=1, trace=trace)
    assert tracefile.read_trace(trace).end["failure"] is None


def test_a_choice_file_on_a_full_disk_names_the_file_and_leaves_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from seedbed._core import files
    from seedbed._harness.shrink import _file

    real_fdopen = os.fdopen
    monkeypatch.setattr(files.os, "fdopen", lambda fd, mode: _FullAfter(real_fdopen(fd, mode), 0))
    saved = _file.ChoiceFile(RACE, 7, [], {}, None)
    out = tmp_path / "shrunk.json"
    with pytest.raises(WriteFailed) as failed:
        _file.write_choices(out, saved)
    assert str(failed.value).startswith(f"cannot write the choice file {out}: {FULL}")
    assert list(tmp_path.iterdir()) == []  # neither the file nor its temporary


@pytest.mark.parametrize("resuming", [False, True])
def test_a_sweep_whose_header_meets_a_full_disk_says_how_to_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, resuming: bool
) -> None:
    from seedbed._harness.sweeps import _results
    from seedbed._harness.sweeps._engine import SweepSpec, run_sweep
    from seedbed.errors import UsageError

    argv = ["sweep", RACE, "--out", str(tmp_path)]
    if resuming:
        assert run_sweep(SweepSpec(RACE, 0, 2, 1, tmp_path, argv=argv)) in (0, 1)
    real_write = os.write

    def write(fd: int, data: bytes) -> int:
        if b'"kind": "header"' in data:
            raise OSError(errno.ENOSPC, FULL)
        return real_write(fd, data)

    monkeypatch.setattr(_results.os, "write", write)
    spec = SweepSpec(RACE, 0, 4, 1, tmp_path, resume=resuming, argv=[*argv, "--seeds", "4"])
    with pytest.raises(UsageError) as refused:
        run_sweep(spec)
    message = str(refused.value)
    results = tmp_path / "results.jsonl"
    assert f"cannot write {results} ({FULL})" in message and "\n" not in message
    if resuming:
        assert message.endswith(f"sweep {RACE} --out {tmp_path} --seeds 4 --resume")
        kinds = [json.loads(line)["kind"] for line in results.read_text("utf-8").splitlines()]
        # Kept whole: the header, both seeds and the first sweep's self-check.
        assert kinds == ["header", "seed", "seed", "recheck"]
    else:
        assert message.endswith(f"sweep {RACE} --out {tmp_path} --seeds 4")
        assert not results.exists()  # no empty results file left
