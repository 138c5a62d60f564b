"""Benchmark cases of the safety filter.

Importing this module registers them with :mod:`freelook.bench` (each private module
registers its own); ``freelook bench`` imports it."""

from freelook.safety import _bench  # noqa: F401

__all__: list[str] = []
