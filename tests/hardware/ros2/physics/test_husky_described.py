"""``freelook ros2 describe`` on Clearpath's Husky in PyBullet (husky_engine.py), then
``freelook robot --robot`` with the description it wrote, unchanged: the watch finds the
Husky's topics as they are (odometry at 24 Hz, the 360° scan from −π, the gyro, a plain
``Twist`` ``cmd_vel``), and the program runs the robot with that file and drives it."""

from __future__ import annotations

import asyncio
import math
import os
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("pybullet")

from husky_drive import finish
from husky_engine import HuskyEngine
from ros2_processes import CLI_TEST_TIMEOUT, start_robot_program

from cli_processes import ThesisOperator, free_udp_port
from freelook.config import load_robot
from freelook.link import SetTransmission, VelocityCommand
from waiting import wait_until_async

pytestmark = [pytest.mark.realtime, pytest.mark.timeout(CLI_TEST_TIMEOUT)]


async def _describe(output: Path) -> list[str]:
    """``freelook ros2 describe -o OUTPUT`` as a user runs it; its lines."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "freelook.cli",
        "ros2",
        "describe",
        "-o",
        str(output),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    said, _ = await asyncio.wait_for(process.communicate(), 120.0)
    lines = said.decode().splitlines()
    assert process.returncode == 0, lines
    return lines


def test_a_description_written_from_the_husky_topics_runs_it_unchanged(
    ros_domain: int, tmp_path: Path
) -> None:
    written = tmp_path / "my-husky.toml"

    async def run() -> None:
        engine = HuskyEngine(ros_domain).start()
        process = None
        operator = None
        try:
            lines = await _describe(written)
            found = [line for line in lines if "found:" in line]
            assert any("/odom at 2" in line for line in found), lines  # 24 Hz, as published
            assert any("360 beams from -180° every 1°" in line for line in found), lines
            assert any("/imu/data" in line for line in found), lines
            assert any("taken as Twist" in line for line in found), lines
            config = load_robot(str(written))
            assert config.laser is not None
            assert (config.laser.beams, config.laser.fov_deg) == (360, 359.0)

            udp_port = free_udp_port()
            process, _ = await start_robot_program(udp_port, robot=str(written))
            operator = await ThesisOperator.open(udp_port)
            operator.send(SetTransmission(True))
            await wait_until_async(lambda: len(operator.positions) > 5, 10.0, "position packets")
            start = engine.truth()
            end = time.monotonic() + 2.5
            while time.monotonic() < end:  # ahead, then a turn
                ahead = time.monotonic() < end - 1.0
                operator.send(VelocityCommand(0.3, 0.0) if ahead else VelocityCommand(0.0, 0.6))
                await asyncio.sleep(0.047)
            truth = engine.truth()
            assert process.returncode is None
            assert math.hypot(truth.x - start.x, truth.y - start.y) > 0.2
            assert abs(math.remainder(truth.yaw - start.yaw, 2 * math.pi)) > 0.1
            assert engine.contacts == 0
        finally:
            if operator is not None:
                operator.close()
            if process is not None:
                await finish(process)
            engine.close()

    asyncio.run(run())
