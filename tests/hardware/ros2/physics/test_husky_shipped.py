"""``freelook robot --robot husky --hardware ros2://a200_0001 --map room.yaml``: the shipped
Husky description, unchanged, on the physics-engine Husky speaking as Clearpath's ROS 2 stack
brings an A200 up (its namespace, ``platform/odom``, ``sensors/lidar2d_0/scan``,
``sensors/imu_0/data``, a ``TwistStamped`` ``cmd_vel``, the base controller's wheel separation
0.555 m times its multiplier 1.875), with a 360° lidar where the description has its laser.
The scan it takes as the message lays it out, and the run on the map holds every bound: the
zero after the link goes quiet is published at the watchdog, the base's controller braking it at
its own limit (``watchdog_stop = "zero"``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("pybullet")

from husky_drive import finish, map_run, start
from husky_engine import HuskyEngine
from ros2_processes import CLI_TEST_TIMEOUT

from freelook.config import load_robot

pytestmark = [pytest.mark.realtime, pytest.mark.timeout(CLI_TEST_TIMEOUT)]

NAMESPACE = "a200_0001"


def test_the_shipped_husky_description_drives_the_engine_husky_on_its_map(
    ros_domain: int, tmp_path: Path
) -> None:
    husky = load_robot("husky")
    assert husky.laser is not None
    topics = husky.ros2.topics

    async def run() -> list[str]:
        engine = HuskyEngine(
            ros_domain,
            namespace=NAMESPACE,
            topics=(topics.cmd_vel, topics.odom, topics.scan, topics.imu),
            stamped=husky.ros2.cmd_vel_stamped,
            separation=0.555 * 1.875,
            lidar_forward=husky.laser.mount_forward,
        ).start()
        process, lines, operator, drive = await start(
            engine, tmp_path, with_map=True, robot="husky", hardware=f"ros2://{NAMESPACE}"
        )
        try:
            assert any("a ROS 2 robot" in line and NAMESPACE in line for line in lines), lines
            assert not any("refused" in line for line in lines), lines
            return await map_run(engine, process, drive)
        finally:
            operator.close()
            await finish(process)
            engine.close()

    problems = asyncio.run(run())
    assert not problems, problems
