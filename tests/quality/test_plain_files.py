"""Quality: a store kept with plain `open`/`os` calls, run unchanged, shows its crash bug.

`examples/plainlog.py` never fsyncs: its acknowledged writes must be lost in
some seeds (the store's own check fails), its fixed twin must pass, neither
may leave a file on the real disk, and a seed must mean the same alone and
after others (the disks are the run's own).
"""

from __future__ import annotations

import os

from examples import plainlog

from seedbed import InvariantViolation
from seedbed._harness.targets import run_target


def test_the_store_that_never_fsyncs_loses_acknowledged_writes_at_a_crash() -> None:
    failed = [seed for seed in range(10) if run_target(plainlog.plainlog, seed).error is not None]
    assert len(failed) >= 5, failed  # nearly every seed with a crash in it
    outcome = run_target(plainlog.plainlog, failed[0])
    assert isinstance(outcome.error, InvariantViolation)
    assert "acknowledged writes missing after a restart" in str(outcome.error)
    assert not os.path.exists(plainlog.DATA)  # its files were never on the real disk


def test_the_store_that_fsyncs_before_it_acknowledges_passes_60_seeds_of_crashes() -> None:
    crashed = 0
    for seed in range(60):
        outcome = run_target(plainlog.plainlog_fixed, seed)
        assert outcome.error is None, f"seed {seed}: {outcome.error}"
        crashed += (outcome.faults or {})["crash"]["effective"] > 0
    assert crashed >= 40  # the crashes came: the fix was exercised
    assert not os.path.exists(plainlog.DATA)


def test_a_seed_means_the_same_alone_and_after_ten_others() -> None:
    alone = run_target(plainlog.plainlog, 7)
    for seed in range(10):
        run_target(plainlog.plainlog, seed)
    again = run_target(plainlog.plainlog, 7)
    assert (again.trace_hash, again.steps, repr(again.error)) == (
        alone.trace_hash, alone.steps, repr(alone.error),
    )  # fmt: skip
