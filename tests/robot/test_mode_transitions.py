"""Every mode transition the robot core makes, from every mode, for every command that can
change the mode: written out here as the operator sees it, independently of the core's own
transition table, so a handler that skips the table or a wrong row in it fails."""

from __future__ import annotations

from freelook.config import load_robot
from freelook.experiments._bomb_disposal import eod_scenario
from freelook.hardware.sim import SimulatedRobot
from freelook.link import (
    ArmVelocityCommand,
    ControlGrant,
    EStop,
    FreeLookCommand,
    GoalStart,
    GoalStop,
    GripperCommand,
    Heartbeat,
    LinearDriveStart,
    LinearDriveStop,
    Message,
    ModeChange,
    PanTiltCommand,
    Relocalize,
    TankCommand,
    TrajectoryStart,
    TrajectoryStop,
    VelocityCommand,
    WheelSpeedCommand,
)
from freelook.types import Mode, SafetyFlags

PATH = TrajectoryStart((0.0, 1.0, 2.0), (0.0, 0.5, 1.0), (0.0, 0.0, 0.0))
GOAL = GoalStart(1.0, 0.5)  # near the start: within any map


def _robot() -> SimulatedRobot:
    """A robot that can enter every mode: an arm, a driving camera that pans off the axle."""
    scenario = eod_scenario(2, "m2p2")
    return SimulatedRobot(
        load_robot("m2p2"), scenario.world, seed=2, pose=scenario.start, camera=True,
        robot_map=None, use_localization=False,
    )  # fmt: skip


def _into(mode: Mode, robot: SimulatedRobot) -> None:
    """Bring the robot into ``mode`` the way an operator would."""
    arm = robot.core.arm
    assert arm is not None
    joints = len(arm.model.arm_joints)
    enter: dict[Mode, list[Message]] = {
        Mode.IDLE: [],
        Mode.VELOCITY: [VelocityCommand(0.1, 0.0)],
        Mode.WHEELS: [WheelSpeedCommand(0.1, 0.1)],
        Mode.TANK: [TankCommand(0.1, 0.0)],
        Mode.FREE_LOOK: [FreeLookCommand(0.1, 0.0, 0.0)],
        Mode.KEYBOARD: [ModeChange(Mode.KEYBOARD), VelocityCommand(0.1, 0.0)],
        Mode.LINEAR: [LinearDriveStart(0.0, 1.0)],
        Mode.TRAJECTORY: [PATH],
        Mode.ARM: [ArmVelocityCommand((0.0,) * joints)],
        Mode.AUTONOMY: [ModeChange(Mode.AUTONOMY)],
        Mode.GOAL: [GOAL],
    }
    for message in [ModeChange(Mode.IDLE), *enter[mode]]:  # from idle: the keyboard keeps
        robot.send(message)  # its mode for velocity commands
    assert robot.core.modes.mode == mode


def _expected(mode: Mode, message: Message) -> Mode:
    """Where ``message`` takes a robot in ``mode``."""
    drives = {
        VelocityCommand: Mode.VELOCITY,
        WheelSpeedCommand: Mode.WHEELS,
        TankCommand: Mode.TANK,
        FreeLookCommand: Mode.FREE_LOOK,
        ArmVelocityCommand: Mode.ARM,
        GripperCommand: Mode.ARM,
        LinearDriveStart: Mode.LINEAR,
        TrajectoryStart: Mode.TRAJECTORY,
        LinearDriveStop: Mode.IDLE,
        TrajectoryStop: Mode.IDLE,
        GoalStart: Mode.GOAL,
        GoalStop: Mode.IDLE,
    }
    if isinstance(message, ModeChange):
        return message.mode
    if isinstance(message, VelocityCommand) and mode == Mode.KEYBOARD:
        return Mode.KEYBOARD  # the keyboard's own commands
    if isinstance(message, PanTiltCommand):
        return Mode.IDLE if mode == Mode.AUTONOMY else mode  # the task pauses
    return drives.get(type(message), mode)


def test_every_command_takes_every_mode_where_the_operator_expects() -> None:
    robot = _robot()
    core = robot.core
    arm = core.arm
    assert arm is not None
    joints = len(arm.model.arm_joints)
    messages: list[Message] = [
        VelocityCommand(0.1, 0.1),
        WheelSpeedCommand(0.1, 0.2),
        TankCommand(0.1, 0.1, 0.1, 0.0),
        FreeLookCommand(0.1, 0.0, 0.1),
        PanTiltCommand(0.1, 0.0),
        LinearDriveStart(0.0, 2.0),
        LinearDriveStop(),
        PATH,
        TrajectoryStop(),
        GOAL,
        GoalStop(),
        ArmVelocityCommand((0.01,) * joints),
        GripperCommand(arm.max_opening / 2),
        Heartbeat(),
        Relocalize(),
        EStop(False),
        *(ModeChange(mode) for mode in Mode),
    ]
    checked = 0
    for start in Mode:
        for message in messages:
            _into(start, robot)
            robot.send(message)
            expected = _expected(start, message)
            assert core.modes.mode == expected, f"{message} in {start.name}: {core.modes.mode.name}"
            checked += 1
    assert checked == len(Mode) * len(messages)
    assert core.log.rejections == []  # this robot can enter every mode: nothing was refused


def test_a_mode_that_cannot_be_entered_leaves_the_mode_as_it_was() -> None:
    robot = _robot()
    core = robot.core
    _into(Mode.TANK, robot)
    robot.send(EStop(True))
    robot.send(ModeChange(Mode.AUTONOMY))  # refused while the e-stop is engaged
    assert core.modes.mode == Mode.TANK
    assert "e-stop" in core.log.rejections[-1]
    robot.send(LinearDriveStart(1.0, 1.0))  # no distance to drive: refused
    assert core.modes.mode == Mode.TANK
    assert "linear drive refused" in core.log.rejections[-1]
    robot.send(TrajectoryStart((0.0, 0.0), (0.0, 1.0), (0.0, 0.0)))  # no time to follow it
    assert core.modes.mode == Mode.TANK
    assert "trajectory refused" in core.log.rejections[-1]


def test_a_message_the_robot_does_not_take_is_refused_said_and_counted_never_fed_on() -> None:
    held = {}
    for message in (ControlGrant(1, 10), Heartbeat()):  # the robot's own answer, and one it takes
        robot = _robot()
        core = robot.core
        _into(Mode.LINEAR, robot)  # a mode fed by any message it hears
        dropped = core.log.dropped_commands
        for _ in range(15):  # 1.5 s: three times the watchdog's timeout
            robot.send(message)
            robot.run_for(0.1)
        assert core.modes.mode == Mode.LINEAR
        held[type(message)] = bool(core.control.last_output.flags & SafetyFlags.WATCHDOG)
        if isinstance(message, ControlGrant):
            assert core.log.dropped_commands == dropped + 15
            assert "ControlGrant from station 0 refused" in core.log.rejections[-1]
            assert any("ControlGrant" in line for line in core.log.notices)
        else:
            assert core.log.dropped_commands == dropped
    assert held == {ControlGrant: True, Heartbeat: False}
