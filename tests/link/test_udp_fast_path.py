"""The UDP endpoint's fast path: verified sources' datagrams handled as they arrive, in order."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable

import pytest

from freelook.link import UdpEndpoint
from waiting import wait_until_async


async def _settle(predicate: Callable[[], object], what: str) -> None:
    """Until ``predicate()`` holds (2 s at most, then the test fails saying ``what``)."""
    await wait_until_async(predicate, 2.0, what, every=0.001)


def test_verified_datagrams_reach_the_handler_and_strangers_wait_in_the_queue() -> None:
    async def scenario() -> tuple[list[bytes], list[bytes | None]]:
        robot = await UdpEndpoint.open(("127.0.0.1", 0))
        friend = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        friend.bind(("127.0.0.1", 0))
        handled: list[bytes] = []
        robot.on_verified = lambda data, source: handled.append(data)
        try:
            robot.learn_peer(friend.getsockname())
            friend.sendto(b"first", robot.local_address)
            stranger.sendto(b"who", robot.local_address)
            friend.sendto(b"second", robot.local_address)
            await _settle(lambda: len(handled) == 2, "the two verified datagrams handled")
            queued = [await robot.recv(0.2), await robot.recv(0.05)]
        finally:
            friend.close()
            stranger.close()
            robot.close()
        return handled, queued

    handled, queued = asyncio.run(scenario())
    assert handled == [b"first", b"second"]
    assert queued == [b"who", None]  # the stranger's datagram waits for the reader


def test_a_verified_backlog_is_read_before_the_fast_path_resumes() -> None:
    async def scenario() -> list[bytes]:
        robot = await UdpEndpoint.open(("127.0.0.1", 0))
        friend = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        friend.bind(("127.0.0.1", 0))
        order: list[bytes] = []
        try:
            robot.learn_peer(friend.getsockname())
            friend.sendto(b"queued", robot.local_address)  # no handler yet: it is queued
            await _settle(lambda: robot._known, "the verified datagram queued")
            robot.on_verified = lambda data, source: order.append(data)
            friend.sendto(b"behind", robot.local_address)  # must not overtake the queued one
            await _settle(lambda: len(robot._known) == 2, "both verified datagrams queued")
            while (data := await robot.recv(0.05)) is not None:
                order.append(data)
            friend.sendto(b"fast", robot.local_address)
            await _settle(lambda: len(order) == 3, "the third datagram on the fast path")
        finally:
            friend.close()
            robot.close()
        return order

    assert asyncio.run(scenario()) == [b"queued", b"behind", b"fast"]


def test_a_failing_handler_is_logged_and_the_endpoint_keeps_receiving(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> list[bytes]:
        robot = await UdpEndpoint.open(("127.0.0.1", 0))
        friend = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        friend.bind(("127.0.0.1", 0))
        seen: list[bytes] = []

        def handler(data: bytes, source: tuple[str, int]) -> None:
            seen.append(data)
            if data == b"bad":
                raise ValueError("cannot handle this one")

        robot.on_verified = handler
        try:
            robot.learn_peer(friend.getsockname())
            friend.sendto(b"bad", robot.local_address)
            friend.sendto(b"good", robot.local_address)
            await _settle(lambda: len(seen) == 2, "both datagrams at the handler")
        finally:
            friend.close()
            robot.close()
        return seen

    with caplog.at_level(logging.ERROR, logger="freelook.link._transport"):
        assert asyncio.run(scenario()) == [b"bad", b"good"]
    assert "handling a packet from" in caplog.text


def test_one_reader_at_a_time() -> None:
    async def scenario() -> None:
        robot = await UdpEndpoint.open(("127.0.0.1", 0))
        try:
            first = asyncio.create_task(robot.recv(0.5))
            await _settle(lambda: robot._waiter is not None, "the first reader waiting")
            with pytest.raises(RuntimeError, match="one reader at a time"):
                await robot.recv(0.1)
            first.cancel()
            with pytest.raises(asyncio.CancelledError):
                await first
            assert await robot.recv(0.01) is None  # the cancelled reader left no waiter behind
        finally:
            robot.close()

    asyncio.run(scenario())


def test_the_verified_sources_are_bounded_and_the_newest_kept() -> None:
    # key holders sending from ever new ports cannot grow the endpoint without bound
    from freelook.link._transport import MAX_VERIFIED, UdpEndpoint

    endpoint = UdpEndpoint()
    for port in range(1, 3 * MAX_VERIFIED):
        endpoint.learn_peer(("127.0.0.1", port))
    endpoint.learn_peer(("127.0.0.1", 5))  # an old one heard again is among the newest
    assert len(endpoint.verified) == MAX_VERIFIED
    assert ("127.0.0.1", 5) in endpoint.verified
    assert ("127.0.0.1", 3 * MAX_VERIFIED - 1) in endpoint.verified
    assert ("127.0.0.1", 6) not in endpoint.verified
