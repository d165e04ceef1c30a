"""A module that provides stand-ins declares itself once, and interposition obeys.

seedbed's providers (`_interpose`, `_escapes`, `_timefuncs`, `_ordering`)
keep the originals they replace, to call them outside a run or from their
stand-ins. A provider registered through `_providers` keeps them through
every run, its stand-ins are rebound wherever a copy of an original is held,
and it hears when a run starts and ends: no edit to `_interpose` needed.
"""

from __future__ import annotations

import time
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from test_interpose import MONO_NS, FakeHost, in_run

from seedbed.aio import _interpose, _providers

REAL_MONOTONIC = time.monotonic


@pytest.fixture(autouse=True)
def _settled() -> Iterator[None]:
    """Warm caches first, as after earlier runs of a session; nothing leaks after."""
    in_run(lambda: None)
    yield
    assert time.monotonic is REAL_MONOTONIC and _interpose.active_host() is None


KEEPER = """
import time
real_monotonic = time.monotonic
KEPT = {"monotonic": time.monotonic}
"""


@pytest.mark.parametrize("registered", [True, False], ids=["provider", "plain module"])
def test_a_registered_provider_keeps_its_originals_while_other_copies_are_rebound(
    make_module: Callable[[str], types.ModuleType], registered: bool
) -> None:
    keeper = make_module(KEEPER)
    user = make_module("import time\nfrom time import monotonic\nTABLE = {'m': time.monotonic}")
    if registered:
        _providers.register(keeper.__name__, pairs=list, keeps=(keeper.KEPT,))

    def inside() -> tuple[object, object, float, float]:
        return keeper.real_monotonic, keeper.KEPT["monotonic"], user.monotonic(), user.TABLE["m"]()

    global_copy, kept_copy, user_read, user_table_read = in_run(inside)

    assert (user_read, user_table_read) == (MONO_NS / 1e9, MONO_NS / 1e9)
    if registered:  # the provider's global and its declared table are left alone
        assert global_copy is REAL_MONOTONIC and kept_copy is REAL_MONOTONIC
    else:  # the control: without the declaration both are rebound like any copy
        assert global_copy is not REAL_MONOTONIC and kept_copy is not REAL_MONOTONIC
    assert keeper.real_monotonic is REAL_MONOTONIC and keeper.KEPT["monotonic"] is REAL_MONOTONIC


ORIGIN = "def answer():\n    return 'real'\n"
PROVIDER = """
import {origin} as origin
real_answer = origin.answer
live = []
def answer():
    return "stand-in" if live and live[-1][0] is not None else real_answer()
def bind(host, owner):
    live.append((host, owner))
def pairs():
    return [(real_answer, answer)]
"""


def test_a_provider_registered_after_earlier_runs_is_interposed_and_told_of_each_run(
    make_module: Callable[[str], types.ModuleType],
) -> None:
    origin = make_module(ORIGIN)
    user = make_module(f"from {origin.__name__} import answer\nclass Held:\n    answer = answer")
    provider = make_module(PROVIDER.format(origin=origin.__name__))
    _providers.register(provider.__name__, provider.pairs, bind=provider.bind)
    host = FakeHost()

    def inside() -> tuple[Any, ...]:
        return user.answer(), user.Held.answer(), origin.answer(), provider.real_answer()

    assert in_run(inside, host) == ("stand-in", "stand-in", "stand-in", "real")
    assert (user.answer(), user.Held.answer(), origin.answer()) == ("real", "real", "real")
    assert [h for h, _ in provider.live] == [host, None]  # deactivate() binds None

    _providers.unregister(provider.__name__)
    assert in_run(inside, host) == ("real", "real", "real", "real")
    assert _interpose.active_host() is None
