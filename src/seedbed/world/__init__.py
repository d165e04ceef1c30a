"""Layer 2: a simulated world of named nodes (hosts and clients) on one loop."""

from seedbed._core.identity import current_node
from seedbed.world._clocks import ClockConfig
from seedbed.world.simulation import Simulation, SimulationResult

__all__ = ["ClockConfig", "Simulation", "SimulationResult", "current_node"]
