"""Benchmark cases of the link (codecs, UDP, map transfer).

Importing this module registers them with :mod:`freelook.bench` (each private module
registers its own); ``freelook bench`` imports it."""

from freelook.link import _bench, _zenoh_bench  # noqa: F401

__all__: list[str] = []
