"""Waiting in a test for something to happen, and failing loudly when it does not.

``wait_until`` polls a predicate until it gives a true value and returns that value. At its
deadline it raises ``AssertionError`` naming what it waited for and the last value the
predicate gave, so a wait that ran out never lets the test go on to fail later with a
misleading message. ``wait_until_async`` is the same inside an event loop: it sleeps between
polls (the loop keeps running the robot and the station meanwhile), and its predicate may also
be a coroutine function.

Any test imports them: ``from waiting import wait_until`` (``tests/`` is on ``sys.path``,
since ``tests/conftest.py`` is a rootdir conftest outside a package).

A timeout here is a bound for a run gone wrong, never a timing: what a test measures it
measures itself.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

__all__ = ["wait_until", "wait_until_async"]

SHOWN = 300  # characters of the last value a failure shows


def _failure(what: str, timeout: float, last: object) -> AssertionError:
    seen = repr(last)
    if len(seen) > SHOWN:
        seen = seen[:SHOWN] + "…"
    return AssertionError(f"waited {timeout:g} s for {what}; the last value seen: {seen}")


def wait_until(
    predicate: Callable[[], T],
    timeout: float,
    what: str,
    *,
    every: float = 0.01,
    show: Callable[[], object] | None = None,
) -> T:
    """The first true value of ``predicate()``, polled every ``every`` s for ``timeout`` s;
    at the deadline an ``AssertionError`` naming ``what`` and the last value seen (or what
    ``show()`` gives then, where the predicate's own value would say little)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        left = deadline - time.monotonic()
        if left <= 0:
            raise _failure(what, timeout, value if show is None else show())
        time.sleep(min(every, left))


async def wait_until_async(
    predicate: Callable[[], T | Awaitable[T]],
    timeout: float,
    what: str,
    *,
    every: float = 0.005,
    show: Callable[[], object] | None = None,
) -> T:
    """As :func:`wait_until`, sleeping on the event loop between polls; ``predicate`` may be
    a coroutine function (each poll awaits it, and the time it takes counts)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        left = deadline - loop.time()
        if left <= 0:
            raise _failure(what, timeout, value if show is None else show())
        await asyncio.sleep(min(every, left))
