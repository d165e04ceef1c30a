"""Conformance: one test body, run on the real asyncio loop and on seedbed's loop.

A test asks for `run` and calls `run(main)` with a zero-argument async
function; it gets `main()`'s return value back. The fixture is parametrized
over the stock loop (`asyncio.run`) and seedbed's loop under several seeds,
since a documented asyncio behaviour must hold on seedbed for every seed.
Runs are strict: correct asyncio code must not be reported as swallowing a
cancellation.
`seedbed_run` is the seedbed half alone, for what only seedbed promises.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

import seedbed

Runner = Callable[[Callable[[], Any]], Any]
SEEDS = (0, 1, 2)


def _asyncio_runner(main: Callable[[], Any]) -> Any:
    return asyncio.run(main())


def _seedbed_runner(seed: int) -> Runner:
    def runner(main: Callable[[], Any]) -> Any:
        return seedbed.run(main, seed=seed, strict=True).value

    return runner


@pytest.fixture(params=["asyncio", *(f"seedbed-{seed}" for seed in SEEDS)])
def run(request: pytest.FixtureRequest) -> Runner:
    """`run(main) -> value` on the real loop, then on seedbed under each seed."""
    if request.param == "asyncio":
        return _asyncio_runner
    return _seedbed_runner(int(request.param.removeprefix("seedbed-")))


@pytest.fixture(params=[f"seed-{seed}" for seed in SEEDS])
def seedbed_run(request: pytest.FixtureRequest) -> Runner:
    """`run(main) -> value` on seedbed's loop only, under each seed."""
    return _seedbed_runner(int(request.param.removeprefix("seed-")))
