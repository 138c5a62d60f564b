"""The simulator on ROS 2 against the ROS 2 backend, both in this process (two DDS
participants on loopback): the tracked pan-tilt description's stamped velocity commands and
joint trajectories, in a namespace; the base's odometry is its own dead reckoning."""

from __future__ import annotations

import asyncio
import math
import time

import pytest

from freelook.config import load_robot
from freelook.hal import DriveCommand
from freelook.hardware.ros2 import Ros2Robot, SimulatedRos2Robot
from freelook.maps import load_world
from waiting import wait_until_async

pytestmark = pytest.mark.realtime


def test_the_tracked_pan_tilt_description_drives_the_simulated_base(ros_domain: int) -> None:
    config = load_robot("ros2-tracked-pan-tilt")
    assert config.ros2.cmd_vel_stamped
    assert config.ros2.pan_tilt_command == "trajectory"

    async def run() -> None:
        sim = SimulatedRos2Robot(
            config, load_world("square"), "ugv1", domain_id=ros_domain, camera=False
        )
        runtime = asyncio.create_task(sim.run())
        robot = Ros2Robot(config, "ugv1", domain_id=ros_domain, camera=False)
        try:
            hw = await robot.start()
            assert hw.pan_tilt is not None
            assert hw.laser is not None
            assert hw.gyro is not None
            assert robot.topics["odom"][0] == "/ugv1/diff_drive_controller/odom"
            odom0 = hw.odometer.latest() if hw.odometer else None
            assert odom0 is not None
            assert math.hypot(odom0.x, odom0.y) < 1e-6  # the base's frame: where it woke up
            truth0 = sim.sim.ground_truth
            # pan at 0.5 rad/s through joint trajectories, read back from joint_states
            end = time.monotonic() + 1.0
            while time.monotonic() < end:  # a second of commands, every 20 ms
                hw.pan_tilt.command_rates(0.5, 0.0)
                hw.drive.command(DriveCommand.of_twist(0.2, 0.0, 0.5))
                await asyncio.sleep(0.02)
            hw.pan_tilt.command_rates(0.0, 0.0)
            hw.drive.command(DriveCommand.of_twist(0.0, 0.0, 0.5))
            await wait_until_async(
                lambda: sim.sim.vehicle.pan > 0.3, 1.0, "the simulated pan to turn"
            )
            await wait_until_async(
                lambda: (
                    hw.pan_tilt is not None
                    and abs(hw.pan_tilt.state().pan - sim.sim.vehicle.pan) < 0.02
                ),
                1.0,
                "joint_states to follow the pan",
            )
            truth = sim.sim.ground_truth
            travelled = math.hypot(truth.x - truth0.x, truth.y - truth0.y)
            # it drove, and no further than 0.2 m/s for the second of commands and the half
            # second the base keeps its last one (how late the stamped commands came is the
            # machine's)
            assert 0.03 < travelled < 0.2 * (1.0 + 0.5)
            odom = hw.odometer.latest()
            assert odom is not None
            # its own dead reckoning from the encoders of slipping tracks: close to the truth
            assert math.hypot(odom.x, odom.y) == pytest.approx(travelled, abs=0.05)
            assert sim.commands > 10
        finally:
            robot.close()
            sim.close()
            await asyncio.gather(runtime, return_exceptions=True)

    asyncio.run(run())
