"""Fixtures shared by the unit tests."""

from __future__ import annotations

import itertools
import sys
import types
from collections.abc import Callable, Iterator

import pytest

from seedbed.aio import _providers

_names = itertools.count()


@pytest.fixture
def make_module() -> Iterator[Callable[[str], types.ModuleType]]:
    """Create modules from source, registered in sys.modules for the test only.

    A module the test registered as an interposition provider is withdrawn too.
    """
    created: list[str] = []

    def make(source: str) -> types.ModuleType:
        name = f"seedbed_interpose_probe_{next(_names)}"
        module = types.ModuleType(name)
        sys.modules[name] = module
        created.append(name)
        exec(source, module.__dict__)
        return module

    yield make
    for name in created:
        _providers.unregister(name)
        del sys.modules[name]
