"""`run_in_executor` and `asyncio.to_thread`: results, errors, context, threads."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from typing import Any

import pytest

USER: contextvars.ContextVar[str] = contextvars.ContextVar("user", default="nobody")


def _add(a: int, b: int, *, scale: int = 1) -> int:
    return (a + b) * scale


def _fail() -> None:
    raise KeyError("missing")


def test_run_in_executor_returns_the_functions_result(run: Any) -> None:
    async def main() -> list[int]:
        loop = asyncio.get_running_loop()
        return [
            await loop.run_in_executor(None, _add, 2, 3),
            await loop.run_in_executor(None, functools.partial(_add, 1, 1, scale=10)),
        ]

    assert run(main) == [5, 20]


def test_to_thread_returns_the_functions_result(run: Any) -> None:
    async def main() -> int:
        return await asyncio.to_thread(_add, 4, 5, scale=2)

    assert run(main) == 18


def test_executor_errors_propagate_to_the_awaiting_task(run: Any) -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        caught = []
        with pytest.raises(KeyError):
            await loop.run_in_executor(None, _fail)
        caught.append("run_in_executor")
        with pytest.raises(KeyError):
            await asyncio.to_thread(_fail)
        caught.append("to_thread")
        return caught

    assert run(main) == ["run_in_executor", "to_thread"]


def test_to_thread_runs_the_function_in_the_callers_context(run: Any) -> None:
    async def main() -> str:
        USER.set("alice")
        return await asyncio.to_thread(USER.get)

    assert run(main) == "alice"


def test_executor_work_runs_on_a_worker_thread_of_its_own(run: Any) -> None:
    async def main() -> tuple[bool, list[str]]:
        loop_thread = threading.get_ident()
        idents: list[int] = []
        names: list[str] = []

        def record() -> None:
            idents.append(threading.get_ident())
            names.append(threading.current_thread().name)

        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, record)
        await asyncio.to_thread(record)
        return all(ident != loop_thread for ident in idents), names

    apart, names = run(main)
    assert apart
    assert all(name.startswith("asyncio_") for name in names)


def test_executor_work_starts_no_os_thread_under_seedbed(seedbed_run: Any) -> None:
    async def main() -> tuple[int, int, int]:
        before = threading.active_count()
        during = await asyncio.to_thread(threading.active_count)
        return before, during, threading.active_count()

    before, during, after = seedbed_run(main)
    assert before == during == after
