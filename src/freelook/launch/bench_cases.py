"""Benchmark cases of whole sessions (browser to wheels, the cockpit, a fleet, a flood, the
camera captured to painted, the video through a relay).

Importing this module registers them with :mod:`freelook.bench` (each private module
registers its own); ``freelook bench`` imports it."""

from freelook.launch import (  # noqa: F401
    _bench,
    _bench_cockpit,
    _bench_fleet,
    _bench_prediction,
    _bench_relay_video,
    _bench_video,
)

__all__: list[str] = []
