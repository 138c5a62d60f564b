"""The JAUS gateway in front of a robot on an authenticated Zenoh bus: the gateway opens the
robot's URL through the transport table as any station does (logging in to the bus with its
key), so a JAUS client on loopback JUDP identifies the robot, takes control and drives it."""

from __future__ import annotations

import asyncio
import math
import secrets
import socket
import struct
from typing import Any

import pytest
from test_gateway_udp import (
    CONFIRM_CONTROL,
    CONTROL_ACCEPTED,
    QUERY_IDENTIFICATION,
    REPORT_IDENTIFICATION,
    REQUEST_CONTROL,
    SET_VELOCITY_COMMAND,
    _client,
    scaled,
)

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.jaus import JausBridge
from freelook.link import parse_transport_url
from freelook.maps import load_world
from freelook.robot import ServerOptions
from loopback import OPENS, alive, running, serving
from waiting import wait_until_async

pytestmark = pytest.mark.timeout(120)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_jaus_client_drives_a_robot_on_a_zenoh_bus_through_the_gateway() -> None:
    config, world = load_robot("pioneer3dx"), load_world("square")
    key = secrets.token_bytes(32)
    url = f"zenoh://127.0.0.1:{_free_port()}/rover"
    seen: dict[str, Any] = {}

    async def scenario() -> None:
        server, robot = simulated_server(
            config, world, ServerOptions(listen=url, key=key, camera=False), robot_map=None
        )
        async with serving(server):
            bridge = JausBridge(
                config, parse_transport_url(url), key, station=2, listen=("127.0.0.1", 0)
            )
            async with running(bridge) as (bridge_task,):
                await wait_until_async(
                    lambda: alive(bridge_task) and bridge.ready.is_set(),
                    OPENS,
                    "the JAUS gateway to listen",
                )
                gw = bridge.jaus_address
                ocu = await _client((7, 1, 1))
                try:
                    body = await ocu.ask(
                        gw, QUERY_IDENTIFICATION, bytes([2]), REPORT_IDENTIFICATION
                    )
                    seen["identification"] = body[4 : 4 + body[3]].decode()

                    async def granted() -> bool:
                        (answer,) = await ocu.ask(gw, REQUEST_CONTROL, bytes([50]), CONFIRM_CONTROL)
                        return bool(answer == CONTROL_ACCEPTED)

                    await wait_until_async(granted, OPENS, "control for the client", every=0.3)
                    truth = robot.sim.ground_truth
                    start = (truth.x, truth.y)
                    drive = struct.pack("<BBI", 0b1, 0, scaled(0.3, -327.68, 327.67, 32))
                    for _ in range(15):  # 0.3 m/s held for 1.5 s
                        ocu.send(gw, SET_VELOCITY_COMMAND, drive)
                        await asyncio.sleep(0.1)
                    truth = robot.sim.ground_truth
                    seen["moved"] = math.dist(start, (truth.x, truth.y))
                finally:
                    assert ocu.transport is not None
                    ocu.transport.close()

    asyncio.run(scenario())
    assert seen["identification"] == "pioneer3dx"
    assert seen["moved"] > 0.15  # the robot on the bus drove
