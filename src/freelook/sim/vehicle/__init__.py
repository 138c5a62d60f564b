"""The simulated vehicle: drive with slip, motor lag, pan-tilt, collisions and bumpers."""

from freelook.sim.vehicle._collision import footprint_clear, footprint_hits, perimeter_points
from freelook.sim.vehicle._physics import (
    STATE_SIZE,
    StateColumn,
    draws_noise,
    physics_params,
    step_vehicles,
)
from freelook.sim.vehicle._vehicle import Vehicle, VehicleState

__all__ = [
    "STATE_SIZE",
    "StateColumn",
    "Vehicle",
    "VehicleState",
    "draws_noise",
    "footprint_clear",
    "footprint_hits",
    "perimeter_points",
    "physics_params",
    "step_vehicles",
]
