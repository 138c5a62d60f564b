"""Datagrams forged with the robot's own address do not blind the driver (the security issue's
attack: 1-byte datagrams "from" the robot at 50 a second cut the driver's video from 14.7 to
0.8 frames a second while the robot drove on 2.4 m).

A real robot (the simulator behind a real :class:`RobotServer`, its camera on) and a real
:class:`OperatorStation` talk over UDP on loopback; the station's page drives forward. A raw
socket sends the station datagrams whose IP and UDP headers carry the robot's address and
port: 1-byte ones, and native packets with the right sync and length whose tags are wrong. The
station refuses and counts every one; the robot's own packets must still be read (before, the
forged refusals spent the budget of the robot's address and the station dropped the robot's
telemetry and video with them). Measured on the simulator's truth: the robot keeps driving,
and it moves at most 1 m while the driver's picture or telemetry is stale.
"""

from __future__ import annotations

import asyncio
import math
import os
import socket
import struct
import time
from typing import Any

import pytest

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import NativeCodec, VelocityCommand, derive_key
from freelook.maps import load_world
from freelook.operator import OperatorStation, parse_browser_message
from freelook.robot import ServerOptions
from loopback import OPENS, alive, session_open
from waiting import wait_until_async

KEY = derive_key("ab" * 32)
CONFIG, WORLD = load_robot("pioneer3dx"), load_world("square")
RATE = 50.0  # forged datagrams a second of each kind (the attack's rate)
ATTACK = 6.0  # s
MAX_BLIND = 1.0  # m the robot may move while its driver cannot see (the bound)
#: s: a picture older than this, or telemetry older than the watchdog's timeout, is blind
PICTURE_STALE = 0.5
#: m the robot must cover under the attack: it is driven at about 0.3 m/s and may slow near a
#: wall, but a robot the attack stopped does not pass
MIN_DRIVEN = 1.0


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def spoofed(source: tuple[str, int], target: tuple[str, int], payload: bytes) -> bytes:
    """An IPv4 datagram from ``source`` to ``target`` carrying ``payload`` over UDP."""
    src, dst = socket.inet_aton(source[0]), socket.inet_aton(target[0])
    length = 8 + len(payload)
    pseudo = src + dst + struct.pack("!BBH", 0, socket.IPPROTO_UDP, length)
    header = struct.pack("!HHHH", source[1], target[1], length, 0)
    check = _checksum(pseudo + header + payload) or 0xFFFF
    udp = struct.pack("!HHHH", source[1], target[1], length, check) + payload
    ip = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + length, 0, 0, 64, socket.IPPROTO_UDP, 0, src, dst
    )
    return ip + udp


def raw_socket() -> socket.socket:
    try:
        return socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    except PermissionError:
        pytest.skip("forging a source address needs a raw socket (CAP_NET_RAW)")


def forged_packet() -> bytes:
    """A native packet as the robot would send it, tagged with a key the station lacks."""
    liar = NativeCodec(os.urandom(32), sender=100)
    return liar.encode(VelocityCommand(0.0, 0.0), 1.0)


def test_forged_datagrams_from_the_robots_address_do_not_blind_the_driver() -> None:
    raw = raw_socket()

    async def scenario() -> dict[str, Any]:
        server, robot = simulated_server(
            CONFIG,
            WORLD,
            ServerOptions(listen="udp://127.0.0.1:0", key=KEY, camera=True),
            robot_map=None,
        )
        server_task = asyncio.create_task(server.run())
        await wait_until_async(
            lambda: alive(server_task) and server.ready.is_set(), OPENS, "the robot to listen"
        )
        robot_address = server.local_address
        assert robot_address is not None
        station = OperatorStation(CONFIG, None, robot_address, key=KEY)
        station_task = asyncio.create_task(station.run())
        await wait_until_async(lambda: session_open(station), OPENS, "the session to open")
        assert station.driver is not None
        station_address = station.driver.endpoint.local_address
        assert isinstance(station_address, tuple)
        await wait_until_async(
            lambda: station.core.video_rx is not None, OPENS, "the first camera frame"
        )

        async def page() -> None:  # the page repeats the held key every 50 ms
            mode = parse_browser_message({"type": "mode", "mode": "free_look"})
            assert mode is not None
            station.send(station.core.handle(mode, station.clock(), time.time()))
            held = {"type": "axes", "mode": "free_look", "forward": 0.5}
            while True:
                request = parse_browser_message(held)
                assert request is not None
                station.send(station.core.handle(request, station.clock(), time.time()))
                await asyncio.sleep(0.05)

        page_task = asyncio.create_task(page())
        one_byte = spoofed(robot_address, station_address, b"\x00")
        lying = spoofed(robot_address, station_address, forged_packet())
        refused_before = sum(station.session.stats.refused.values())
        opened_before = station.sessions_opened
        driven = blind = 0.0
        try:
            await asyncio.sleep(1.0)  # under way
            state = robot.sim.vehicle.state()
            start = time.monotonic()
            forged = 0
            while time.monotonic() - start < ATTACK:
                alive(server_task, station_task, page_task)
                raw.sendto(one_byte, (station_address[0], 0))
                raw.sendto(lying, (station_address[0], 0))
                forged += 2
                await asyncio.sleep(1.0 / RATE)
                now = station.clock()
                picture = station.core.video_rx
                telemetry = station.core.report_rx
                sees = (
                    picture is not None
                    and now - picture <= PICTURE_STALE
                    and telemetry is not None
                    and now - telemetry <= CONFIG.safety.watchdog_timeout
                )
                moved = robot.sim.vehicle.state()
                step = math.hypot(moved.x - state.x, moved.y - state.y)
                state = moved
                driven += step
                if not sees:
                    blind += step
        finally:
            raw.close()
            for task in (page_task, station_task, server_task):
                task.cancel()
            await asyncio.gather(page_task, station_task, server_task, return_exceptions=True)
        return {
            "driven": driven,
            "blind": blind,
            "forged": forged,
            "refused": sum(station.session.stats.refused.values()) - refused_before,
            "reopened": station.sessions_opened - opened_before,
        }

    result = asyncio.run(scenario())
    assert result["blind"] <= MAX_BLIND, result
    assert result["driven"] >= MIN_DRIVEN, result  # the attack did not stop the driver
    assert result["reopened"] == 0, result
    # the forged ones refused and counted (the 1-byte ones may stay in the kernel, left there
    # by the station's socket filter), and none of the robot's own: before, the forgeries
    # spent the budget of the robot's address and some 3,000 of its packets were refused too
    assert result["forged"] // 2 <= result["refused"] <= result["forged"], result
