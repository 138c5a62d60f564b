"""The simulator as a hardware backend: every HAL device backed by the built-in simulator, and
:class:`SimulatedRobot`, the robot program wired to it on a runtime (lock-step by default)."""

from freelook.hardware.sim._fleet import SimulatedFleet, fleet_starts
from freelook.hardware.sim._hal import simulated_hardware
from freelook.hardware.sim._robot import SimulatedRobot, published_map, simulated_server

__all__ = [
    "SimulatedFleet",
    "SimulatedRobot",
    "fleet_starts",
    "published_map",
    "simulated_hardware",
    "simulated_server",
]
