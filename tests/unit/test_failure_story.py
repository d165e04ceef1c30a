"""A failure explains itself (issue 43): the report tells the faults and world events
that touched the failure, counts every fault that changed what the program saw,
names plain targets' replays by the command that ran them, says one failure
once, and shrinking keeps a run typical. On small systems of held-out kinds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.unit import _heldout

from seedbed import FaultProfile, Scenario, Simulation
from seedbed._harness.shrink._search import Shrinker
from seedbed._harness.shrink._trial import asyncio_log_off
from seedbed._harness.targets import run_target
from seedbed.faults import Nemesis

REPO = Path(__file__).resolve().parents[2]
MAX_LINES = 60


def _first_failure(scenario: Scenario, seeds: int = 30) -> Any:
    for seed in range(seeds):
        _, error = scenario.execute(seed)
        if error is not None:
            return error
    raise AssertionError(f"{scenario.name} never failed in {seeds} seeds")


def _story(error: Any) -> list[str]:
    text = error.report.describe()
    assert len(str(error).splitlines()) <= MAX_LINES
    start = text.index("what happened")
    return text[start:].split("\n  last ")[0].splitlines()[1:]


def test_a_udp_two_phase_commit_names_the_datagram_lost_on_the_link_to_the_participant() -> None:
    error = _first_failure(_heldout.two_phase)
    participant = re.search(r"not on (p\d)", error.message).group(1)  # type: ignore[union-attr]
    lost = [line for line in _story(error) if f"datagram coord->{participant} lost" in line]
    assert lost and all(line.lstrip().startswith("*") for line in lost)  # it touched the failure
    counts = error.report.faults["datagram_loss"]
    assert counts["injected"] == counts["effective"] >= 1  # a loss is a fault, and effective


def test_a_job_queues_double_charge_names_the_cut_link_the_late_ack_was_dropped_on() -> None:
    error = _first_failure(_heldout.job_queue)
    cuts = [line for line in _story(error) if " partition " in line and "dropped (on w" in line]
    assert cuts, error.report.describe()
    assert re.search(r"\d+ datagrams? dropped \(on w\d->coord", cuts[0])
    assert error.report.faults["partition"]["effective"] >= 1  # was 0 on every datagram system


def test_a_corrupted_read_that_failed_the_run_counts_as_effective_while_still_in_force() -> None:
    error = _first_failure(_heldout.unchecked_store)
    assert error.report.faults["disk_corruption"]["effective"] >= 1
    story = _story(error)
    assert any("disk corruption db's disk: 1 read corrupted; still in force" in s for s in story)
    assert any("db's disk: a read of /count came back corrupted" in line for line in story)


def test_a_wall_clock_step_is_effective_only_once_its_node_reads_the_wall_clock() -> None:
    sim = Simulation(seed=1)
    sim.host("reads", _heldout.wall_clock_reader)
    sim.host("monotonic", _heldout.monotonic_only)
    nemesis = Nemesis(sim, FaultProfile(clock_jump_per_second=4.0), sim.loop.entropy.stream("n"))
    sim.at(0.0, nemesis.start)
    sim.run(max_time=6.0)
    records = nemesis.records()
    on = {
        name: [r["effective"] for r in records if r["nodes"] == [name]]
        for name in sim.nodes.names()
    }
    assert on["monotonic"] and not any(on["monotonic"])  # stepped, never read: nothing seen
    assert on["reads"] and all(on["reads"][:-1])  # read every 0.1 s (the last may be too late)
    assert nemesis.counts["clock_jump"]["effective"] == sum(r["effective"] for r in records)


def test_an_f_seed_targets_failure_has_steps_its_node_and_the_cut_the_test_made() -> None:
    target = "tests.unit._heldout:cut_build"
    outcome = run_target(_heldout.cut_build, 0, target=target)
    assert outcome.error is not None and outcome.steps and outcome.virtual_time
    report = outcome.report
    assert report.node == "c1" and report.location.startswith("tests/unit/_heldout.py:")
    assert any("link c1<->srv cut (partition)" in entry["text"] for entry in report.story)
    assert report.replay == f"seedbed run {target} --seed 0"


def _seedbed(*args: str) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if key != "SEEDBED_REEXEC"}
    return subprocess.run([sys.executable, "-m", "seedbed", *args], cwd=REPO, env=environment,
                          capture_output=True, text=True, check=False)  # fmt: skip


def test_a_plain_mains_report_replays_by_its_command_and_shows_its_events() -> None:
    target = "tests.unit._heldout:racy_main"  # a closure: its own name imports nothing
    done = _seedbed("run", target, "--seed", "3")
    assert done.returncode == 1
    printed = done.stdout + done.stderr
    assert len(printed.splitlines()) <= MAX_LINES
    assert f"  replay: seedbed run {target} --seed 3\n" in done.stderr
    assert "  at: tests/unit/_heldout.py:" in done.stderr
    assert re.search(r"  last \d+ events", done.stderr)
    assert "steps=None" not in printed


def test_a_failure_is_reported_once_and_its_echoes_are_folded_into_a_count() -> None:
    done = _seedbed("run", "tests.unit._heldout:noisy_main", "--seed", "1")
    assert done.returncode == 1
    printed = done.stdout + done.stderr
    assert printed.count("InvariantViolation: handler numbers are negative") == 1
    assert "never retrieved" not in printed
    assert "4 later reports of tasks the failure left behind folded" in printed
    assert len(printed.splitlines()) <= MAX_LINES


def test_shrinking_a_cancellation_failure_keeps_its_one_slow_hop_not_a_spike_on_every_hop() -> None:
    with asyncio_log_off():
        shrunk = Shrinker(_heldout.pooled, 0, {}, budget=60).shrink()
    before, after = shrunk.original, shrunk.best
    assert after.bucket == before.bucket
    # A latency batch is 64 hops of two 32-bit lanes: what is left off typical is
    # the one spike the failure needs; every other hop is a median hop.
    assert before.loud_lanes > 100 and 1 <= after.loud_lanes <= 2
    timeouts = int(re.search(r"after (\d+) timeouts", after.failure["message"]).group(1))  # type: ignore[index, union-attr]
    assert timeouts >= 1
