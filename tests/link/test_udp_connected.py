"""A station's UDP socket is connected to its robot: datagrams from anywhere else never reach
the process (the kernel drops them), so a flood at the station's port costs it nothing."""

from __future__ import annotations

import asyncio
import socket

from freelook.link import UdpEndpoint


def test_a_station_hears_its_robot_and_nobody_else() -> None:
    async def scenario() -> None:
        robot = await UdpEndpoint.open(("127.0.0.1", 0))
        station = await UdpEndpoint.open(None, remote=robot.local_address)
        stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            for _ in range(1000):
                stranger.sendto(b"\x00forged", station.local_address)
            station.send(b"hello")
            assert await robot.recv(timeout=5.0) == b"hello"
            robot.send(b"welcome", robot.last_sender)
            assert await station.recv(timeout=5.0) == b"welcome"
            # the stranger's thousand datagrams came first; none got through or was counted
            assert await station.recv(timeout=0.2) is None
            assert station.dropped_strangers == 0
        finally:
            stranger.close()
            station.close()
            robot.close()

    asyncio.run(scenario())
