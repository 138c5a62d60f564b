"""``freelook ros2 describe`` on ``freelook sim --ros2``, then ``freelook robot --hardware ros2
--robot`` on the description it wrote, unchanged: the program starts on it and a thesis
operator drives the simulated base over real UDP and real DDS, and the base stops when the
link goes quiet. Once with the simulator's defaults, once with a robot in a namespace whose
base takes ``TwistStamped`` on a controller's topic, found without being told the namespace.
And ``freelook robot --hardware ros2`` with no ``--robot``: it says what it found and what it
assumed, and drives."""

from __future__ import annotations

import asyncio
import math
import time
import tomllib
from pathlib import Path

import pytest
from ros2_processes import CLI_TEST_TIMEOUT

from cli_processes import ThesisOperator, free_udp_port, read_until, start_cli, stop
from freelook.link import PositionReport, SetTransmission, VelocityCommand
from waiting import wait_until_async

pytestmark = [pytest.mark.realtime, pytest.mark.timeout(CLI_TEST_TIMEOUT)]


async def start_ros2_sim(*extra: str) -> asyncio.subprocess.Process:
    sim, _ = await start_cli(
        "sim",
        "--ros2",
        "--no-browser",
        "--no-record",
        *extra,
        ready=lambda line: "obeys" in line and "cmd_vel" in line,
    )
    return sim


async def run_describe(*args: str) -> list[str]:
    """``freelook ros2 describe ARGS`` to its end; its lines (it must succeed)."""
    process, lines = await start_cli(
        "ros2", "describe", *args, ready=lambda line: line.startswith("wrote")
    )
    await read_until(process, lines, lambda line: line.startswith("next:"), 30.0, "next:")
    assert await process.wait() == 0, "".join(lines)
    return lines


async def drive_and_stop(udp_port: int) -> None:
    """A thesis operator drives forward for 2 s, then goes quiet: the base moved and stopped."""
    operator = await ThesisOperator.open(udp_port)
    positions: list[PositionReport] = operator.positions
    try:
        operator.send(SetTransmission(True))
        await wait_until_async(lambda: positions, 10.0, "a position packet")
        start = positions[-1]
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            operator.send(VelocityCommand(0.3, 0.0))
            await asyncio.sleep(0.047)
        stopped = await wait_until_async(  # the watchdog (0.5 s) runs out and the base stops
            lambda: positions[-1] if abs(positions[-1].v) < 0.01 else None,
            10.0,
            "the base stopped once the link went quiet",
            show=lambda: positions[-1],
        )
        travelled = math.hypot(stopped.x - start.x, stopped.y - start.y)
        # 0.3 m/s for 2 s, less the ramps, the stop and what the assumed zones allow near walls;
        # at most 0.3 m/s for those, the watchdog's 0.5 s and half a second of a busy machine's
        # lateness, then braking: under 1 m
        assert 0.1 < travelled < 1.0, travelled
        # half a second of its reports on (31 ms apart), it stands still
        heard = len(positions)
        await wait_until_async(lambda: len(positions) >= heard + 16, 10.0, "16 more positions")
        assert math.hypot(positions[-1].x - stopped.x, positions[-1].y - stopped.y) < 0.01
    finally:
        operator.close()


def test_a_description_of_the_ros2_simulator_runs_the_robot_program_unchanged(
    ros_domain: int, tmp_path: Path
) -> None:
    written = tmp_path / "my-robot.toml"

    async def run() -> None:
        sim = await start_ros2_sim()
        try:
            lines = await run_describe("-o", str(written), "--seconds", "2")
            said = "".join(lines)
            assert "found: cmd_vel /cmd_vel taken as Twist" in said
            assert "assumed: a footprint" in said
            assert lines[-1].strip() == f"next: freelook robot --hardware ros2 --robot {written}"
            data = tomllib.loads(written.read_text())
            # the simulated Pioneer's laser, camera and joints, as its topics said them
            assert (data["laser"]["beams"], data["laser"]["fov_deg"]) == (181, 180.0)
            assert data["laser"]["pinned"] == ["beams", "fov_deg"]
            # heard from arrival times (a busy machine delivers fewer): the 75 Hz laser, not a
            # camera's 30 or a base's 10
            assert data["laser"]["rate_hz"] == pytest.approx(75.0, rel=0.5)
            assert (data["camera"]["width"], data["camera"]["height"]) == (640, 480)
            assert data["pan_tilt"]["has_pan"]
            assert not data["ros2"]["cmd_vel_stamped"]
            assert data["ros2"]["topics"]["scan"] == "scan"
            assert data["ros2"]["topics"]["battery"] == ""  # the simulator has none
            udp_port = free_udp_port()
            robot, said_at_start = await start_cli(
                *("robot", "--robot", str(written), "--hardware", "ros2", "--map", "none"),
                *("--listen", f"udp://127.0.0.1:{udp_port}", "--wire", "thesis"),
                ready=lambda line: "profile on" in line,
            )
            try:
                assert "robot my-robot on a ROS 2 robot" in "".join(said_at_start)
                await drive_and_stop(udp_port)
            finally:
                await stop(robot)
        finally:
            await stop(sim)

    asyncio.run(run())


def test_a_robot_in_a_namespace_is_found_with_its_stamped_cmd_vel_and_driven(
    ros_domain: int, tmp_path: Path
) -> None:
    written = tmp_path / "tracked.toml"

    async def run() -> None:
        sim = await start_ros2_sim("--robot", "ros2-tracked-pan-tilt", "--ros2-namespace", "r1")
        try:
            lines = await run_describe("-o", str(written), "--seconds", "2")  # no --namespace
            assert lines[-1].strip() == (
                f"next: freelook robot --hardware ros2://r1 --robot {written}"
            )
            ros2 = tomllib.loads(written.read_text())["ros2"]
            assert ros2["cmd_vel_stamped"]
            assert ros2["pan_tilt_command"] == "trajectory"
            assert ros2["topics"]["cmd_vel"] == "diff_drive_controller/cmd_vel"
            assert ros2["topics"]["odom"] == "diff_drive_controller/odom"
            laser = tomllib.loads(written.read_text())["laser"]
            assert (laser["beams"], laser["fov_deg"]) == (541, 270.0)
            udp_port = free_udp_port()
            robot, _ = await start_cli(
                *("robot", "--robot", str(written), "--hardware", "ros2://r1", "--map", "none"),
                *("--listen", f"udp://127.0.0.1:{udp_port}", "--wire", "thesis"),
                ready=lambda line: "profile on" in line,
            )
            try:
                await drive_and_stop(udp_port)
            finally:
                await stop(robot)
        finally:
            await stop(sim)

    asyncio.run(run())


def test_the_robot_program_without_a_description_says_what_it_found_and_assumed_and_drives(
    ros_domain: int,
) -> None:
    async def run() -> None:
        sim = await start_ros2_sim()
        try:
            udp_port = free_udp_port()
            robot, lines = await start_cli(
                *("robot", "--hardware", "ros2", "--map", "none"),
                *("--listen", f"udp://127.0.0.1:{udp_port}", "--wire", "thesis"),
                ready=lambda line: "profile on" in line,
            )
            try:
                said = "".join(lines)
                assert "no --robot: watching the ROS 2 robot's topics" in said
                assert "found: scan /scan: 181 beams from -90° every 1°" in said
                assert "found: cmd_vel /cmd_vel taken as Twist" in said
                assert "assumed: a footprint of 0.51 × 0.43 m" in said
                assert "robot ros2-robot on a ROS 2 robot" in said
                await drive_and_stop(udp_port)
            finally:
                await stop(robot)
        finally:
            await stop(sim)

    asyncio.run(run())
