"""An explore folder is as hard to break as a sweep's (issue 44, items 1, 2, 3 and 6).

One search writes a folder at a time, and a SIGKILLed one resumes to the
search it interrupted; every damaged log is refused by `--resume` and
`report` in one line naming the line (never a traceback, never a hang on a
FIFO); a full disk or an unwritable folder says which file and how to go
on; and what a search keeps in memory does not grow with its runs.
"""

from __future__ import annotations

import errno
import fcntl
import gc
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from seedbed._harness.search import ExploreSpec, explore
from seedbed._harness.search._corpus import CACHED, StoredChoices
from seedbed._harness.search._engine import SEARCH
from seedbed.cli import cli
from seedbed.errors import UsageError

REPO = Path(__file__).resolve().parents[2]
RETRIES = "examples.rare:retries"
STEADY = f"{Path(__file__).parent / '_explore_targets.py'}:steady"


def run_cli(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def start(*args: str) -> subprocess.Popen[str]:
    """`seedbed` in its own process, as a user's shell starts it."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("SEEDBED_REEXEC", None)
    return subprocess.Popen([sys.executable, "-m", "seedbed", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def _runs_written(log: Path) -> int:
    return log.read_bytes().count(b'"kind": "run"') if log.exists() else 0


def _wait_for_runs(process: subprocess.Popen[str], log: Path, runs: int) -> None:
    deadline = time.monotonic() + 60
    while _runs_written(log) < runs:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the search wrote nothing for a minute"
        time.sleep(0.01)


def _comparable(out: Path) -> list[dict[str, Any]]:
    """The log's run lines, with the folder's name out of file paths, and the
    command that started seedbed out of replay commands."""
    lines = [json.loads(row) for row in (out / "explore.jsonl").read_text().splitlines()]
    runs = [line for line in lines if line["kind"] == "run"]
    for line in runs:
        if line.get("replay"):
            line["replay"] = line["replay"].rsplit(" run ", 1)[1]
    return json.loads(json.dumps(runs).replace(str(out), "OUT"))


def _files(out: Path) -> dict[str, bytes]:
    found = {}
    for path in sorted([*out.glob("corpus/*.json"), *out.glob("failures/*.json")]):
        found[str(path.relative_to(out))] = path.read_bytes()
    return found


# -- one writer, and a SIGKILL loses nothing ------------------------------------


def test_a_search_into_a_locked_folder_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    fd = os.open(tmp_path / SEARCH.lock_name, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # what a running search holds
    try:
        for extra in ((), ("--resume",)):
            done = run_cli("explore", RETRIES, "--runs", "4", "--out", str(tmp_path), *extra)
            assert done.exit_code == 2, done.output
            assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
            assert f"another search is writing {tmp_path}" in done.stderr
    finally:
        os.close(fd)
    assert not (tmp_path / "explore.jsonl").exists()
    assert run_cli("explore", RETRIES, "--runs", "4", "--out", str(tmp_path)).exit_code in (0, 1)


def test_a_second_search_while_one_runs_is_refused_and_nothing_is_duplicated(
    tmp_path: Path,
) -> None:
    out, log = tmp_path / "out", tmp_path / "out" / "explore.jsonl"
    first = start("explore", RETRIES, "--runs", "2000", "--out", str(out))
    try:
        _wait_for_runs(first, log, 3)
        second = run_cli("explore", RETRIES, "--runs", "2000", "--out", str(out), "--resume")
        assert first.poll() is None  # the first was still writing
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    assert second.exit_code == 2 and "another search is writing" in second.stderr
    indexes = [line["index"] for line in _comparable(out)]
    assert indexes == list(range(len(indexes)))  # each run once, in order
    assert log.read_text().count('"kind": "stop"') == 0


def test_a_search_sigkilled_twice_resumes_to_the_search_it_interrupted(tmp_path: Path) -> None:
    runs = "64"
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    explore(ExploreSpec(RETRIES, whole, seed=3, runs=int(runs)))
    for kill_after in (16, 36):
        extra = ("--resume",) if cut.exists() else ()
        killed = start("explore", RETRIES, "--seed", "3", "--runs", runs, "--out", str(cut), *extra)
        _wait_for_runs(killed, cut / "explore.jsonl", kill_after)
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
    resumed = explore(ExploreSpec(RETRIES, cut, seed=3, runs=int(runs), resume=True))
    assert 36 <= resumed.resumed < int(runs) and resumed.state.runs == int(runs)
    assert _comparable(cut) == _comparable(whole)
    assert _files(cut) == _files(whole)  # the same corpus and failure files


# -- damaged logs: one line, exit 2, from --resume and report --------------------


@pytest.fixture(scope="module")
def searched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small search's folder (it keeps corpus entries and has run lines to damage)."""
    out = tmp_path_factory.mktemp("searched") / "out"
    explore(ExploreSpec(RETRIES, out, seed=3, runs=16))
    return out


def _damaged(searched: Path, tmp_path: Path, damage: Any) -> tuple[Path, int]:
    """A copy of the search with one line of its log damaged; that line's number."""
    out = tmp_path / "out"
    out.mkdir()
    for folder in ("corpus", "failures"):
        if (searched / folder).is_dir():
            (out / folder).mkdir()
            for path in (searched / folder).iterdir():
                (out / folder / path.name).write_bytes(path.read_bytes())
    rows = (searched / "explore.jsonl").read_bytes().split(b"\n")
    kept = next(n for n, row in enumerate(rows) if b'"entry": "' in row)  # a corpus line
    number = 0 if damage is _header else kept
    rows[number] = damage(rows[number])
    (out / "explore.jsonl").write_bytes(b"\n".join(rows))
    return out, number + 1


def _with(**fields: Any) -> Any:
    def damage(row: bytes) -> bytes:
        line = json.loads(row)
        line.update(fields)
        return json.dumps(line).encode()

    return damage


def _header(row: bytes) -> bytes:
    return row.replace(b'"target": "', b'"target": 5, "was": "')


DAMAGES = {
    "invalid UTF-8": lambda row: row[:20] + b"\xff\xfe" + row[20:],
    "an integer entry": _with(entry=0),
    "a truncated line": lambda row: row[: len(row) // 2],
    "a huge index": _with(index=10**40),
    "a 5,000-digit index": lambda row: row.replace(b'"index": ', b'"index": ' + b"9" * 5000, 1),
    "features not a list": _with(features=7),
    "a list, not an object": lambda row: b"[1, 2]",
    "nesting 5,000 deep": lambda row: b"[" * 5000 + b"]" * 5000,
    "a 2 MB line": lambda row: row[:-1] + b', "pad": "' + b"x" * (2 << 20) + b'"}',
    "a bad draw order": _with(order=[[0, "many"]]),
    "a damaged header": _header,
}


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=DAMAGES.keys())
def test_a_damaged_log_is_refused_in_one_line_by_resume_and_report(
    searched: Path, tmp_path: Path, damage: Any
) -> None:
    out, number = _damaged(searched, tmp_path, damage)
    log = out / "explore.jsonl"
    before = log.read_bytes()
    resumed = run_cli("explore", RETRIES, "--seed", "3", "--runs", "24", "--out", str(out),
                      "--resume")  # fmt: skip
    assert resumed.exit_code == 2, resumed.output
    assert resumed.stderr.count("\n") == 1 and "Traceback" not in resumed.stderr
    assert f"{log}:{number}: " in resumed.stderr and "move it away" in resumed.stderr
    assert log.read_bytes() == before  # refused before anything was written
    shown = run_cli("report", str(out), "--html", str(tmp_path / "page.html"))
    assert shown.exit_code == 2, shown.output
    assert shown.stderr.count("\n") == 1 and f"line {number}" in shown.stderr


def test_a_fifo_or_a_device_as_the_log_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "explore.jsonl")
    for args in (("explore", RETRIES, "--runs", "4", "--resume", "--out", str(tmp_path)),
                 ("report", str(tmp_path), "--html", str(tmp_path / "page.html"))):  # fmt: skip
        done = start(*args)
        _, stderr = done.communicate(timeout=60)  # a hang fails here
        assert done.returncode == 2 and stderr.count("\n") == 1, stderr
        assert "is a FIFO, not a regular file" in stderr
    (tmp_path / "explore.jsonl").unlink()
    (tmp_path / "explore.jsonl").symlink_to("/dev/zero")
    done = run_cli("explore", RETRIES, "--runs", "4", "--resume", "--out", str(tmp_path))
    assert done.exit_code == 2 and "a character device" in done.stderr


def test_a_torn_last_line_is_cut_off_and_its_run_made_again(tmp_path: Path) -> None:
    explore(ExploreSpec(RETRIES, tmp_path / "whole", seed=1, runs=12))
    cut = tmp_path / "cut"
    explore(ExploreSpec(RETRIES, cut, seed=1, runs=7))
    log = cut / "explore.jsonl"
    log.write_bytes(log.read_bytes() + b'{"kind": "run", "index": 7, "pl')  # a kill mid-line
    explore(ExploreSpec(RETRIES, cut, seed=1, runs=12, resume=True))
    assert _comparable(cut) == _comparable(tmp_path / "whole")


# -- full disks and unwritable folders: the path and the next step ---------------


def test_a_full_disk_names_the_log_keeps_the_runs_and_says_how_to_continue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from seedbed._harness.sweeps import _results

    real_write, written = os.write, {"runs": 0}

    def write(fd: int, data: bytes) -> int:
        if b'"kind": "run"' in data:
            written["runs"] += 1
            if written["runs"] > 5:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(_results.os, "write", write)
    argv = ["explore", RETRIES, "--runs", "9", "--out", str(tmp_path)]
    with pytest.raises(UsageError) as refused:
        explore(ExploreSpec(RETRIES, tmp_path, runs=9, argv=argv))
    message = str(refused.value)
    assert f"cannot write {tmp_path / 'explore.jsonl'} (No space left on device)" in message
    assert message.endswith(f"explore {RETRIES} --runs 9 --out {tmp_path} --resume")
    assert "\n" not in message and _runs_written(tmp_path / "explore.jsonl") == 5
    monkeypatch.setattr(_results.os, "write", real_write)
    assert explore(ExploreSpec(RETRIES, tmp_path, runs=9, resume=True)).resumed == 5


def test_a_full_disk_for_a_corpus_file_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from seedbed._core import files

    def full(*args: Any) -> Any:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files.os, "fdopen", full)
    with pytest.raises(UsageError, match=r"cannot write \S+/corpus/run-\d+\.json \(No space"):
        explore(ExploreSpec(RETRIES, tmp_path, runs=16))


@pytest.mark.parametrize("command", ["explore", "sweep"])
def test_a_folder_that_cannot_be_written_is_named_with_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    from seedbed._harness.sweeps import _folder

    def read_only(*args: Any) -> int:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(_folder.os, "open", read_only)
    runs = ("--runs", "2") if command == "explore" else ("--seeds", "2", "--jobs", "1")
    done = run_cli(command, RETRIES, *runs, "--out", str(tmp_path / "ro"))
    assert done.exit_code == 2 and done.stderr.count("\n") == 1
    lock = "explore.lock" if command == "explore" else "sweep.lock"
    assert f"cannot write in {tmp_path / 'ro'} (creating {tmp_path / 'ro' / lock}: " in done.stderr
    assert "Read-only file system" in done.stderr and "--out DIR" in done.stderr


# -- memory: nothing is kept per run ---------------------------------------------


def _reachable(*roots: object, skip: tuple[object, ...]) -> int:
    """How many objects are reachable from `roots` (not through `skip`), small ints aside."""
    seen: set[int] = {id(item) for item in skip}
    todo, count = list(roots), 0
    while todo:
        item = todo.pop()
        if id(item) in seen or isinstance(item, int | float | bool | type):
            continue
        seen.add(id(item))
        count += 1
        todo.extend(gc.get_referents(item))
    return count


def test_a_search_keeps_nothing_per_run_and_reads_corpus_draws_from_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from seedbed._harness.search import _execute

    handed: list[int] = []  # runs keep the collector off: each run's garbage is handed back
    monkeypatch.setattr(_execute, "between_runs", lambda: handed.append(1) or False)
    sizes, rechecked = [], 0
    for runs in (48, 144):
        search = explore(ExploreSpec(STEADY, tmp_path / str(runs), seed=0, runs=runs))
        rechecked += search.rechecks.checked  # a run made twice is a run too
        state, store = search.state, search.store
        assert len(state.corpus) >= 2 and len(store.cache) <= CACHED
        assert all(isinstance(entry.choices, StoredChoices) for entry in state.corpus)
        sizes.append((len(state.corpus), _reachable(search, skip=(store.cache,))))
    assert sizes[0] == sizes[1]  # three times the runs, not one object more
    assert rechecked > 2 and len(handed) == 48 + 144 + rechecked
