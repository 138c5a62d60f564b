"""The autonomy mode under shared control: the robot runs the disposal task from its own
camera and HAL; any operator input stops it within one control cycle, the e-stop and a lost
link pause it, and the hand-back resumes the phase it was in."""

from __future__ import annotations

import numpy as np
import pytest

from freelook.autonomy import ColorTarget
from freelook.config import load_robot
from freelook.experiments._bomb_disposal import eod_scenario
from freelook.hardware.sim import SimulatedRobot
from freelook.link import (
    EStop,
    Heartbeat,
    ModeChange,
    PanTiltCommand,
    VelocityCommand,
)
from freelook.types import Mode, TaskPhase


def _robot(seed: int = 2, name: str = "m2p2") -> SimulatedRobot:
    scenario = eod_scenario(seed, name)
    robot = SimulatedRobot(
        load_robot(name), scenario.world, seed=seed, pose=scenario.start, camera=True,
        robot_map=None, use_localization=False,
    )  # fmt: skip
    assert robot.core.autonomy is not None
    robot.core.autonomy.set_colors(
        ColorTarget(scenario.object_hue), ColorTarget(scenario.receptacle_hue)
    )
    robot.send(ModeChange(Mode.AUTONOMY))
    return robot


def _run_until(robot: SimulatedRobot, phase: TaskPhase, limit: float = 60.0) -> None:
    autonomy = robot.core.autonomy
    assert autonomy is not None
    t = 0.0
    while autonomy.phase != phase:
        assert t < limit, f"still in {autonomy.phase.name} after {limit} s"
        robot.send(Heartbeat())
        robot.run_for(0.1)
        t += 0.1


def _drive(robot: SimulatedRobot, seconds: float) -> None:
    """Run on with the station's heartbeats (the link alive)."""
    for _ in range(round(seconds / 0.1)):
        robot.send(Heartbeat())
        robot.run_for(0.1)


def _arm_still(robot: SimulatedRobot) -> bool:
    arm = robot.core.arm
    return arm is not None and arm.last is not None and not np.any(arm.last.velocities)


@pytest.mark.parametrize(
    "operator",
    [VelocityCommand(0.0, 0.0), PanTiltCommand(0.1, 0.0)],
)
def test_operator_input_stops_the_approach_within_one_cycle_and_hand_back_resumes(
    operator: object,
) -> None:
    robot = _robot()
    core = robot.core
    _run_until(robot, TaskPhase.APPROACH_OBJECT)
    _drive(robot, 1.0)
    robot.send(Heartbeat())
    assert core.modes.mode == Mode.AUTONOMY
    assert abs(core.control.last_output.v) + abs(core.control.last_output.omega) > 0
    robot.send(operator)  # type: ignore[arg-type]
    robot.run_for(core.period)  # one control cycle
    assert core.modes.mode != Mode.AUTONOMY
    assert core.control.last_output.v == 0.0
    assert core.control.last_output.omega == 0.0
    assert core.telemetry(robot.now()).autonomy.paused
    robot.run_for(1.0)
    assert core.autonomy is not None
    assert core.autonomy.phase == TaskPhase.APPROACH_OBJECT
    robot.send(ModeChange(Mode.AUTONOMY))  # the hand-back
    assert core.autonomy.phase == TaskPhase.APPROACH_OBJECT
    assert core.modes.mode == Mode.AUTONOMY


def test_operator_input_stops_the_arm_mid_grasp_and_hand_back_resumes_the_grasp() -> None:
    robot = _robot()
    core = robot.core
    _run_until(robot, TaskPhase.GRASP)
    _drive(robot, 1.0)
    robot.send(Heartbeat())
    arm = core.arm
    assert arm is not None
    assert arm.last is not None
    assert np.any(arm.last.velocities)
    robot.send(VelocityCommand(0.0, 0.0))
    robot.run_for(core.period)
    assert _arm_still(robot)
    robot.send(ModeChange(Mode.AUTONOMY))
    assert core.autonomy is not None
    assert core.autonomy.phase == TaskPhase.GRASP
    _run_until(robot, TaskPhase.SEARCH_RECEPTACLE)


def test_the_e_stop_pauses_the_task_and_refuses_it_until_released() -> None:
    robot = _robot()
    core = robot.core
    _run_until(robot, TaskPhase.APPROACH_OBJECT)
    robot.send(EStop(True))
    robot.run_for(core.period)
    assert core.modes.mode == Mode.IDLE
    assert core.control.last_output.v == 0.0
    robot.send(ModeChange(Mode.AUTONOMY))
    assert core.modes.mode == Mode.IDLE
    assert any("e-stop" in r for r in core.log.rejections)
    robot.send(EStop(False))
    robot.send(ModeChange(Mode.AUTONOMY))
    assert core.modes.mode == Mode.AUTONOMY
    assert core.autonomy is not None
    assert core.autonomy.phase == TaskPhase.APPROACH_OBJECT


def test_a_lost_link_pauses_the_task_rather_than_going_on_blind() -> None:
    robot = _robot()
    core = robot.core
    _run_until(robot, TaskPhase.APPROACH_OBJECT)
    robot.run_for(1.5)  # no packet for longer than the watchdog's 0.5 s
    assert core.modes.mode == Mode.IDLE
    assert core.control.last_output.v == 0.0
    assert core.control.last_output.omega == 0.0
    assert core.autonomy is not None
    assert core.autonomy.phase == TaskPhase.APPROACH_OBJECT


def test_a_robot_without_an_arm_or_camera_refuses_autonomy() -> None:
    scenario = eod_scenario(2, "m2p2")
    robot = SimulatedRobot(
        load_robot("m2p2"), scenario.world, pose=scenario.start, camera=False, robot_map=None
    )
    assert robot.core.autonomy is None
    robot.send(ModeChange(Mode.AUTONOMY))
    assert robot.core.modes.mode != Mode.AUTONOMY
    assert any("autonomy refused" in r for r in robot.core.log.rejections)
