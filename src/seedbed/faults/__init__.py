"""Layer 3: the pressure a run is under, in code and in the world.

- `buggify(why)` and `await failpoint(why)`: in-code fault points that
  production code keeps (they do nothing outside a simulation);
  `configure(sim, buggify=True, failpoint_probability=p)` turns them on for
  a bare `Simulation` (a `Scenario` sets them from its fault profile).
"""

from seedbed.errors import SimulatedFailure
from seedbed.faults._hooks import buggify, configure, failpoint

__all__ = ["SimulatedFailure", "buggify", "configure", "failpoint"]
