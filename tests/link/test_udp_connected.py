"""What the kernel drops before a freelook process reads it: a station's UDP socket is
connected to its robot, so datagrams from anywhere else never reach the station; the robot's
socket drops what cannot be a native packet."""

from __future__ import annotations

import asyncio
import socket

from freelook.link import NativeCodec, UdpEndpoint, VelocityCommand


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


def test_the_robots_socket_leaves_what_cannot_be_a_packet_in_the_kernel() -> None:
    """Garbage (no native sync, or shorter than a header) is dropped before the robot reads
    it; what looks like a packet still arrives, to be verified."""

    async def scenario() -> None:
        robot = await UdpEndpoint.open(("127.0.0.1", 0))
        codec = NativeCodec(bytes(range(32)), sender=1)
        assert robot.drop_in_kernel_unless(codec.sync, codec.min_length)
        packet = codec.encode(VelocityCommand(0.1, 0.0), 1.0)
        stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            for garbage in (b"\x00" * 60, packet[:-1][: codec.min_length - 1], b"\xfe\x4d" * 30):
                stranger.sendto(garbage, robot.local_address)
            stranger.sendto(packet, robot.local_address)
            assert await robot.recv(timeout=5.0) == packet  # the garbage never came
            assert await robot.recv(timeout=0.2) is None
            assert robot.dropped_strangers == 0
        finally:
            stranger.close()
            robot.close()

    asyncio.run(scenario())
