"""Benchmark cases of inter-frame video (``freelook bench video.``).

Importing this module registers them with :mod:`freelook.bench`; ``freelook bench`` imports
it."""

from freelook.video import _bench  # noqa: F401

__all__: list[str] = []
