"""Signals inside a run (issue 42, item 3): delivered to the simulated process, or refused."""

from __future__ import annotations

import os
import signal

import pytest

import seedbed


def test_a_signal_that_would_end_the_process_is_refused_not_sent() -> None:
    async def main() -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # no handler: it would end the test run

    with pytest.raises(seedbed.SimulationEscape, match=r"os\.kill\(\) sending SIGTERM"):
        seedbed.run(main, seed=1)


def test_signals_to_other_processes_escape_and_the_own_pid_exists() -> None:
    async def exists() -> None:
        os.kill(os.getpid(), 0)

    seedbed.run(exists, seed=1)

    async def other() -> None:
        os.kill(1, signal.SIGTERM)

    with pytest.raises(seedbed.SimulationEscape, match=r"os\.kill\(1, "):
        seedbed.run(other, seed=1)


def test_a_programs_own_handler_runs_where_the_signal_was_sent() -> None:
    seen: list[int] = []

    async def main() -> list[int]:
        previous = signal.signal(signal.SIGUSR2, lambda sig, frame: seen.append(sig))
        try:
            signal.raise_signal(signal.SIGUSR2)
            return list(seen)  # already ran: delivery is synchronous, as to oneself
        finally:
            signal.signal(signal.SIGUSR2, previous)

    assert seedbed.run(main, seed=1).value == [signal.SIGUSR2]


def test_closing_the_loop_restores_the_default_handler() -> None:
    loop = seedbed.new_event_loop(seed=1)
    loop.add_signal_handler(signal.SIGUSR1, print)
    assert signal.getsignal(signal.SIGUSR1) not in (signal.SIG_DFL, None)
    loop.close()
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL
