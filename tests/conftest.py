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

``tools/test.sh`` runs the tests in parallel processes (pytest-xdist, ``--dist loadgroup``):
each test goes to the next free worker, except that the tests of a module sharing a module
fixture (a running sim, a browser) go to one worker together; each worker has DDS domains of
its own (``tests/dds_domains.py``), its own temporary directories (pytest's, per worker), and
every port a test opens is one the system picked. The robot program's loops are compiled ahead
once as such a run starts.

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
import threading
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


def _uses_network_namespaces(item: pytest.Item) -> bool:
    """Whether the test's module builds real NATs in network namespaces (``tests/netns.py``):
    those tests run one after another on one worker, their iptables and timings undisturbed by
    each other."""
    module = getattr(item, "module", None)
    return module is not None and any(
        getattr(value, "__module__", None) == "netns" for value in vars(module).values()
    )


def _shares_a_module_fixture(item: pytest.Item) -> bool:
    """Whether the test uses a fixture made once for its module or class (a running sim, a
    browser): its module's tests then run on one worker, which makes it once."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(
        defs and defs[-1].scope in ("module", "class", "package")
        for defs in info.name2fixturedefs.values()
    )


#: robots whose features together cover every compiled loop (tests/conftest.py compiles them
#: ahead as the run starts)
AHEAD = ("pioneer3dx", "taros", "ros2-diff-base")


def _compile_ahead() -> None:
    from freelook.config import load_robot
    from freelook.hardware import compile_ahead

    for name in AHEAD:
        compile_ahead(load_robot(name), camera=True)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under pytest-xdist, the robot program's loops are compiled ahead once as the run starts,
    on a thread of the run's first process while the workers collect: the robots the tests
    start wait for it at compile-ahead's lock and then find the loops in numba's cache, rather
    than each worker's first robots compiling them side by side (the lock:
    freelook/hardware/_ahead.py)."""
    if hasattr(session.config, "workerinput"):  # an xdist worker: the first process does it
        return
    if not session.config.getoption("numprocesses", None):  # a run in one process (narrow)
        return
    threading.Thread(target=_compile_ahead, name="compile ahead", daemon=True).start()


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist's ``--dist loadgroup`` each test goes to the next free worker, but
    the tests of a module that share a module fixture go to one worker together (an
    ``xdist_group`` of the module), so none is started once per worker, and the real-NAT tests
    go to one worker, one after another.

    Under ``thorough``, each hypothesis test runs ``THOROUGH_FACTOR`` times the examples its
    own ``@settings`` names (a test's own settings would otherwise cap the longer run)."""
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        if _uses_network_namespaces(item):
            item.add_marker(pytest.mark.xdist_group("real NAT"))
        elif _shares_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
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
