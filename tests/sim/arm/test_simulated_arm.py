"""The simulated arm: lagging joints within limits, encoders, and a gripper that picks up the
eod world's suspicious object, carries it and drops it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from freelook.arm import ArmGuard, GradientPlanner, PlanFollower, ReachGoal, load_arm
from freelook.config import load_robot
from freelook.hal import Arm
from freelook.maps import load_world
from freelook.sim.arm import ArmObject, SimulatedArm, objects_from_world

CFG = load_robot("taros").arm
assert CFG is not None
MODEL = load_arm(CFG.urdf, CFG.srdf)
DT = 0.005


def test_it_is_the_hal_arm() -> None:
    arm = SimulatedArm(MODEL)
    assert isinstance(arm, Arm)
    assert arm.joint_names == MODEL.joint_names[:5]
    state = arm.state()
    assert state.names == arm.joint_names
    assert len(state.positions) == 5
    assert arm.gripper_state().opening == pytest.approx(0.36)


def test_joints_follow_with_first_order_lag() -> None:
    arm = SimulatedArm(MODEL, time_constant=0.05)
    arm.command_velocities([0.5, 0, 0, 0, 0])
    for _ in range(round(0.05 / DT)):
        arm.step(DT)
    assert arm.qd[0] == pytest.approx(0.5 * (1 - math.exp(-1)), rel=1e-6)
    for _ in range(round(0.5 / DT)):
        arm.step(DT)
    assert arm.qd[0] == pytest.approx(0.5, rel=1e-3)


def test_velocity_and_position_limits_hold() -> None:
    arm = SimulatedArm(MODEL, time_constant=0.0)
    arm.command_velocities([10.0, 0, 0, 0, 0])
    arm.step(DT)
    assert arm.qd[0] == pytest.approx(MODEL.max_velocity[0])
    for _ in range(round(6.0 / DT)):
        arm.step(DT)
    assert arm.q[0] == MODEL.upper[0]
    assert arm.qd[0] == 0.0


def test_encoders_are_quantised_and_non_finite_commands_stop() -> None:
    arm = SimulatedArm(MODEL, encoder_resolution=0.001)
    arm.command_velocities([0.123, 0, 0, 0, 0])
    for _ in range(50):
        arm.step(DT)
    positions = np.array(arm.state().positions)
    np.testing.assert_allclose(np.round(positions / 0.001) * 0.001, positions, atol=1e-12)
    assert abs(positions[0] - arm.q[0]) <= 0.0005 + 1e-12
    arm.command_velocities([math.nan, 0, 0, 0, 0])
    for _ in range(round(1.0 / DT)):
        arm.step(DT)
    assert abs(arm.qd[0]) < 1e-6


def test_closing_on_nothing_closes_and_holds_nothing() -> None:
    arm = SimulatedArm(MODEL)
    arm.command_gripper(0.0)
    for _ in range(round(3.0 / DT)):
        arm.step(DT)
    assert arm.gripper_state().opening == pytest.approx(0.0)
    assert not arm.gripper_state().holding


def test_pick_up_carry_and_drop_the_suspicious_object() -> None:
    objects = objects_from_world(load_world("eod"))
    [box] = objects
    arm = SimulatedArm(MODEL, objects=objects)
    arm.set_base_pose(box.centre[0] - 1.5, box.centre[1], 0.0)
    guard = ArmGuard.from_config(MODEL, CFG)  # type: ignore[arg-type]

    def run(follower: PlanFollower, seconds: float) -> None:
        for _ in range(round(seconds / DT)):
            d = guard.check(arm.q, follower.command(arm.q), arm.now)
            arm.command_velocities(d.velocities[MODEL.arm_joints])
            arm.step(DT)
            if follower.done:
                break

    plan = GradientPlanner(MODEL).plan(arm.q, ReachGoal((1.5, 0.0, 0.15), (0.0, 0.0, -1.0)))
    assert plan.reached
    run(PlanFollower(MODEL, plan), 10.0)
    assert np.linalg.norm(arm.tool_in_world()[:3, 3] - box.centre) < 0.06
    arm.command_gripper(0.0)
    for _ in range(round(3.0 / DT)):
        arm.step(DT)
    assert arm.gripper_state().holding
    assert arm.gripper_state().opening == pytest.approx(box.width)
    lift = GradientPlanner(MODEL).plan(arm.q, ReachGoal((1.5, 0.0, 0.8)))
    run(PlanFollower(MODEL, lift), 10.0)
    assert box.centre[2] > 0.6  # carried up
    carried_to = box.centre.copy()
    arm.command_gripper(arm.max_opening)
    for _ in range(round(1.0 / DT)):
        arm.step(DT)
    assert not arm.gripper_state().holding
    assert box.centre[2] == pytest.approx(box.size[2] / 2)  # on the floor
    assert box.centre[:2] == pytest.approx(carried_to[:2])


@pytest.mark.parametrize(("above_middle", "held"), [(0.09, True), (0.16, False)])
def test_a_tall_box_is_held_by_its_upper_part_not_from_over_its_top(
    above_middle: float, held: bool
) -> None:
    """A 0.24 m box: the tool 9 cm over its middle (3 cm under its top: fingers on its sides,
    the palm over it) holds it, farther than the 8 cm reach from its middle; 16 cm over it
    (4 cm over its top) holds nothing."""
    box = ArmObject("tall", np.array([0.0, 0.0, 0.12]), (0.1, 0.1, 0.24))
    arm = SimulatedArm(MODEL, objects=[box])
    tool = arm.tool_in_world()[:3, 3]
    arm.set_base_pose(-tool[0], -tool[1], 0.0)
    box.centre = np.array([0.0, 0.0, tool[2] - above_middle])  # the box set under the tool
    arm.command_gripper(0.0)
    for _ in range(round(3.0 / DT)):
        arm.step(DT)
    assert arm.gripper_state().holding is held
