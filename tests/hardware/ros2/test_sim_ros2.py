"""``freelook sim --ros2`` ↔ ``freelook robot --hardware ros2``: the simulator as a ROS 2
robot, driven end to end by the robot program with no other ROS software, for a thesis
operator; the simulated base's topics are the standard ones, with the standard types."""

from __future__ import annotations

import asyncio
import math
import time

import pytest
from ros2_processes import CLI_TEST_TIMEOUT, start_robot_program

from cli_processes import ThesisOperator, free_udp_port, start_cli, stop
from freelook.hardware.ros2 import ros
from freelook.link import SetTransmission, VelocityCommand
from waiting import wait_until, wait_until_async

pytestmark = [pytest.mark.realtime, pytest.mark.timeout(CLI_TEST_TIMEOUT)]


async def start_ros2_sim(*extra: str) -> tuple[asyncio.subprocess.Process, list[str]]:
    return await start_cli(
        "sim",
        "--ros2",
        "--no-browser",
        "--no-record",
        *extra,
        ready=lambda line: "obeys" in line and "cmd_vel" in line,
    )


def topic_types(domain: int, expected: set[str], timeout: float = 5.0) -> dict[str, list[str]]:
    """The graph's topics as another ROS 2 node sees them, once it has discovered all of
    ``expected`` (discovery is incremental: publishers and subscriptions arrive one by one)."""
    r = ros()
    context = r.rclpy.Context()
    r.rclpy.init(context=context, domain_id=domain)
    node = r.rclpy.create_node("probe", context=context)
    found: dict[str, list[str]] = {}

    def discovered() -> dict[str, list[str]] | None:
        found.clear()
        found.update(node.get_topic_names_and_types())
        return found if expected <= found.keys() else None

    try:
        return wait_until(
            discovered,
            timeout,
            f"a ROS 2 node to discover {sorted(expected)}",
            every=0.05,
            show=lambda: sorted(expected - found.keys()),
        )
    finally:
        node.destroy_node()
        context.try_shutdown()


def test_the_robot_program_drives_the_simulator_on_ros2(ros_domain: int) -> None:
    async def run() -> None:
        sim, _ = await start_ros2_sim("--robot", "pioneer3dx", "--world", "lab")
        try:
            expected = {
                "/odom": ["nav_msgs/msg/Odometry"],
                "/scan": ["sensor_msgs/msg/LaserScan"],
                "/imu/data": ["sensor_msgs/msg/Imu"],
                "/joint_states": ["sensor_msgs/msg/JointState"],
                "/camera/image_raw/compressed": ["sensor_msgs/msg/CompressedImage"],
                "/cmd_vel": ["geometry_msgs/msg/Twist"],
            }
            types = await asyncio.to_thread(topic_types, ros_domain, set(expected))
            assert {topic: types.get(topic) for topic in expected} == expected
            udp_port = free_udp_port()
            robot, _ = await start_robot_program(udp_port, robot_map="lab")
            operator = await ThesisOperator.open(udp_port)
            positions = operator.positions
            try:
                operator.send(SetTransmission(True))
                await wait_until_async(lambda: positions, 10.0, "a position packet")
                start = positions[-1]
                end = time.monotonic() + 2.0
                while time.monotonic() < end:  # 2 s of commands at the thesis's 47 ms spacing
                    operator.send(VelocityCommand(0.3, 0.0))
                    await asyncio.sleep(0.047)
                # the link goes quiet: the robot program stops the simulated base
                stopped = await wait_until_async(  # the watchdog runs out, the base stops
                    lambda: positions[-1] if abs(positions[-1].v) < 0.01 else None,
                    10.0,
                    "the base stopped once the link went quiet",
                    show=lambda: positions[-1],
                )
                heard = len(positions)
                travelled = math.hypot(stopped.x - start.x, stopped.y - start.y)
                # 0.3 m/s for 2 s, less the ramps; at most 0.3 m/s for those, the watchdog's
                # 0.5 s and half a second of a busy machine's lateness, then braking: < 1 m
                assert 0.3 < travelled < 1.0
                # half a second of its reports on (31 ms apart): it still reports (a silent
                # robot would look stopped) and stands still
                await wait_until_async(
                    lambda: len(positions) >= heard + 16, 10.0, "16 more positions"
                )
                assert abs(positions[-1].v) < 0.01
                assert math.hypot(positions[-1].x - stopped.x, positions[-1].y - stopped.y) < 0.01
            finally:
                operator.close()
                await stop(robot)
        finally:
            await stop(sim)

    asyncio.run(run())
