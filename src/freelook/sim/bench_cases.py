"""Benchmark cases of the simulator (stepping, sensors, camera) and its arm.

Importing this module registers them with :mod:`freelook.bench` (each private module
registers its own); ``freelook bench`` imports it."""

from freelook.sim import _bench, _bench_camera, _bench_sensors  # noqa: F401
from freelook.sim.arm import bench_cases as _arm  # noqa: F401

__all__: list[str] = []
