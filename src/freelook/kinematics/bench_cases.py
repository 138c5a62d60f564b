"""Benchmark cases of the drive kinematics.

Importing this module registers them with :mod:`freelook.bench` (each private module
registers its own); ``freelook bench`` imports it."""

from freelook.kinematics import _bench  # noqa: F401

__all__: list[str] = []
