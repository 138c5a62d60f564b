"""A robot server and an operator station running together in a test, and taken down after.

The set-up every end-to-end test of the link shares: start the robot server, wait until it
listens, start a station on the address it got, wait until the station's session with the
robot is open; after the test body, cancel both and wait for them to end. A part that stopped
on an error of its own fails the test with that error instead of leaving it to a later
assertion.

The tests run their own event loop (``asyncio.run``), so this is an async context manager
rather than a pytest fixture::

    server, robot = simulated_server(config, world, ServerOptions(key=key, ...))
    async with robot_and_station(
        server, lambda address: OperatorStation(config, None, address, key=key)
    ) as station:
        ...

``running`` and ``serving`` are its parts, for tests with several stations or a station that
starts before its robot.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, Protocol

from freelook.operator import OperatorStation
from freelook.robot import RobotServer
from waiting import wait_until_async

__all__ = ["OPENS", "alive", "robot_and_station", "running", "serving", "session_open"]

OPENS = 20.0  # s: a bound for a session that never opens, not a timing


class Runs(Protocol):
    """Anything with an ``async run()`` that runs until it is cancelled."""

    def run(self) -> Coroutine[Any, Any, None]: ...


def session_open(station: OperatorStation) -> bool:
    """Whether the station's session with the robot is open: the robot answered its session
    request (native profile with a key); with no session to open (the thesis profile, or
    native without a key), whether anything came from the robot."""
    if station.session.role == "operator":
        return station.session.session_status(station.clock()) == "open"
    return station.stats.received > 0


@contextlib.asynccontextmanager
async def running(*parts: Runs) -> AsyncIterator[list[asyncio.Task[None]]]:
    """Each part's ``run()`` as a task while the body runs (the tasks, in order); after the
    body, all cancelled and awaited. One that ended on an error of its own before then fails
    the test with it (when the body itself failed, its error is the one raised)."""
    tasks = [asyncio.create_task(part.run()) for part in parts]
    body_failed = True
    try:
        yield tasks
        body_failed = False
    finally:
        errors = [t.exception() for t in tasks if t.done() and not t.cancelled()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        error = next((e for e in errors if e is not None), None)
        if error is not None and not body_failed:
            raise AssertionError(f"a part of the test stopped on an error: {error!r}") from error


def alive(*tasks: asyncio.Task[None]) -> bool:
    """True while every task runs; one that ended raises its error (or says it ended)."""
    for task in tasks:
        if task.done():
            task.result()
            raise AssertionError(f"{task.get_coro()!r} ended while the test still needed it")
    return True


async def _ready(server: RobotServer, task: asyncio.Task[None], timeout: float) -> None:
    """Until the server listens; a server that fails to start fails the test with its error."""
    ready = asyncio.ensure_future(server.ready.wait())
    try:
        await asyncio.wait({task, ready}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        ready.cancel()
    alive(task)
    if not server.ready.is_set():
        raise AssertionError(f"waited {timeout:g} s for the robot server to listen")


@contextlib.asynccontextmanager
async def serving(server: RobotServer, timeout: float = OPENS) -> AsyncIterator[RobotServer]:
    """The server running and listening (``server.local_address`` set for UDP)."""
    async with running(server) as (task,):
        await _ready(server, task, timeout)
        yield server


@contextlib.asynccontextmanager
async def robot_and_station(
    server: RobotServer,
    station_for: Callable[[tuple[str, int] | None], OperatorStation],
    *,
    opened: Callable[[OperatorStation], object] | None = session_open,
    what: str = "the station's session with the robot to open",
    timeout: float = OPENS,
) -> AsyncIterator[OperatorStation]:
    """The server running, then the station ``station_for(server.local_address)`` running on
    it (the address is None on a serial link: the factory names its own device); the body
    starts once ``opened(station)`` holds (None: at once)."""
    async with running(server) as (robot_task,):
        await _ready(server, robot_task, timeout)
        station = station_for(server.local_address)
        async with running(station) as (station_task,):
            if opened is not None:
                ready = opened
                await wait_until_async(
                    lambda: alive(robot_task, station_task) and ready(station), timeout, what
                )
            yield station
