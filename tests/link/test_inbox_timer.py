"""A UDP endpoint's reader times out on time with one timer for many waits.

A wait moves the reader's deadline and keeps a timer armed for an earlier one (it re-arms
when it fires), so waits that datagrams end every few microseconds schedule about one timer a
timeout, not one each. These check that a timeout still means what it says after such waits:
a shorter one ends on time, a longer one is not cut short by the earlier timer, and a wait
with no timeout is never ended by one.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from freelook.link import UdpEndpoint

T = TypeVar("T")
BOUND = 2.0  # s: a run gone wrong; what a test measures, it measures itself


class _CountingLoop(asyncio.SelectorEventLoop):
    """An event loop that keeps the timers it is asked to schedule."""

    def __init__(self) -> None:
        super().__init__()
        self.handles: list[asyncio.TimerHandle] = []

    @property
    def timers(self) -> int:
        return len(self.handles)

    def call_at(
        self, when: float, callback: Callable[..., object], *args: Any, **kw: Any
    ) -> asyncio.TimerHandle:
        handle = super().call_at(when, callback, *args, **kw)
        self.handles.append(handle)
        return handle


def _run(scenario: Callable[[], Awaitable[T]]) -> T:
    with asyncio.Runner(loop_factory=_CountingLoop) as runner:
        return runner.run(scenario())


async def _woken_waits(robot: UdpEndpoint, friend: socket.socket, n: int, timeout: float) -> None:
    """``n`` waits of ``timeout`` s, each ended at once by a datagram."""
    for i in range(n):
        friend.sendto(b"%d" % i, robot.local_address)
        assert await robot.recv(timeout) == b"%d" % i


async def _pair() -> tuple[UdpEndpoint, socket.socket]:
    robot = await UdpEndpoint.open(("127.0.0.1", 0))
    friend = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    friend.bind(("127.0.0.1", 0))
    robot.learn_peer(friend.getsockname())
    return robot, friend


def test_waits_that_datagrams_end_share_one_timer() -> None:
    async def scenario() -> int:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, _CountingLoop)
        robot, friend = await _pair()
        try:
            before = loop.timers
            await _woken_waits(robot, friend, 500, 1.0)
            return loop.timers - before
        finally:
            friend.close()
            robot.close()

    timers = _run(scenario)
    assert 1 <= timers <= 3  # one armed for the first wait; 500 would be one a wait


def test_a_shorter_timeout_after_longer_waits_ends_on_time() -> None:
    async def scenario() -> tuple[bytes | None, float]:
        loop = asyncio.get_running_loop()
        robot, friend = await _pair()
        try:
            await _woken_waits(robot, friend, 3, 30.0)  # a timer armed 30 s ahead
            start = loop.time()
            data = await asyncio.wait_for(robot.recv(0.05), BOUND)
            return data, loop.time() - start
        finally:
            friend.close()
            robot.close()

    data, waited = _run(scenario)
    assert data is None
    assert 0.05 - 1e-3 <= waited < 1.0


def test_a_longer_timeout_is_not_cut_short_by_an_earlier_timer() -> None:
    async def scenario() -> tuple[bytes | None, float, int]:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, _CountingLoop)
        robot, friend = await _pair()
        try:
            await _woken_waits(robot, friend, 3, 0.05)  # a timer armed 0.05 s ahead stays
            start, before = loop.time(), loop.timers
            data = await asyncio.wait_for(robot.recv(0.3), BOUND)
            return data, loop.time() - start, loop.timers - before
        finally:
            friend.close()
            robot.close()

    data, waited, timers = _run(scenario)
    assert data is None
    assert 0.3 - 1e-3 <= waited < 1.5
    assert timers >= 1  # the early timer fired and armed the one for the deadline


def test_a_wait_without_timeout_outlasts_a_timed_waits_timer() -> None:
    async def scenario() -> tuple[bool, bytes | None]:
        robot, friend = await _pair()
        try:
            await _woken_waits(robot, friend, 3, 0.02)  # a timer armed 0.02 s ahead
            reader = asyncio.create_task(robot.recv(None))
            await asyncio.sleep(0.2)  # long past that timer
            waiting = not reader.done()
            friend.sendto(b"late", robot.local_address)
            return waiting, await asyncio.wait_for(reader, BOUND)
        finally:
            friend.close()
            robot.close()

    waiting, data = _run(scenario)
    assert waiting
    assert data == b"late"


def test_closing_the_endpoint_cancels_its_timer() -> None:
    async def scenario() -> list[bool]:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, _CountingLoop)
        robot, friend = await _pair()
        try:
            before = loop.timers
            await _woken_waits(robot, friend, 3, 30.0)  # a timer armed 30 s ahead
        finally:
            friend.close()
            robot.close()
        return [handle.cancelled() for handle in loop.handles[before:]]

    assert _run(scenario) == [True]  # one timer for the three waits, cancelled at close
