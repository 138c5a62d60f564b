"""The robot's own map and localization, every process as a user starts it: the tests' own
base and a node publishing an ``OccupancyGrid`` on ``/map`` and ``/amcl_pose``; ``freelook
robot --hardware ros2 --map ros:/map`` with ``[ros2] localization = "ros"``; ``freelook
operator``, watched and driven through the cockpit's WebSocket. The cockpit shows the
published map and AMCL's pose (the map frame 1 m and 0.5 m off the odometry's), the map's wall
behind the robot, which no sensor sees, stops it backing up, a spread pose is not trusted, and
a map published later replaces the one shown."""

from __future__ import annotations

import asyncio
import json
import math
import socket
import time
from pathlib import Path
from typing import Any

import pytest
import websockets
from ros2_base import RoomBase
from ros2_localization import MAP_OFFSET, MapAndPose, room_grid
from ros2_processes import CLI_TEST_TIMEOUT, TEST_KEY, start_operator, start_robot_program

from cli_processes import free_udp_port, stop
from waiting import wait_until_async

pytestmark = [pytest.mark.realtime, pytest.mark.timeout(CLI_TEST_TIMEOUT)]

PIONEER = Path(__file__).parents[3] / "src/freelook/config/robots/pioneer3dx.toml"
WALL_X = -0.8  # odometry frame: a wall in the map alone, behind the robot


class Cockpit:
    """The cockpit's WebSocket: every JSON message, kept as it comes."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.messages: list[dict[str, Any]] = []

    async def listen(self) -> None:
        async for frame in self.ws:
            if isinstance(frame, bytes) and frame[:1] == b"\x01":
                self.messages.append(json.loads(frame[1:]))
            elif isinstance(frame, str):
                self.messages.append(json.loads(frame))

    def states(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if m.get("type") == "state" and "pose" in m]

    def maps(self) -> list[dict[str, Any]]:
        return [m["map"] for m in self.messages if m.get("map")]

    async def hold(self, message: dict[str, Any], seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            await self.ws.send(json.dumps(message))
            await asyncio.sleep(0.05)


def test_the_cockpit_shows_the_ros_map_and_pose_and_the_map_wall_stops_the_robot(
    ros_domain: int, tmp_path: Path
) -> None:
    description = tmp_path / "pioneer-amcl.toml"
    description.write_text(PIONEER.read_text() + '\n[ros2]\nlocalization = "ros"\n')
    grid, origin = room_grid(wall_x=WALL_X)

    async def run() -> None:
        base = RoomBase(ros_domain).start()
        localization = MapAndPose(
            ros_domain, lambda: (base.x, base.y, base.theta), grid, origin
        ).start()
        udp_port, web_port = free_udp_port(), free_udp_port(socket.SOCK_STREAM)
        robot, _ = await start_robot_program(
            udp_port, "--key", TEST_KEY, wire="native", robot=str(description), robot_map="ros:/map"
        )
        operator, url = await start_operator(udp_port, web_port, TEST_KEY)
        token = url.split("?token=", 1)[1]
        try:
            async with websockets.connect(
                f"ws://127.0.0.1:{web_port}/ws?token={token}",
                additional_headers={"Origin": f"http://127.0.0.1:{web_port}"},
                max_size=None,
            ) as ws:
                cockpit = Cockpit(ws)
                listener = asyncio.create_task(cockpit.listen())
                # the published grid, as it is, in the cockpit
                await wait_until_async(cockpit.maps, 15.0, "the robot's map in the cockpit")
                shown = cockpit.maps()[-1]
                assert (shown["height"], shown["width"]) == grid.shape
                assert shown["resolution"] == pytest.approx(0.05)
                assert shown["origin"] == pytest.approx(list(origin))
                # AMCL's pose, trusted: the map frame's, not the odometry's
                await wait_until_async(
                    lambda: cockpit.states() and not cockpit.states()[-1]["localizing"],
                    5.0,
                    "a trusted pose in the cockpit",
                )
                pose = cockpit.states()[-1]["pose"]
                assert (pose["x"], pose["y"]) == pytest.approx(MAP_OFFSET, abs=0.03)
                # the program's own dead reckoning started where it was put on the map
                odom = cockpit.states()[-1]["odom"]
                assert math.hypot(odom["x"] - pose["x"], odom["y"] - pose["y"]) > 0.3
                # backing up at the map's wall, which the forward laser cannot see: the map
                # layer slows the robot and stops it before the wall
                await ws.send(json.dumps({"type": "mode", "mode": "tank"}))
                await cockpit.hold({"type": "axes", "mode": "tank", "forward": -1.0}, 6.0)
                rear = base.x + base.center_forward - base.length / 2
                assert base.x < -0.1  # it did back up
                assert rear > WALL_X  # and stopped short of the map's wall
                assert base.received[-1].v == pytest.approx(0.0, abs=0.02)
                slowed = [s for s in cockpit.states() if s["safety"]["scale"] < 1.0]
                assert slowed
                assert slowed[-1]["safety"]["zone"] is not None
                # AMCL spread too wide: the pose is not trusted (the cockpit says localizing)
                with localization.lock:
                    localization.std = 1.0
                await wait_until_async(
                    lambda: cockpit.states()[-1]["localizing"], 3.0, "an untrusted pose"
                )
                # the robot's mapping grows its map: the cockpit follows
                wider, _ = room_grid(room=(-2.0, 6.0, -2.0, 2.0), wall_x=WALL_X)
                localization.publish_map(wider, origin)
                await wait_until_async(
                    lambda: cockpit.maps()[-1]["width"] == wider.shape[1],
                    10.0,
                    "the new map in the cockpit",
                )
                listener.cancel()
        finally:
            await stop(operator)
            await stop(robot)
            localization.close()
            base.close()

    asyncio.run(run())
