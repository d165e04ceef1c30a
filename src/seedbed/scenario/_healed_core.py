"""The healed-core liveness mode: a core converges while the others keep failing.

The classic liveness phase stops every fault and heals the whole world, then
asks the predicates to hold. A real cluster is never that lucky: a majority
must make progress while a minority is still down, cut off or flapping
(TigerBeetle's VOPR checks that a core of replicas converges so). With
`Scenario(liveness_core=...)` the liveness phase heals the world as before,
then resumes the nemesis on the hosts outside the core only: the core (and
every client) is spared, and no fault touches its links; the other hosts
keep crashing, pausing and being cut off among themselves at the profile's
rates. In-code faults stay off for everyone (they have no node to aim at).

The core is named (`liveness_core=["n1", "n2", "n3"]`) or drawn per seed
(`"majority"`: a majority of the hosts, on a stream of its own, so seeds of
scenarios without it draw nothing new). Predicates read it from
`sim.liveness_core` (the hosts, in the order setup added them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from seedbed.errors import UsageError

if TYPE_CHECKING:
    from seedbed.faults._nemesis import Nemesis
    from seedbed.world import Simulation

MAJORITY = "majority"


def check_core(wanted: Any, liveness: Sequence[Any]) -> None:
    """Refuse at construction a core that is not None, "majority" or a list of names."""
    if wanted is None:
        return
    names_ok = (isinstance(wanted, list | tuple) and wanted
                and all(isinstance(name, str) and name for name in wanted))  # fmt: skip
    if wanted != MAJORITY and not names_ok:
        raise UsageError(
            f'Scenario.liveness_core must be None, "majority" or a non-empty list of host '
            f"names, got {wanted!r}"
        )
    if not liveness:
        raise UsageError(
            "Scenario.liveness_core needs liveness=[...] predicates: the core is healed for "
            "the liveness phase, which runs only to judge them"
        )


def check_hosts(sim: Simulation, wanted: str | Sequence[str] | None) -> None:
    """Refuse, once setup has built the world and before it runs, a core it lacks."""
    if wanted is None:
        return
    hosts = _hosts(sim)
    if wanted == MAJORITY and not hosts:
        raise UsageError('Scenario.liveness_core="majority" needs hosts; setup added none')
    unknown = [name for name in wanted if name not in hosts] if wanted != MAJORITY else []
    if unknown:
        raise UsageError(
            f"Scenario.liveness_core names {unknown[0]!r}, which is not a host setup added "
            f"(hosts: {', '.join(hosts) or 'none'})"
        )


def choose_core(sim: Simulation, wanted: str | Sequence[str]) -> tuple[str, ...]:
    """The core's hosts, in the order setup added them (drawn for "majority")."""
    hosts = _hosts(sim)
    if wanted == MAJORITY:
        stream = sim.loop.entropy.stream("liveness core")
        order = stream.permutation(len(hosts), "liveness: which hosts are the healed core")
        chosen = {hosts[index] for index in order[: len(hosts) // 2 + 1]}
    else:
        chosen = set(wanted)
    return tuple(name for name in hosts if name in chosen)


def _hosts(sim: Simulation) -> list[str]:
    return [node.name for node in sim.nodes.all() if node.kind == "host"]


def heal_core(sim: Simulation, wanted: str | Sequence[str], nemesis: Nemesis | None) -> str:
    """Choose the core, name it to the predicates and the trace, and set the nemesis
    on the others (the world was healed just before); what a failure says of it."""
    core = choose_core(sim, wanted)
    sim.liveness_core = core
    sim.loop.trace.emit("scenario", f"healed core {','.join(core)}")
    if nemesis is not None:
        nemesis.resume(spared(sim, core))
    return f"the core ({', '.join(core)}) was healed, the others failing on"


def spared(sim: Simulation, core: tuple[str, ...]) -> frozenset[str]:
    """What no fault may touch meanwhile: the core and every client."""
    return frozenset(core) | {node.name for node in sim.nodes.all() if node.kind == "client"}
