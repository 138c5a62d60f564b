"""The first drive command reaches the wheels within one control cycle, whatever came before.

Sans-I/O and on a virtual clock: the operator's codec encodes, the robot's codec decodes (the
same bytes a radio would carry, authenticated and replay-checked) and the robot program runs
lock-step. Each case sets up a situation an operator meets (a fresh start, a mode change, a
released stick, an e-stop released, a link that came back) and then sends one command.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import (
    ControlRequest,
    EStop,
    FreeLookCommand,
    Heartbeat,
    Message,
    NativeCodec,
    TankCommand,
    VelocityCommand,
    WheelSpeedCommand,
)
from freelook.maps import load_world

KEY = bytes(range(32))
STATION = 1
SPACING = 0.047  # the operator's transmission spacing (the thesis §6.1)


class Operator:
    """One operator station's wire end, talking to a lock-step robot on a virtual clock."""

    def __init__(self, robot: SimulatedRobot) -> None:
        self.robot = robot
        self.codec = NativeCodec(KEY, sender=STATION)
        self.robot_codec = NativeCodec(KEY, sender=100)
        self.epoch = 1.8e9  # the operator stamps with its own (wall) clock

    def send(self, message: Message) -> None:
        packet = self.codec.encode(message, self.epoch + self.robot.now())
        decoded = self.robot_codec.decode(packet)
        self.robot.send(decoded.message, decoded.sender)

    def hold(self, message: Message, seconds: float) -> None:
        """Send ``message`` at the operator's spacing for ``seconds``."""
        end = self.robot.now() + seconds
        while self.robot.now() < end:
            self.send(message)
            self.robot.run_for(SPACING)

    def silence(self, seconds: float) -> None:
        self.robot.run_for(seconds)


def moving(robot: SimulatedRobot) -> bool:
    """Whether the cycle drives the tracks, or turns the camera's pan as a command would (a
    Free Look turn pans; at rest the pan may still trim a fraction of a degree of lag)."""
    out = robot.core.control.last_output
    return abs(out.v_left) + abs(out.v_right) > 1e-3 or abs(out.pan_rate) > 0.05


def first_motion(operator: Operator, command: Message) -> float:
    """Seconds from the command's arrival to the first cycle that drives an actuator."""
    robot = operator.robot
    sent = robot.now()
    operator.send(command)
    step = robot.config.link.control_period / 4
    while robot.now() - sent < 1.0:
        robot.run_for(step)
        if moving(robot):
            return robot.now() - sent
    return math.inf


def zero_of(command: Message) -> Message:
    if isinstance(command, FreeLookCommand):
        return FreeLookCommand(0.0, 0.0, 0.0)
    if isinstance(command, TankCommand):
        return TankCommand(0.0, 0.0)
    if isinstance(command, WheelSpeedCommand):
        return WheelSpeedCommand(0.0, 0.0)
    return VelocityCommand(0.0, 0.0)


COMMANDS: dict[str, Message] = {
    "free look forward": FreeLookCommand(0.3, 0.0, 0.0),
    "free look back": FreeLookCommand(-0.3, 0.0, 0.0),
    "free look sideways": FreeLookCommand(0.0, 0.3, 0.0),
    "free look turn": FreeLookCommand(0.0, 0.0, 1.0),
    "tank": TankCommand(0.3, 0.0),
    "tank turn": TankCommand(0.0, 1.0),
    "keyboard": VelocityCommand(0.02, 0.0),
    "velocity": VelocityCommand(0.3, 0.2),
    "wheels": WheelSpeedCommand(0.2, 0.3),
}


def fresh(op: Operator, command: Message) -> None:
    op.hold(Heartbeat(), 1.0)


def after_mode_change(op: Operator, command: Message) -> None:
    other: Message = (
        TankCommand(0.0, 0.0)
        if isinstance(command, FreeLookCommand)
        else FreeLookCommand(0.0, 0.0, 0.0)
    )
    op.hold(other, 1.0)
    op.hold(zero_of(command), 0.2)


def after_a_stop(op: Operator, command: Message) -> None:
    op.hold(command, 1.0)
    op.hold(zero_of(command), 2.0)


def after_estop_release(op: Operator, command: Message) -> None:
    op.hold(zero_of(command), 0.5)
    op.send(EStop(True))
    op.hold(command, 1.0)  # the operator keeps pushing during the e-stop
    op.send(EStop(False))
    op.hold(zero_of(command), 0.2)


def after_link_recovery(op: Operator, command: Message) -> None:
    op.hold(zero_of(command), 0.5)
    op.silence(8.0)  # longer than the watchdog and than the control lease


SITUATIONS: dict[str, Callable[[Operator, Message], None]] = {
    "fresh start": fresh,
    "after a mode change": after_mode_change,
    "after a stop": after_a_stop,
    "after an e-stop release": after_estop_release,
    "after a link recovery": after_link_recovery,
}


@pytest.fixture(scope="module")
def world() -> object:
    return load_world("square")


@pytest.mark.parametrize("situation", list(SITUATIONS))
@pytest.mark.parametrize("name", list(COMMANDS))
def test_first_command_reaches_the_wheels_within_one_cycle(
    world: object, situation: str, name: str
) -> None:
    config = load_robot("pioneer3dx")
    robot = SimulatedRobot(
        config,
        world,  # type: ignore[arg-type]
        seed=11,
        pose=(7.0, 7.0, 0.0),  # open floor all round
        use_localization=False,
    )
    op = Operator(robot)
    op.send(ControlRequest(STATION, 10))  # as every native station does first
    command = COMMANDS[name]
    SITUATIONS[situation](op, command)
    assert not moving(robot)
    delay = first_motion(op, command)
    assert delay <= config.link.control_period + 1e-9, f"{name} {situation}: {delay:.3f} s"


@pytest.mark.parametrize(
    "command", [FreeLookCommand(0.0, 0.0, 1.0), TankCommand(0.0, 0.0, pan_rate=1.0)]
)
def test_a_link_cut_stops_the_camera_as_well_as_the_tracks(world: object, command: Message) -> None:
    config = load_robot("pioneer3dx")
    robot = SimulatedRobot(
        config,
        world,  # type: ignore[arg-type]
        seed=12,
        pose=(7.0, 7.0, 0.0),
        use_localization=False,
    )
    op = Operator(robot)
    op.send(ControlRequest(STATION, 10))
    op.hold(command, 0.5)
    assert abs(robot.core.control.last_output.pan_rate) > 0.5
    op.silence(config.safety.watchdog_timeout + 2 * config.link.control_period)
    assert robot.core.control.last_output.pan_rate == 0.0
    pan = robot.hardware.pan_tilt.state().pan  # type: ignore[union-attr]
    op.silence(1.0)
    assert robot.hardware.pan_tilt.state().pan == pytest.approx(pan, abs=0.02)  # type: ignore[union-attr]
