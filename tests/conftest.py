"""Tests marked ``realtime`` time the robot program or the link against the wall clock, with
bounds of a few tenths of a second, in this process. By the time they run, the process holds
the objects of every test before them, and a full collection of those took up to 0.6 s in this
suite (numba's compiles leave much behind): long enough to trip a 0.5 s watchdog or push a
0.3 s connect timeout past its bound. A robot program's own process holds far fewer (a full
collection there takes about 70 ms). So a realtime test runs with the objects from before it
frozen, left out of its collections, and hands them back after it; other tests collect as
usual, so garbage an earlier test left still shows.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _earlier_objects_left_out_of_realtime_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("realtime") is None:
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
