"""The simulated vehicle: drive with slip, motor lag, pan-tilt, collisions and bumpers."""

from freelook.sim.vehicle._collision import footprint_hits, perimeter_points
from freelook.sim.vehicle._vehicle import Vehicle, VehicleState

__all__ = ["Vehicle", "VehicleState", "footprint_hits", "perimeter_points"]
