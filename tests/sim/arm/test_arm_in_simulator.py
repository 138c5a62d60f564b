"""The arm rides on the simulated vehicle: stepped with its physics, behind the HAL, and
without touching the vehicle's motion or any sensor's random draws."""

from __future__ import annotations

import numpy as np

from freelook.config import load_robot
from freelook.hardware.sim import simulated_hardware
from freelook.maps import load_world
from freelook.sim import Simulator


def test_the_arm_moves_with_the_physics_and_leaves_the_vehicle_alone() -> None:
    robot = load_robot("taros")
    world = load_world("eod")
    with_arm = Simulator(robot, world, seed=3)
    without = Simulator(robot.model_copy(update={"arm": None}), world, seed=3)
    assert with_arm.arm is not None
    assert without.arm is None
    hardware = simulated_hardware(with_arm, camera=False)
    assert hardware.arm is with_arm.arm
    start = np.array(hardware.arm.state().positions)
    hardware.arm.command_velocities([0.2, 0.0, 0.0, 0.0, 0.0])
    for sim in (with_arm, without):
        sim.set_wheel_speeds(0.3, 0.4)
        sim.run_for(1.0)
    moved = np.array(hardware.arm.state().positions) - start
    assert 0.15 < moved[0] < 0.2  # 1 s at 0.2 rad/s behind a 50 ms lag
    assert np.all(moved[1:] == 0.0)
    assert with_arm.ground_truth == without.ground_truth
    assert with_arm.latest_laser is not None
    assert without.latest_laser is not None
    assert np.array_equal(with_arm.latest_laser.ranges, without.latest_laser.ranges)


def test_a_robot_without_an_arm_has_none() -> None:
    sim = Simulator(load_robot("pioneer3dx"), load_world("eod"), seed=1)
    assert sim.arm is None
    assert simulated_hardware(sim, camera=False).arm is None
