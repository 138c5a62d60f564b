"""Benchmark cases of the operator station (its virtual station page, the Foxglove bridge).

Importing this module registers them with :mod:`freelook.bench` (each private module
registers its own); ``freelook bench`` imports it."""

from freelook.operator import _bench_foxglove, _bench_station  # noqa: F401

__all__: list[str] = []
