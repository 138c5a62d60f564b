"""The cockpit's path to a ROS 2 base, every process as a user starts it: the tests' own base
node, ``freelook robot --hardware ros2`` (native profile, a key) and ``freelook operator``,
driven through the cockpit's WebSocket. The base's camera image reaches the cockpit, Free Look
turns its pan joint and drives it, and a scan that goes quiet shows as a hardware stop."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import numpy as np
import pytest
import simplejpeg
import websockets
from ros2_base import RoomBase
from ros2_processes import CLI_TEST_TIMEOUT, TEST_KEY, start_operator, start_robot_program

from cli_processes import free_udp_port, stop
from waiting import wait_until_async

pytestmark = [pytest.mark.realtime, pytest.mark.timeout(CLI_TEST_TIMEOUT)]


class Cockpit:
    """The cockpit's WebSocket: the newest driving-camera frame and state, kept as they come."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.frames: list[np.ndarray] = []
        self.states: list[dict[str, Any]] = []

    async def listen(self) -> None:
        async for frame in self.ws:
            if isinstance(frame, bytes) and frame[:1] == b"\x02":
                self.frames.append(simplejpeg.decode_jpeg(frame[13:]))
            elif isinstance(frame, bytes) and frame[:1] == b"\x01":
                message = json.loads(frame[1:])
                if message.get("type") == "state":
                    self.states.append(message)

    async def hold(self, message: dict[str, Any], seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            await self.ws.send(json.dumps(message))
            await asyncio.sleep(0.05)


def test_the_cockpit_shows_the_ros2_camera_and_free_look_drives_the_base(ros_domain: int) -> None:
    async def run() -> None:
        base = RoomBase(ros_domain).start()
        udp_port, web_port = free_udp_port(), free_udp_port(socket.SOCK_STREAM)
        # the base's JPEG passed through as it came (the subject here, not the codec)
        robot, _ = await start_robot_program(
            udp_port, "--key", TEST_KEY, "--video", "jpeg", wire="native"
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
                # the base's own camera image, as the base encoded it
                await wait_until_async(
                    lambda: cockpit.frames, 10.0, "a camera frame in the cockpit"
                )
                assert cockpit.frames[-1].shape == (48, 64, 3)
                red_before = float(cockpit.frames[-1][..., 0].mean())
                # Free Look: the mouse turns the camera, so the base's pan joint turns
                await ws.send(json.dumps({"type": "mode", "mode": "free_look"}))
                turn = {"type": "axes", "mode": "free_look", "turn": 1.0}
                await cockpit.hold(turn, 1.0)
                await cockpit.hold({**turn, "turn": 0.0}, 0.5)
                assert base.pan > 0.3
                assert abs(base.x) < 0.01  # the camera turned, the chassis did not move
                assert base.pan_commands  # as Float64MultiArray rates on the pan controller
                # and the image the cockpit shows is the turned camera's
                await wait_until_async(
                    lambda: float(cockpit.frames[-1][..., 0].mean()) > red_before + 20,
                    2.0,
                    "the turned camera's image",
                )
                # W: the camera moves forward along where it looks; the tracks carry it
                x0, y0 = base.x, base.y
                await cockpit.hold({"type": "axes", "mode": "free_look", "forward": 1.0}, 1.5)
                moved = np.hypot(base.x - x0, base.y - y0)
                assert moved > 0.2
                # a scan that goes quiet: the robot stops commanding and says why
                base.stop_publishing("scan")
                await cockpit.hold({"type": "axes", "mode": "free_look", "forward": 1.0}, 1.0)
                await wait_until_async(
                    lambda: "hardware" in cockpit.states[-1]["safety"]["reasons"],
                    2.0,
                    "the hardware stop in the cockpit's state",
                )
                assert base.received[-1].v == 0.0
                assert base.received[-1].omega == 0.0
                listener.cancel()
        finally:
            await stop(operator)
            await stop(robot)
            base.close()
        assert robot.stdout is not None
        tail = (await robot.stdout.read()).decode()
        assert "hardware fault: /scan quiet for" in tail

    asyncio.run(run())
