"""World parameters a setup asks for, which swarm testing may vary per seed.

`setup(sim)` writes `replicas = sim.params.choice("replicas", [3, 5])`. In a
plain run the first option (or `default`) is used, so a setup reads the same
with or without swarm; under `faults="swarm"` each parameter is drawn from
the seed (a labelled draw on the "swarm params" stream) and recorded with the
drawn fault profile, so a failure report shows the world it ran in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from seedbed._core import Stream
from seedbed.errors import UsageError

T = TypeVar("T")


class Params:
    """Named world parameters: defaults, or drawn per seed under swarm."""

    def __init__(self, stream: Stream | None = None) -> None:
        self._stream = stream  # None: every parameter takes its default
        self.drawn: dict[str, Any] = {}  # name -> value, in the order asked

    def choice(self, name: str, options: Sequence[T]) -> T:
        """One of `options`: the first by default, drawn under swarm."""
        if not options:
            raise UsageError(f"params.choice({name!r}) needs at least one option")
        if self._stream is None:
            value = options[0]
        else:
            value = self._stream.choice(list(options), f"param {name}")
        return self._keep(name, value)

    def between(self, name: str, low: int, high: int, default: int | None = None) -> int:
        """An int in [low, high]: `default` (else `low`) by default, drawn under swarm."""
        if high < low:
            raise UsageError(f"params.between({name!r}) needs low <= high, got {low} > {high}")
        if self._stream is None:
            value = low if default is None else default
        else:
            value = self._stream.between(low, high, f"param {name}")
        return self._keep(name, value)

    def uniform(self, name: str, low: float, high: float, default: float | None = None) -> float:
        """A float in [low, high): `default` (else `low`) by default, drawn under swarm."""
        if not low <= high:
            raise UsageError(f"params.uniform({name!r}) needs low <= high, got {low} > {high}")
        if self._stream is None:
            value = low if default is None else default
        else:
            value = float(f"{self._stream.uniform(low, high, f'param {name}'):.6g}")
        return self._keep(name, value)

    def flag(self, name: str, default: bool = False) -> bool:
        """True or False: `default` by default, a fair coin under swarm."""
        if self._stream is None:
            return self._keep(name, default)
        return self._keep(name, self._stream.chance(0.5, f"param {name}"))

    def _keep(self, name: str, value: T) -> T:
        if name in self.drawn and self.drawn[name] != value:
            raise UsageError(f"parameter {name!r} was asked for twice with different results")
        self.drawn[name] = value
        return value
