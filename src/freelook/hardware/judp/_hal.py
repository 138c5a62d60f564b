"""The robot program's hardware interfaces over a :class:`JausClient`.

The drive hands commands to the client and calls ``notify`` so the I/O loop sends them at
once; the odometer reads the client's newest accepted local pose. What the robot's JAUS side
cannot give (no wheel encoders through JAUS, no pose sensor, an arm without position sensing)
is said in the hardware's ``notes``.
"""

from __future__ import annotations

from collections.abc import Callable

from freelook.hal import (
    Arm,
    DriveCommand,
    DriveKind,
    HardwareConnection,
    OdometrySample,
    RobotHardware,
)
from freelook.hardware.judp._client import JausClient
from freelook.hardware.judp._options import (
    LOCAL_POSE_SENSOR,
    MANIPULATOR_JOINT_POSITION_SENSOR,
    PRIMITIVE_MANIPULATOR,
    VELOCITY_STATE_SENSOR,
)

__all__ = ["jaus_hardware", "jaus_notes"]


class _Drive:
    """A base behind JAUS's velocity commands: it reads the twist (vy on a holonomic base)."""

    def __init__(
        self,
        client: JausClient,
        kind: DriveKind,
        notify: Callable[[], None],
        clock: Callable[[], float],
    ) -> None:
        self._client = client
        self._kind: DriveKind = kind
        self._holonomic = kind == "holonomic"
        self._notify = notify
        self._clock = clock

    @property
    def kind(self) -> DriveKind:
        return self._kind

    def command(self, command: DriveCommand) -> None:
        vy = command.vy if self._holonomic else 0.0
        self._client.command(command.v, vy, command.omega, self._clock())
        self._notify()


class _Odometer:
    def __init__(self, client: JausClient) -> None:
        self._client = client

    def latest(self) -> OdometrySample | None:
        return self._client.odometry


def jaus_notes(client: JausClient, arm_note: str | None) -> tuple[str, ...]:
    """What the robot's JAUS side takes away from the program, one line each."""
    notes = ["no wheel encoders through JAUS"]
    if LOCAL_POSE_SENSOR in client.services:
        notes[0] += ": the odometry is the robot's own local pose (Local Pose Sensor)"
        if VELOCITY_STATE_SENSOR not in client.services:
            notes.append("no Velocity State Sensor: speeds from successive local poses")
    else:
        notes[0] += (
            " and no Local Pose Sensor: no odometry, so no odometry-based localization "
            "(unless another sensor provides it)"
        )
    if client.has_arm and arm_note is not None:
        notes.append(arm_note)
    if MANIPULATOR_JOINT_POSITION_SENSOR in client.services and not client.has_arm:
        notes.append("a joint position sensor but no Primitive Manipulator: the arm is not driven")
    if PRIMITIVE_MANIPULATOR not in client.services:
        notes.append("no Primitive Manipulator: no arm")
    return tuple(notes)


def jaus_hardware(
    client: JausClient,
    connection: HardwareConnection,
    *,
    kind: DriveKind,
    notify: Callable[[], None],
    clock: Callable[[], float],
    arm: Arm | None = None,
    arm_note: str | None = None,
) -> RobotHardware:
    """The HAL of a discovered JAUS robot: drive, odometer (with a Local Pose Sensor), arm."""
    odometer = _Odometer(client) if LOCAL_POSE_SENSOR in client.services else None
    return RobotHardware(
        drive=_Drive(client, kind, notify, clock),
        odometer=odometer,
        connection=connection,
        arm=arm,
        notes=jaus_notes(client, arm_note),
    )
