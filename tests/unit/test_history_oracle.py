"""`HistoryOracle` in a scenario: a job queue's workload recorded, checked when the run ends.

A producer enqueues jobs and a consumer takes them from an in-memory queue
shared by two clients; the scenario lists the oracle in its ``checks``. A
queue that hands a job out twice fails the run with the checker's
explanation, naming the line where the oracle was made; a broker that
never answers leaves a history that cannot show anything, which fails too
unless empty is allowed. The oracle belongs to the run checking it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from seedbed import InvariantViolation, Scenario, Simulation
from seedbed.check import HistoryOracle
from seedbed.errors import UsageError

JOBS = 6


def jobs_world(jobs: HistoryOracle, bug: str | None = None) -> Any:
    def setup(sim: Simulation) -> None:
        queue: list[int] = []
        handed_twice: list[int] = []

        async def producer() -> None:
            for job in range(JOBS):
                with jobs.operation("producer", "enqueue", job) as op:
                    await asyncio.sleep(10 if bug == "silent" else 0.01)
                    queue.append(job)
                    op.ok()

        async def consumer() -> None:
            for _ in range(JOBS + 2):
                with jobs.operation("consumer", "dequeue") as op:
                    await asyncio.sleep(10 if bug == "silent" else 0.02)  # silent: no answer
                    job = queue.pop(0) if queue else None
                    if bug == "twice" and job == 3 and not handed_twice:
                        handed_twice.append(job)
                        queue.insert(0, job)  # handed out, and still queued
                    op.ok(job)

        sim.client("producer", producer)
        sim.client("consumer", consumer)

    return setup


def scenario(bug: str | None = None, **oracle: Any) -> tuple[Scenario, HistoryOracle]:
    jobs = HistoryOracle("queue", name="jobs", **oracle)
    return Scenario(f"jobs-{bug}", jobs_world(jobs, bug), duration=5.0, checks=[jobs]), jobs


def test_a_correct_queue_passes_and_the_catalog_counts_the_check() -> None:
    jobs_scenario, jobs = scenario()
    result = jobs_scenario.run(seed=1)
    assert result.assertions["check HistoryOracle('jobs')"]["true"] == 1
    assert jobs.verdict().counts["dequeued"] == JOBS


def test_a_job_handed_out_twice_fails_the_run_with_the_explanation() -> None:
    jobs_scenario, _ = scenario("twice")
    made = scenario.__code__.co_firstlineno + 1  # the line that made the oracle
    with pytest.raises(InvariantViolation) as caught:
        jobs_scenario.run(seed=1)
    message = str(caught.value)
    assert message.startswith("check HistoryOracle('jobs') failed: jobs: invalid [duplicated]")
    assert "duplicated: element 3: dequeued twice" in message
    report = caught.value.report  # type: ignore[attr-defined]
    assert report.location.endswith(f"test_history_oracle.py:{made}")
    assert report.assertions["check HistoryOracle('jobs')"]["true"] == 0


def test_a_broker_that_never_answers_cannot_show_the_queue_works() -> None:
    jobs_scenario, _ = scenario("silent")
    with pytest.raises(
        InvariantViolation,
        match="cannot show the queue property: no enqueue was acknowledged and no element",
    ):
        jobs_scenario.run(seed=2)
    allowing, _ = scenario("silent", allow_empty=True)
    allowing.run(seed=2)


def test_the_oracle_checks_the_history_of_the_run_checking_it() -> None:
    jobs_scenario, jobs = scenario()
    jobs_scenario.run(seed=1)
    first = len(jobs.history)
    jobs_scenario.run(seed=2)  # records afresh: not twice the operations
    assert len(jobs.history) == first == 2 * (JOBS + JOBS + 2)
    quiet = Scenario("quiet", idle_world, checks=[jobs])
    with pytest.raises(InvariantViolation, match="cannot show"):
        quiet.run(seed=1)  # nothing recorded in this run: the last run's history does not count


def idle_world(sim: Simulation) -> None:
    async def idle() -> None:
        await asyncio.sleep(0.1)

    sim.client("c", idle)


def test_an_unknown_model_is_refused_at_once() -> None:
    with pytest.raises(UsageError, match="unknown model 'stack'; models are"):
        HistoryOracle("stack")
    with pytest.raises(UsageError, match=r"Scenario\.checks must be zero-argument callables"):
        Scenario("s", lambda sim: None, checks=["not callable"])  # type: ignore[list-item]
