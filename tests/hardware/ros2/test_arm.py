"""An arm over ROS 2: the simulated TAROS publishes its arm and finger joints on
``joint_states`` and obeys the arm's and the gripper's controllers; the backend's HAL arm jogs
it and reads it back, with velocity commands and with trajectory points."""

from __future__ import annotations

import asyncio
import time

import pytest

from freelook.config import RobotConfig, load_robot
from freelook.hardware.ros2 import Ros2Robot, SimulatedRos2Robot
from freelook.maps import load_world
from waiting import wait_until_async

pytestmark = pytest.mark.realtime


@pytest.mark.parametrize("command", ["velocities", "trajectory"])
def test_the_hal_arm_jogs_the_simulated_arm_and_reads_it_back(
    ros_domain: int, command: str
) -> None:
    base = load_robot("taros")
    config = base.model_copy(update={"ros2": base.ros2.model_copy(update={"arm_command": command})})
    assert isinstance(config, RobotConfig)

    async def run() -> None:
        sim = SimulatedRos2Robot(config, load_world("lab"), domain_id=ros_domain, camera=False)
        runtime = asyncio.create_task(sim.run())
        robot = Ros2Robot(config, domain_id=ros_domain, camera=False)
        try:
            hw = await robot.start()
            arm, simulated = hw.arm, sim.sim.arm
            assert arm is not None
            assert simulated is not None
            assert arm.joint_names == simulated.joint_names
            n = len(arm.joint_names)
            before = arm.state().positions
            assert before == pytest.approx(simulated.state().positions, abs=1e-3)
            end = time.monotonic() + 0.6
            while time.monotonic() < end:  # the first joint at 0.3 rad/s, the others still
                arm.command_velocities([0.3] + [0.0] * (n - 1))
                await asyncio.sleep(0.02)
            arm.command_velocities([0.0] * n)
            await wait_until_async(
                lambda: abs(simulated.state().velocities[0]) < 1e-3, 1.0, "the arm to stop"
            )
            moved = simulated.state().positions[0] - before[0]
            # it moved, and no further than 0.3 rad/s for the 0.6 s of commands and the second
            # its stop may take (0.48 rad): how far behind the joints' lag is the machine's
            assert 0.03 < moved < 0.3 * (0.6 + 1.0)
            assert simulated.state().positions[1:] == pytest.approx(before[1:], abs=1e-3)
            await wait_until_async(
                lambda: arm.state().positions[0] == pytest.approx(before[0] + moved, abs=2e-3),
                1.0,
                "joint_states to follow the arm",
            )
            # a malformed command stops the arm rather than moving it
            arm.command_velocities([float("nan")] + [0.0] * (n - 1))
            await asyncio.sleep(0.2)  # time for it to move the arm, were it obeyed
            assert simulated.state().positions[0] == pytest.approx(before[0] + moved, abs=1e-3)
            # the gripper closes on nothing: it reads back closed, holding nothing
            wide = arm.gripper_state().opening
            assert wide > 0.02
            arm.command_gripper(0.0)
            await wait_until_async(
                lambda: arm.gripper_state().opening < 1e-3, 3.0, "the gripper to close"
            )
            assert not arm.gripper_state().holding
        finally:
            robot.close()
            sim.close()
            await asyncio.gather(runtime, return_exceptions=True)

    asyncio.run(run())


def test_a_description_without_arm_joints_on_joint_states_has_no_arm(ros_domain: int) -> None:
    """A robot whose joint_states never names the arm's joints runs without an arm."""
    config = load_robot("taros")
    pan_only = config.model_copy(update={"arm": None})

    async def run() -> None:
        sim = SimulatedRos2Robot(pan_only, load_world("lab"), domain_id=ros_domain, camera=False)
        runtime = asyncio.create_task(sim.run())
        robot = Ros2Robot(config, domain_id=ros_domain, camera=False)
        try:
            hw = await robot.start()
            assert hw.arm is None
            assert hw.pan_tilt is not None
            assert hw.notes == (
                "no arm: /joint_states names none of the arm's joints; the arm is off",
            )
        finally:
            robot.close()
            sim.close()
            await asyncio.gather(runtime, return_exceptions=True)

    asyncio.run(run())
