"""Tests marked ``realtime`` time the robot program or the link against the wall clock, with
bounds of a few tenths of a second, in this process. By the time they run, the process holds
the objects of every test before them, and a full collection of those took up to 0.6 s in this
suite (numba's compiles leave much behind): long enough to trip a 0.5 s watchdog or push a
0.3 s connect timeout past its bound. A robot program's own process holds far fewer (a full
collection there takes about 70 ms). So a realtime test runs with the objects from before it
frozen, left out of its collections, and hands them back after it; other tests collect as
usual, so garbage an earlier test left still shows.

Hypothesis runs under one of three profiles, registered here:

- ``ci``: derandomized (each test's examples follow from its own code, the same on every run
  and machine), no example database, no deadline and no speed health check. Picked when
  ``CI=true``, and by ``tools/test.sh`` unless told otherwise: the suite passes or fails the
  same way every time, whatever ran before and however busy the machine is.
- ``dev``: random examples, failures kept in ``.hypothesis/`` and replayed; for a bare
  ``pytest`` while working.
- ``thorough``: random examples, ten times each test's own number of them (a thousand where a
  test names none), for a longer hunt on demand: ``FREELOOK_HYPOTHESIS=thorough bash
  tools/test.sh`` or ``pytest --hypothesis-profile=thorough``. A failure it finds prints the
  example and its ``@reproduce_failure`` blob.

``FREELOOK_HYPOTHESIS`` names the profile; ``--hypothesis-profile`` overrides it.

Tests stop the processes they start with SIGINT, as Ctrl-C would. A shell without job control
starts its background commands with SIGINT ignored, and an ignored signal stays ignored across
``exec``: a suite started that way (``bash tools/test.sh &`` in a script) would hand every
robot it starts a deaf ear to SIGINT, and each stop would wait out its timeout. So the suite
takes SIGINT back before it starts anything (a handled signal is reset for its children).
"""

from __future__ import annotations

import gc
import os
import signal
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from dds_domains import DEFAULT as DEFAULT_DOMAIN

THOROUGH_FACTOR = 10  # the thorough run's examples per test, against the test's own number

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None)
settings.register_profile("thorough", max_examples=100, deadline=None, print_blob=True)


def _profile_asked() -> str:
    """The profile the environment asks for: ``FREELOOK_HYPOTHESIS``, else ``ci`` under CI."""
    named = os.environ.get("FREELOOK_HYPOTHESIS", "")
    if named:
        return named
    return "ci" if os.environ.get("CI", "").lower() == "true" else "dev"


settings.load_profile(_profile_asked())  # before the test modules are imported: they inherit it

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # see the module's docstring
    signal.signal(signal.SIGINT, signal.default_int_handler)

# a ROS 2 node a test starts without naming a domain joins this process's own (under
# pytest-xdist, this worker's), found on this machine only: tests/dds_domains.py
os.environ.setdefault("ROS_DOMAIN_ID", str(DEFAULT_DOMAIN))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``thorough``, each hypothesis test runs ``THOROUGH_FACTOR`` times the examples its
    own ``@settings`` names (a test's own settings would otherwise cap the longer run)."""
    profile = config.getoption("hypothesis_profile", None) or _profile_asked()
    if profile != "thorough":
        return
    for item in items:
        test = getattr(item, "obj", None)
        test = getattr(test, "__func__", test)  # a test method: its function
        if getattr(test, "is_hypothesis_test", False) is not True:
            continue
        own = getattr(test, "_hypothesis_internal_use_settings", None)  # where @given keeps them
        if not isinstance(own, settings):  # a hypothesis that keeps them elsewhere: say so
            raise pytest.UsageError(f"{item.nodeid}: its hypothesis settings are not readable")
        test._hypothesis_internal_use_settings = settings(
            own, max_examples=own.max_examples * THOROUGH_FACTOR
        )


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
