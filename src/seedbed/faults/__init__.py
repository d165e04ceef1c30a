"""Layer 3: the pressure a run is under, in code and in the world.

- `buggify(why)` and `await failpoint(why)`: in-code fault points that
  production code keeps (they do nothing outside a simulation);
  `configure(sim, buggify=True, failpoint_probability=p)` turns them on for
  a bare `Simulation` (a `Scenario` sets them from its fault profile).
- `FaultProfile`: rates of world faults; `draw_swarm` draws one per seed;
  `swarm(only=..., exclude=...)` draws one per seed over some classes only.
- `Nemesis`: injects a profile's faults into a running `Simulation` and
  counts which took effect.
"""

from seedbed.errors import SimulatedFailure
from seedbed.faults._hooks import buggify, configure, failpoint
from seedbed.faults._nemesis import Nemesis
from seedbed.faults._profile import FaultProfile, draw_swarm
from seedbed.faults._swarm import Swarm, swarm

__all__ = [
    "FaultProfile",
    "Nemesis",
    "SimulatedFailure",
    "Swarm",
    "buggify",
    "configure",
    "draw_swarm",
    "failpoint",
    "swarm",
]
