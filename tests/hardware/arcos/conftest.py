"""The ARCOS tests time the link and the robot program against wall-clock bounds of a few
tenths of a second. By the time they run, the test process holds the objects of every test
before them, and a full collection of those took up to 0.6 s in this suite (numba's compiles
leave much behind): enough to push a 0.3 s connect timeout past its bound. So each test runs
with the objects from before it frozen (left out of its collections) and hands them back after.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def earlier_objects_left_out_of_collections() -> Iterator[None]:
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
