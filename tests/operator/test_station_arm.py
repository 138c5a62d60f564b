"""The station's arm: hostile browser messages refused, joint-by-joint and Cartesian jogs
turned into commands within the URDF's limits, the gripper repeated with the jog, and the
3-D view posed from the robot's encoders (sans-I/O, on the simulated TAROS)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from freelook.arm import tool_pose
from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import (
    ArmVelocityCommand,
    ControlRequest,
    GripperCommand,
    LinkSession,
    ModeChange,
    NativeCodec,
    Telemetry,
)
from freelook.maps import load_world
from freelook.operator import StationCore, StickScales, parse_browser_message
from freelook.types import Mode

KEY = bytes(range(32))
TAROS = load_robot("taros")


def station(config: Any = TAROS) -> StationCore:
    session = LinkSession(NativeCodec(KEY, sender=1), spacing=0.047)
    core = StationCore(config, None, session)
    session.periodic = core.periodic
    return core


def press(core: StationCore, message: dict[str, Any]) -> list[object]:
    request = parse_browser_message(message, core.scales)
    assert request is not None, message
    return list(core.handle(request, 0.0, wall_time=1.8e9))


@pytest.mark.parametrize(
    "message",
    [
        {"type": "arm", "joints": [0.1] * 17},
        {"type": "arm", "joints": [0.1, math.inf]},
        {"type": "arm", "joints": [0.1, math.nan]},
        {"type": "arm", "joints": [0.1, "0.2"]},
        {"type": "arm", "joints": [True]},
        {"type": "arm", "joints": [[0.1]]},
        {"type": "arm", "joints": "0.1"},
        {"type": "arm", "joints": {"0": 1}},
        {"type": "arm", "cartesian": [0.0, 0.0]},
        {"type": "arm", "cartesian": [0.0, 0.0, 0.0, 1.0]},
        {"type": "arm", "cartesian": [0.0, 0.0, -math.inf]},
        {"type": "arm", "cartesian": None},
        {"type": "gripper", "open": math.nan},
        {"type": "gripper", "open": "wide"},
        {"type": "gripper"},
        {"type": "mode", "mode": "ARM"},
    ],
)
def test_hostile_arm_messages_are_refused(message: dict[str, Any]) -> None:
    assert parse_browser_message(message, StickScales.of(TAROS)) is None


def test_joint_jogs_are_shares_of_the_urdf_limits_and_clamped() -> None:
    core = station()
    assert core.arm is not None
    assert press(core, {"type": "mode", "mode": "arm"}) == [
        ModeChange(Mode.ARM),
        ArmVelocityCommand((0.0,) * 5),
    ]
    (command,) = press(core, {"type": "arm", "joints": [0, 0, -5, 0.5, 0]})
    assert isinstance(command, ArmVelocityCommand)
    limits = core.arm.model.max_velocity[core.arm.model.arm_joints]
    assert command.velocities == pytest.approx((0.0, 0.0, -0.5 * limits[2], 0.25 * limits[3], 0.0))
    assert press(core, {"type": "arm", "joints": [0.5, 0.5]}) == []  # not this arm's count
    assert core.drive_command == command


def test_the_gripper_goes_with_every_repeat_of_the_jog() -> None:
    core = station()
    press(core, {"type": "mode", "mode": "arm"})
    (grip,) = press(core, {"type": "gripper", "open": 0.25})
    assert grip == GripperCommand(0.25 * 0.36)
    out = core.periodic(0.1)
    assert out[:2] == [ArmVelocityCommand((0.0,) * 5), grip]
    press(core, {"type": "mode", "mode": "tank"})
    assert GripperCommand not in {type(m) for m in core.periodic(0.2)}


def test_a_cartesian_jog_moves_the_tool_along_the_asked_direction() -> None:
    robot = SimulatedRobot(TAROS, load_world("eod"), seed=1, use_localization=False)
    robot.send(ControlRequest(1, 10), 1)
    robot.run_for(0.1)
    core = station()
    core.on_link_message(robot.core.telemetry(robot.now()), robot.now())
    assert core.arm is not None
    model = core.arm.model
    for direction in ([1, 0, 0], [0, 0, 1], [0, -1, 0]):
        (command,) = press(core, {"type": "arm", "cartesian": direction})
        assert isinstance(command, ArmVelocityCommand)
        q = model.ready.copy()
        telemetry = core.telemetry
        assert telemetry is not None
        assert telemetry.arm is not None
        q[model.arm_joints] = telemetry.arm.positions
        moved = q.copy()
        moved[model.arm_joints] += np.array(command.velocities) * 0.01
        step = tool_pose(model, moved)[:3, 3] - tool_pose(model, q)[:3, 3]
        along = float(step @ np.array(direction, dtype=float))
        assert along > 0.9 * np.linalg.norm(step)  # within about 25° of the asked direction
        assert np.all(np.abs(command.velocities) <= model.max_velocity[model.arm_joints] / 2)


def test_the_view_poses_the_boxes_at_the_encoders_and_names_the_red_ones() -> None:
    robot = SimulatedRobot(TAROS, load_world("eod"), seed=1, use_localization=False)
    robot.send(ControlRequest(1, 10), 1)
    for _ in range(40):  # the elbow down onto the bumper
        robot.send(ArmVelocityCommand((0.0, 0.0, -1.0, 0.0, 0.0)), 1)
        robot.run_for(0.04)
    core = station()
    core.on_link_message(robot.core.telemetry(robot.now()), robot.now())
    assert core.arm is not None
    telemetry = core.telemetry
    assert telemetry is not None
    assert telemetry.arm is not None
    view = core.arm.view(telemetry.arm)
    assert view is not None
    assert view["phase"] == "stop"
    assert {"bumper", "finger_left", "finger_right"} <= set(view["red"])
    assert len(view["centres"]) == len(core.arm.describe()["boxes"]) == 26


def test_a_robot_without_an_arm_ignores_arm_input() -> None:
    core = station(load_robot("pioneer3dx"))
    assert core.arm is None
    assert press(core, {"type": "arm", "joints": [1.0]}) == []
    assert press(core, {"type": "mode", "mode": "arm"}) == []
    assert press(core, {"type": "gripper", "open": 1.0}) == []
    assert core.drive_command is None


def test_a_slow_phase_between_two_reports_reaches_the_view() -> None:
    """The check slows the arm for about 0.16 s before it stops it; reports 0.3 s apart (a
    busy machine's gap) each say the most restrictive phase, so one goes from clear straight
    to stop, and the phases gone through between them still show the slowing."""
    robot = SimulatedRobot(TAROS, load_world("eod"), seed=1, use_localization=False)
    robot.send(ControlRequest(1, 10), 1)
    sender, receiver = NativeCodec(KEY, sender=2), NativeCodec(KEY, sender=1)
    core = station()
    assert core.arm is not None
    reported, shown = [], []
    for _ in range(6):
        for _ in range(15):  # the elbow down onto the bumper, 0.3 s between reports
            robot.send(ArmVelocityCommand((0.0, 0.0, -1.0, 0.0, 0.0)), 1)
            robot.run_for(0.02)
        packet = sender.encode(robot.core.telemetry(robot.now()), robot.now())
        telemetry = receiver.decode(packet).message
        assert isinstance(telemetry, Telemetry)
        assert telemetry.arm is not None
        reported.append(telemetry.arm.phase)
        core.on_link_message(telemetry, robot.now())
        view = core.arm.view(telemetry.arm)
        assert view is not None
        shown.extend(p for p in view["phases"] if not shown or shown[-1] != p)
    assert 1 not in reported  # the reports' own phase never said slow
    assert shown == ["clear", "slow", "stop"]
