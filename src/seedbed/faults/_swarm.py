"""`seedbed.swarm(only=..., exclude=...)`: swarm testing over the faults a system claims to survive.

`faults="swarm"` turns every fault class on in half the seeds, disk
corruption and misdirected writes included: a service whose files carry no
checksum then "fails" on damage it never claimed to survive. A `Swarm`
names the classes swarm may draw: `only` these, or all but `exclude` (and
"buggify" for the in-code sites). Each class it may draw is still drawn per
seed from its own stream, so a seed's profile under `swarm(exclude=[x])` is
its profile under plain swarm without `x`; an excluded class is never
drawn at all.

On the command line a swarm is a spec (`--faults`): `swarm`,
`swarm:exclude=disk_corruption,misdirected_write`, `swarm:only=crash,partition`,
or `none` (no faults). `spec()` writes one back, for replay commands.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from seedbed._core import Entropy
from seedbed.errors import UsageError
from seedbed.faults._classes import FAULT_CLASSES, FaultClass
from seedbed.faults._profile import FaultProfile, swarm_settings

BUGGIFY = "buggify"  # not a fault class: swarm's draw of whether buggify sites may fire
NAMES = (*(fault.name for fault in FAULT_CLASSES), BUGGIFY)


@dataclass(frozen=True)
class Swarm:
    """Swarm testing over some fault classes: `only` these (None: all), less `exclude`."""

    only: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.only is not None and self.exclude:
            raise UsageError("swarm() takes only= or exclude=, not both")
        for option, names in (("only", self.only or ()), ("exclude", self.exclude)):
            unknown = [name for name in names if name not in NAMES]
            if unknown:
                raise UsageError(
                    f"swarm({option}=...): unknown fault class {unknown[0]!r}; "
                    f"the classes are {', '.join(NAMES)}"
                )
        if self.only is not None and not self.only:
            raise UsageError("swarm(only=[]) would draw no fault: name at least one class")

    def allows(self, name: str) -> bool:
        """Whether swarm may turn `name` (a class, or "buggify") on in a seed."""
        if self.only is not None:
            return name in self.only
        return name not in self.exclude

    def classes(self) -> tuple[FaultClass, ...]:
        return tuple(fault for fault in FAULT_CLASSES if self.allows(fault.name))

    def draw(self, entropy: Entropy) -> FaultProfile:
        """One seed's profile (`entropy` is the seed's): each allowed class on with
        probability one half, from its own stream; the others are never drawn."""
        settings: dict[str, Any] = swarm_settings(entropy, self.classes())
        if self.allows(BUGGIFY):
            settings["buggify"] = entropy.stream("swarm buggify").chance(0.5, "swarm: buggify on")
        return FaultProfile(**settings)

    def spec(self) -> str:
        """The `--faults` spec of this swarm: `swarm`, `swarm:only=...`, `swarm:exclude=...`."""
        if self.only is not None:
            return f"swarm:only={','.join(self.only)}"
        if self.exclude:
            return f"swarm:exclude={','.join(self.exclude)}"
        return "swarm"

    def __repr__(self) -> str:
        if self.only is not None:
            return f"seedbed.swarm(only={list(self.only)!r})"
        return (
            f"seedbed.swarm(exclude={list(self.exclude)!r})" if self.exclude else "seedbed.swarm()"
        )


def swarm(only: Iterable[str] | None = None, exclude: Iterable[str] = ()) -> Swarm:
    """Swarm testing (each seed draws its own fault profile) over the fault classes
    a system claims to survive: `only=[...]` those, or `exclude=[...]` the ones it
    does not (a service without checksums: `exclude=["disk_corruption",
    "misdirected_write"]`). A Scenario's `faults=`; `swarm()` is `faults="swarm"`."""
    if isinstance(only, str) or isinstance(exclude, str):
        raise UsageError("swarm(only=..., exclude=...) take lists of class names, not a string")
    chosen = None if only is None else tuple(dict.fromkeys(only))
    return Swarm(chosen, tuple(dict.fromkeys(exclude)))


def parse_faults(spec: str) -> Swarm | None:
    """A `--faults` spec as a Swarm (None for `none`); a bad one is a one-line UsageError."""
    text = spec.strip()
    if text == "none":
        return None
    head, colon, rest = text.partition(":")
    if head != "swarm" or (colon and not rest):
        raise UsageError(
            f"--faults must be none, swarm, swarm:only=A,B or swarm:exclude=A,B; got {spec!r}"
        )
    if not colon:
        return Swarm()
    option, equals, names = rest.partition("=")
    if option not in ("only", "exclude") or not equals:
        raise UsageError(f"--faults {spec!r}: after swarm: comes only=A,B or exclude=A,B")
    listed = [name.strip() for name in names.split(",") if name.strip()]
    return swarm(only=listed) if option == "only" else swarm(exclude=listed)
