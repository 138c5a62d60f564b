"""DDS domains for the tests, so two ROS 2 tests running at once never hear each other.

A test that asks (``next_domain()``, or the ``ros_domain`` fixture of ``tests/hardware/ros2``)
gets the next domain of its process's share of domains 1…100 (those whose ports every platform
allows). Run by pytest-xdist, worker k of n takes the domains d with d % n == k, so no two
workers ever draw the same one; a plain run takes them all. The first of a share is the
process's default (``DEFAULT``, set as ``ROS_DOMAIN_ID`` for the whole run by
``tests/conftest.py``), for a test that names none and for the processes it starts; the others
go round from where the process's id puts them, so two test runs at once on one machine rarely
meet either.

Any test imports it: ``from dds_domains import next_domain`` (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

import itertools
import os

__all__ = ["DEFAULT", "next_domain", "share"]

FIRST, LAST = 1, 100


def share(worker: str | None, workers: int) -> list[int]:
    """The domains of xdist worker ``worker`` (``gw0``, ``gw1``…) of ``workers``; all of them
    outside xdist (``worker`` None)."""
    if worker is None or workers <= 1:
        return list(range(FIRST, LAST + 1))
    k = int(worker.removeprefix("gw")) % workers
    return [d for d in range(FIRST, LAST + 1) if d % workers == k]


_SHARE = share(
    os.environ.get("PYTEST_XDIST_WORKER"), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
)
DEFAULT = _SHARE[0]
_REST = _SHARE[1:]
_DOMAINS = (_REST[(os.getpid() + i) % len(_REST)] for i in itertools.count())


def next_domain() -> int:
    """A domain of this process's share other than its default: the next one round."""
    return next(_DOMAINS)
