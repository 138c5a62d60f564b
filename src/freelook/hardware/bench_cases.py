"""Benchmark cases of the backends (ROS 2, and the simulator as a backend).

Importing this module registers them with :mod:`freelook.bench` (each private module
registers its own); ``freelook bench`` imports it."""

from freelook.hardware import _bench_ros2  # noqa: F401
from freelook.hardware.sim import bench_cases as _sim  # noqa: F401

__all__: list[str] = []
