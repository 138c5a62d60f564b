"""Benchmark cases of the robot program on the simulator (cycle, estimation, memory).

Importing this module registers them with :mod:`freelook.bench` (each private module
registers its own); ``freelook bench`` imports it."""

from freelook.hardware.sim import _bench, _bench_estimation, _bench_memory  # noqa: F401

__all__: list[str] = []
