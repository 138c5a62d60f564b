"""``freelook robot --hardware ros2 --robot ros2-diff-base``, started as a user starts it, on
a base whose 360° lidar publishes as RPLidar and LDS drivers do (360 beams from −π every 1°),
and on one whose lidar sits on its head facing backwards: the program takes the scan, and its
own safety stops the base before the wall it drives at (a wall placed at the wrong bearing
would let it drive on into it)."""

from __future__ import annotations

import asyncio
import math
import time
from pathlib import Path

import pytest
from ros2_base import RoomBase, lidar_360
from ros2_processes import CLI_TEST_TIMEOUT, start_robot_program

from cli_processes import ThesisOperator, free_udp_port, stop
from freelook.link import SetTransmission, VelocityCommand

pytestmark = [pytest.mark.realtime, pytest.mark.timeout(CLI_TEST_TIMEOUT)]

SHIPPED = Path(__file__).parents[3] / "src/freelook/config/robots/ros2-diff-base.toml"


def _turned_description(tmp_path: Path) -> str:
    """The shipped description, its laser on its head and facing backwards."""
    text = SHIPPED.read_text().replace("pinned = []\n", "pinned = []\nyaw_deg = 180.0\n")
    text = text.replace("yaw_deg = 180.0\n", "yaw_deg = 180.0\nupside_down = true\n")
    path = tmp_path / "turned.toml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("turned", [False, True], ids=["from -pi", "upside down, backwards"])
def test_a_360_lidar_drives_the_shipped_generic_base_and_safety_stops_it_at_the_wall(
    ros_domain: int, tmp_path: Path, turned: bool
) -> None:
    # at the shipped mount, 0.12 m ahead of the wheels' axle
    turn = {"yaw": math.pi, "upside_down": True} if turned else {}
    lidar = lidar_360(forward=0.12, **turn)
    robot = _turned_description(tmp_path) if turned else "ros2-diff-base"

    async def run() -> None:
        base = RoomBase(
            ros_domain, lidar=lidar, length=0.51, width=0.43, center_forward=0.0
        ).start()
        udp_port = free_udp_port()
        process, lines = await start_robot_program(udp_port, robot=robot)
        operator = await ThesisOperator.open(udp_port)
        try:
            assert any("a ROS 2 robot" in line for line in lines), lines
            assert any("taken as the scan says" in line for line in lines), lines
            operator.send(SetTransmission(True))
            end = time.monotonic() + 14.0
            while time.monotonic() < end:  # full speed at the wall 4 m ahead
                operator.send(VelocityCommand(1.4, 0.0))
                await asyncio.sleep(0.047)
            assert process.returncode is None
            assert base.x > 2.0  # it drove
            assert base.collisions == 0
            assert 0.0 < base.clearance() < 1.0  # up to the wall, and stopped before it
            assert base.received[-1].v == pytest.approx(0.0, abs=0.02)
        finally:
            operator.close()
            await stop(process)
            base.close()

    asyncio.run(run())
