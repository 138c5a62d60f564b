"""A following UDP endpoint (a station's, with sessions): its robot's address is heard on a
socket connected to it, every other source on a second socket of the same port; the peer
moves only when the link says a source verified, and the connected socket moves with it."""

from __future__ import annotations

import asyncio
import socket

from freelook.link import UdpEndpoint
from waiting import wait_until_async


def test_a_following_endpoint_hears_strangers_apart_and_moves_only_when_told() -> None:
    async def scenario() -> None:
        robot = await UdpEndpoint.open(("127.0.0.1", 0))
        station = await UdpEndpoint.open(None, robot.local_address, follow=True)
        moved = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # the robot's next port
        moved.bind(("127.0.0.1", 0))
        moved.settimeout(5.0)
        try:
            assert station.peer == robot.local_address
            station.send(b"hello")
            assert await robot.recv(timeout=5.0) == b"hello"
            robot.send(b"from the robot", robot.last_sender)
            assert await station.recv_from(timeout=5.0) == (b"from the robot", robot.local_address)
            new = moved.getsockname()
            moved.sendto(b"from a new port", station.local_address)
            assert await station.recv_from(timeout=5.0) == (b"from a new port", new)
            assert station.peer == robot.local_address  # heard, not verified: no move
            station.send(b"still to the robot")
            assert await robot.recv(timeout=5.0) == b"still to the robot"
            station.learn_peer(new)  # the link verified it
            assert (station.peer, station.moves) == (new, 1)
            station.send(b"to the new port")
            assert moved.recvfrom(100) == (b"to the new port", station.local_address)
            # the old address is still heard (a late packet of it), as a verified source
            robot.send(b"late", robot.last_sender)
            assert await station.recv_from(timeout=5.0) == (b"late", robot.local_address)
            assert robot.local_address in station.verified
            station.learn_peer(new)  # the same address again: no move
            assert station.moves == 1
        finally:
            moved.close()
            station.close()
            robot.close()

    asyncio.run(scenario())


def test_a_flood_at_a_following_station_never_queues_ahead_of_its_robot() -> None:
    """A thousand strangers' datagrams land on the unconnected socket: the robot's packet,
    on the connected one, is read first."""

    async def scenario() -> None:
        robot = await UdpEndpoint.open(("127.0.0.1", 0))
        station = await UdpEndpoint.open(None, robot.local_address, follow=True)
        stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            station.send(b"hello")
            assert await robot.recv(timeout=5.0) == b"hello"
            for _ in range(1000):
                stranger.sendto(b"\x00forged", station.local_address)
            robot.send(b"welcome", robot.last_sender)
            # the flood in, over what its own small queue holds: the welcome, in the kernel
            # before any of it was read, was read in the loop's first turn
            await wait_until_async(
                lambda: station.dropped_strangers > 0, 10.0, "the flood to fill its queue"
            )
            assert await station.recv_from(timeout=5.0) == (b"welcome", robot.local_address)
        finally:
            stranger.close()
            station.close()
            robot.close()

    asyncio.run(scenario())
