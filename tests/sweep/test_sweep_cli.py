"""`seedbed sweep`: parallel, durable, resumable; failures bucketed with replays that run."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.sweep._cli import (
    RACE,
    REPO,
    environment,
    records,
    seed_results,
    seedbed,
    start,
    write_program,
)

CONTRACT_FIELDS = {
    "kind", "seed", "status", "error_type", "message", "bucket", "location", "replay",
    "trace_hash", "steps", "virtual_time", "wall_time", "profile", "faults", "assertions",
    "result_digest",
}  # fmt: skip


def test_a_sweep_buckets_the_failures_and_names_the_smallest_seed_and_its_line(
    tmp_path: Path,
) -> None:
    # --no-saved: another test's sweep of RACE from this checkout (on the other
    # pytest-xdist worker) may have saved seed 7, which would then replay first
    # and not be announced as new.
    done = seedbed("sweep", RACE, "--seeds", "40", "--out", str(tmp_path), "--no-saved")
    assert done.returncode == 1, done.stderr
    assert "40 seeds: 36 passed, 4 failed" in done.stdout
    assert "failing seeds: 7, 19, 35, 36" in done.stdout
    assert "4 x AssertionError: balance went negative: <n>" in done.stdout
    assert "smallest seed 7, at examples/race.py:41" in done.stdout
    assert "seedbed run examples.race:main --seed 7" in done.stdout
    assert "40/40 seeds, 4 failed" in done.stderr  # plain status lines when not on a terminal
    assert "new failure, seed 7: AssertionError" in done.stderr


def test_the_results_file_has_a_header_and_one_contract_record_per_seed(tmp_path: Path) -> None:
    seedbed("sweep", RACE, "--seeds", "12", "--first", "3", "--out", str(tmp_path))
    header, *lines = records(tmp_path / "results.jsonl")
    seeds = [line for line in lines if line["kind"] == "seed"]
    rechecks = [line for line in lines if line["kind"] == "recheck"]  # the sweep's self-check
    assert rechecks and all(line["same"] for line in rechecks)
    assert header["kind"] == "header" and header["version"] == 1
    assert (header["target"], header["first"], header["seeds"]) == (RACE, 3, 12)
    assert {"options", "seedbed", "python", "started"} <= set(header)
    assert sorted(record["seed"] for record in seeds) == list(range(3, 15))
    for record in seeds:
        assert set(record) >= CONTRACT_FIELDS
        assert record["status"] in ("pass", "fail")
        assert record["trace_hash"] and record["steps"] > 0
    failed = next(record for record in seeds if record["seed"] == 7)
    assert failed["bucket"] == "AssertionError: balance went negative: <n> (at examples/race.py:41)"
    assert failed["message"] == "balance went negative: -30"
    assert failed["location"] == "examples/race.py:41"
    assert failed["result_digest"] is None


def test_two_workers_give_the_same_results_as_one(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    seedbed("sweep", RACE, "--seeds", "30", "--jobs", "1", "--out", str(one))
    seedbed("sweep", RACE, "--seeds", "30", "--jobs", "2", "--out", str(two))
    assert seed_results(one / "results.jsonl") == seed_results(two / "results.jsonl")
    assert len(seed_results(one / "results.jsonl")) == 30


SLOW = "for _ in range(300_000):\n    pass\nassert random.random() > 0.2, 'unlucky draw'"


def _wait_for_records(path: Path, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().count('"kind": "seed"') >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} records in {path} after {timeout} s")


def test_sigkill_midway_then_resume_gives_the_same_results_as_one_uninterrupted_sweep(
    tmp_path: Path,
) -> None:
    target = write_program(tmp_path, SLOW)
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    seedbed("sweep", target, "--seeds", "40", "--out", str(whole))
    sweep = start("sweep", target, "--seeds", "40", "--out", str(cut))
    _wait_for_records(cut / "results.jsonl", 8)
    sweep.send_signal(signal.SIGKILL)
    sweep.wait()
    kept = seed_results(cut / "results.jsonl")
    assert 8 <= len(kept) < 40
    done = seedbed("sweep", target, "--seeds", "40", "--out", str(cut), "--resume")
    assert done.returncode == 1, done.stderr
    assert f"{40 - len(kept)} run in" in done.stdout  # finished seeds were not run again
    assert seed_results(cut / "results.jsonl") == seed_results(whole / "results.jsonl")
    headers = [r for r in records(cut / "results.jsonl") if r["kind"] == "header"]
    assert len(headers) == 2


def test_a_seed_that_kills_its_worker_and_one_that_spins_are_recorded_while_others_finish(
    tmp_path: Path,
) -> None:
    target = write_program(
        tmp_path,
        "if seed == 3:\n    os._exit(3)\nif seed == 5:\n    while True:\n        pass\nreturn seed",
    )
    done = seedbed("sweep", target, "--seeds", "10", "--seed-timeout", "3", "--out",
                   str(tmp_path / "out"), "--json")  # fmt: skip
    assert done.returncode == 1, done.stderr
    lines = records(tmp_path / "out" / "results.jsonl")[1:]
    by_seed = {r["seed"]: r for r in lines if r["kind"] == "seed"}
    assert sorted(by_seed) == list(range(10))
    assert by_seed[3]["status"] == "crash"
    assert by_seed[3]["message"] == "the worker running this seed exited with status 3"
    assert by_seed[5]["status"] == "timeout"
    assert "--seed-timeout" in by_seed[5]["message"]
    assert all(by_seed[s]["status"] == "pass" for s in range(10) if s not in (3, 5))
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["failing_seeds"] == [3, 5]
    assert (summary["crashed"], summary["timed_out"]) == (1, 1)


@pytest.mark.parametrize(("how", "code", "name"), [(signal.SIGINT, 130, "Ctrl-C"),
                                                   (signal.SIGTERM, 143, "SIGTERM")])  # fmt: skip
def test_ctrl_c_and_sigterm_stop_the_sweep_with_its_summary_and_the_resume_command(
    tmp_path: Path, how: int, code: int, name: str
) -> None:
    target = write_program(tmp_path, SLOW)
    out = tmp_path / "out"
    sweep = start("sweep", target, "--seeds", "400", "--out", str(out))
    _wait_for_records(out / "results.jsonl", 6)
    sweep.send_signal(how)
    stdout, stderr = sweep.communicate(timeout=60)
    assert sweep.returncode == code, stderr
    assert f"stopped by {name} after " in stdout and " of 400 seeds" in stdout
    assert "continue it with: " in stdout and "--resume" in stdout
    assert "Traceback" not in stderr
    kept = seed_results(out / "results.jsonl")
    assert f"after {len(kept)} of 400 seeds" in stdout  # the summary is what is on disk


def test_json_ends_with_one_object_of_totals_and_buckets(tmp_path: Path) -> None:
    done = seedbed("sweep", RACE, "--seeds", "40", "--json", "--out", str(tmp_path))
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert (summary["seeds"], summary["passed"], summary["failed"]) == (40, 36, 4)
    assert summary["failing_seeds"] == [7, 19, 35, 36]
    [bucket] = summary["buckets"]
    assert bucket["count"] == 4 and bucket["smallest_seed"] == 7
    assert bucket["bucket"] == "AssertionError: balance went negative: <n> (at examples/race.py:41)"


@pytest.mark.parametrize("through_uv", [True, False])
def test_the_printed_replay_command_runs_when_pasted_into_the_shell(
    tmp_path: Path, through_uv: bool
) -> None:
    env = environment()
    env.pop("UV_RUN_RECURSION_DEPTH", None)
    if through_uv:
        if shutil.which("uv", path=env.get("PATH")) is None:
            pytest.skip("uv is not on PATH here, so no shell could have started `uv run seedbed`")
        env["UV_RUN_RECURSION_DEPTH"] = "1"  # what `uv run` sets for what it starts
    done = subprocess.run(
        [sys.executable, "-m", "seedbed", "sweep", RACE, "--seeds", "8", "--json",
         "--out", str(tmp_path)],
        cwd=REPO, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    [bucket] = json.loads(done.stdout.strip().splitlines()[-1])["buckets"]
    assert bucket["replay"].startswith("uv run seedbed run " if through_uv else "")
    pasted = subprocess.run(
        ["bash", "-c", bucket["replay"]], cwd=REPO, env=env, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert pasted.returncode == 1, pasted.stderr
    assert "AssertionError: balance went negative: -30" in pasted.stderr


def test_traceback_shows_the_full_traceback_of_each_bucket(tmp_path: Path) -> None:
    done = seedbed("sweep", RACE, "--seeds", "10", "--traceback", "--out", str(tmp_path))
    assert "Traceback (most recent call last):" in done.stdout
    assert 'examples/race.py", line 41, in main' in done.stdout


def test_what_the_program_prints_does_not_disturb_the_workers(tmp_path: Path) -> None:
    target = write_program(tmp_path, 'print("{not json")\nprint("x" * 100_000)\nreturn 1')
    done = seedbed("sweep", target, "--seeds", "6", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert "6 seeds, no failures" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("sweep", "examples.race:absent", "--seeds", "3"), "has no 'absent'"),
        (("sweep", "no_such_module:main", "--seeds", "3"), "cannot import 'no_such_module'"),
        (("sweep", "examples.race:random.random", "--seeds", "3"), "must be an async callable"),
        (("sweep", RACE, "--jobs", "0"), "--jobs"),
    ],
)
def test_a_target_that_cannot_run_is_one_line_and_exit_two(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    done = seedbed(*args, "--out", str(tmp_path))
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_resume_refuses_another_target_and_a_damaged_file(tmp_path: Path) -> None:
    seedbed("sweep", RACE, "--seeds", "4", "--out", str(tmp_path))
    done = seedbed("sweep", RACE, "--seeds", "4", "--max-steps", "99", "--out", str(tmp_path),
                   "--resume")  # fmt: skip
    assert done.returncode == 2 and "resume with the same options" in done.stderr
    path = tmp_path / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join([*lines[:2], "{oops\n", *lines[2:]]))
    done = seedbed("sweep", RACE, "--seeds", "4", "--out", str(tmp_path), "--resume")
    assert done.returncode == 2
    assert f"{path}:3: not a JSON line" in done.stderr and done.stderr.count("\n") == 1


def test_resume_drops_a_line_cut_short_by_a_kill_and_runs_that_seed_again(tmp_path: Path) -> None:
    seedbed("sweep", RACE, "--seeds", "10", "--out", str(tmp_path))
    path = tmp_path / "results.jsonl"
    whole = seed_results(path)
    text = path.read_text()
    path.write_text(text[: text.rindex('{"kind": "seed"') + 30])  # the last record, half written
    done = seedbed("sweep", RACE, "--seeds", "10", "--out", str(tmp_path), "--resume")
    assert "1 run in" in done.stdout, done.stdout + done.stderr
    assert seed_results(path) == whole


def test_a_scenario_sweep_reports_fault_effectiveness_and_the_assertion_catalog(
    tmp_path: Path,
) -> None:
    target = "tests.sweep._scenarios:pinging"
    done = seedbed("sweep", target, "--seeds", "6", "--json", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    seeds = [r for r in records(tmp_path / "results.jsonl") if r["kind"] == "seed"]
    assert all(r["profile"]["partition_per_second"] == 1.0 for r in seeds)
    assert all(set(r["faults"]) >= {"crash", "partition"} for r in seeds)
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    partitions = summary["faults"]["partition"]
    assert partitions["injected"] == sum(r["faults"]["partition"]["injected"] for r in seeds)
    assert partitions["seeds_on"] == sum(r["faults"]["partition"]["injected"] > 0 for r in seeds)
    # evaluated and never true, and declared on a path no seed took (never evaluated)
    assert summary["never_true"] == ["a client sent more than a hundred pings", "a ping failed"]
    assert summary["assertions"]["a ping failed"]["evaluated"] == 0
    answered = summary["assertions"]["a ping was answered"]
    assert answered["kind"] == "reachable" and answered["seeds_true"] == 6
    line = _line_of("tests/sweep/_scenarios.py", 'seedbed.reachable("a ping was answered")')
    assert answered["location"] == f"tests/sweep/_scenarios.py:{line}"
    assert re.search(r"\n  partition +on in ", done.stderr) and "effective in " in done.stderr
    assert "never true: sometimes 'a client sent more than a hundred pings'" in done.stderr

    again = seedbed("sweep", target, "--seeds", "6", "--out", str(tmp_path), "--resume",
                    "--require-sometimes")  # fmt: skip
    assert again.returncode == 1, again.stderr
    assert "--require-sometimes: 2 never true, a failure" in again.stdout
    assert "0 run in" in again.stdout  # every seed came from the file


def test_a_failing_scenario_is_bucketed_by_the_invariant_that_fired(tmp_path: Path) -> None:
    done = seedbed("sweep", "tests.sweep._scenarios:climbing", "--first", "10", "--seeds", "5",
                   "--json", "--out", str(tmp_path))  # fmt: skip
    assert done.returncode == 1, done.stderr
    [bucket] = json.loads(done.stdout.strip().splitlines()[-1])["buckets"]
    line = _line_of("tests/sweep/_scenarios.py", 'assert state["value"] < 3')
    where = f"tests/sweep/_scenarios.py:{line}"
    assert bucket["bucket"] == f"InvariantViolation: invariant value_stays_small (at {where})"
    assert (bucket["count"], bucket["smallest_seed"]) == (5, 10)
    assert bucket["location"] == f"tests/sweep/_scenarios.py:{line}"
    assert bucket["replay"].endswith("seedbed run tests.sweep._scenarios:climbing --seed 10")


def _line_of(path: str, text: str) -> int:
    lines = (REPO / path).read_text().splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)
