"""The robot's heading survives a stalled program: no rotation counted twice or lost."""

from __future__ import annotations

import math

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import VelocityCommand
from freelook.maps import load_world


def test_a_stall_with_the_world_frozen_does_not_add_rotation() -> None:
    # on a loaded machine the physics and the control cycle can both miss their turns while
    # the gyro keeps sampling a robot that does not move; the next control cycle must count
    # the rotation the gyro saw, not its newest rate held over the whole gap
    config = load_robot("pioneer3dx")
    robot = SimulatedRobot(
        config, load_world("square"), seed=3, pose=(7.0, 7.0, 0.0), use_localization=False
    )
    for _ in range(40):
        robot.send(VelocityCommand(0.0, 0.5))
        robot.run_for(0.025)
    runtime = robot.runtime
    odometry_before, truth_before = robot.core.odometry.theta, robot.sim.vehicle.rotation
    period = config.link.control_period
    runtime.remove("sim.physics")
    runtime.remove("robot.control")
    robot.run_for(0.3)
    runtime.add_periodic("sim.physics", robot.sim.physics_period, robot.sim.physics)
    runtime.add_periodic("robot.control", period, robot.core.step, phase=period)
    for _ in range(20):
        robot.send(VelocityCommand(0.0, 0.5))
        robot.run_for(0.025)
    turned_odometry = robot.core.odometry.theta - odometry_before
    turned_truth = robot.sim.vehicle.rotation - truth_before
    assert turned_truth > 0.2
    assert abs(math.remainder(turned_odometry - turned_truth, math.tau)) < math.radians(0.5)
