"""The registry of interposition providers: seedbed's modules that supply stand-ins.

A provider replaces some originals (clocks, entropy, escapes, asyncio
functions) with stand-ins for a run, and keeps those originals on purpose:
its stand-ins call them outside a run, on other threads, or to do the real
work after adjusting the arguments. `_interpose` rebinds every copy of an
original it finds, in module globals and through the garbage collector, so
it must leave a provider's own copies alone, or a stand-in would end up
calling itself.

That is one rule for every provider, declared here rather than known by
name in `_interpose`: a provider registers itself once, at import, with its
module name (its globals are neither scanned nor searched), its
`(original, stand-in)` pairs, and any other object that keeps originals on
purpose (a table outside its globals). `_interpose` asks the registry for
all three, so a new provider needs no edit there, and rebuilds what it
cached whenever the registry changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from seedbed.aio._host import InterposeHost

Pairs = list[tuple[object, object]]


@dataclass(frozen=True)
class Provider:
    """One provider: where its originals are kept, what it replaces, how it goes live."""

    module: str  # its __name__: its globals hold originals on purpose
    pairs: Callable[[], Pairs]  # (original, stand-in), built on first activation
    keeps: tuple[object, ...] = ()  # other objects holding originals on purpose
    bind: Callable[[InterposeHost | None, int], None] | None = None  # (host, owner thread)
    # Other modules whose globals must keep the originals: `posix` and `_io`,
    # which the import system calls directly (imports never go through a run's
    # stand-ins), and which the provider calls for the real work.
    spares: tuple[str, ...] = ()


_registry: dict[str, Provider] = {}
_generation = 0  # bumped by every change, so `_interpose` knows to rebuild


def register(
    module: str,
    pairs: Callable[[], Pairs],
    keeps: Iterable[object] = (),
    bind: Callable[[InterposeHost | None, int], None] | None = None,
    spares: Iterable[str] = (),
) -> None:
    """Declare `module` a provider (registering again replaces the entry)."""
    global _generation
    _registry[module] = Provider(module, pairs, tuple(keeps), bind, tuple(spares))
    _generation += 1


def unregister(module: str) -> None:
    """Withdraw a provider (for tests that register one of their own)."""
    global _generation
    if _registry.pop(module, None) is not None:
        _generation += 1


def providers() -> list[Provider]:
    """Every provider, in module-name order (never import order)."""
    return [_registry[name] for name in sorted(_registry)]


def spared_modules() -> frozenset[str]:
    """Every module whose globals keep originals: the providers' and what they spare."""
    return frozenset(
        name for provider in _registry.values() for name in (provider.module, *provider.spares)
    )


def generation() -> int:
    """A number that changes whenever a provider is registered or withdrawn."""
    return _generation
