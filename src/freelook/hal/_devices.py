"""The devices a robot may have, as protocols: a backend implements the ones its robot has."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from freelook.config import DriveKind
from freelook.hal._drive import DriveCommand
from freelook.hal._readings import (
    BumperState,
    EncoderSample,
    GyroSample,
    OdometrySample,
    PanTiltState,
    PoseSample,
    RangeScan,
)
from freelook.maps import World
from freelook.types import ArmState, GripperState

__all__ = [
    "Arm",
    "Bumpers",
    "Camera",
    "DriveBase",
    "EncodedCamera",
    "HardwareConnection",
    "MapSource",
    "Odometer",
    "PanTiltUnit",
    "PoseSource",
    "RangeSensor",
    "RateGyro",
    "RecoverableConnection",
    "WheelEncoders",
]


@runtime_checkable
class DriveBase(Protocol):
    """Wheels or tracks. Each cycle's :class:`DriveCommand` carries both forms: a base that
    takes a twist (holonomic, or behind a velocity interface) reads (v, vy, ω), one that takes
    track speeds reads (v_left, v_right)."""

    @property
    def kind(self) -> DriveKind: ...

    def command(self, command: DriveCommand) -> None:
        """This cycle's drive command, in the form the base takes it."""


@runtime_checkable
class PanTiltUnit(Protocol):
    @property
    def has_pan(self) -> bool: ...

    @property
    def has_tilt(self) -> bool: ...

    def command_rates(self, pan_rate: float, tilt_rate: float) -> None:
        """Pan and tilt rates in rad/s."""

    def state(self) -> PanTiltState:
        """Measured pan and tilt angles."""
        ...


@runtime_checkable
class RangeSensor(Protocol):
    @property
    def name(self) -> str: ...

    def latest(self) -> RangeScan | None:
        """The newest complete scan, or None before the first."""
        ...


@runtime_checkable
class RateGyro(Protocol):
    def latest(self) -> GyroSample | None: ...


@runtime_checkable
class WheelEncoders(Protocol):
    @property
    def counts_per_rev(self) -> int: ...

    @property
    def wheel_diameter(self) -> float: ...

    def latest(self) -> EncoderSample | None: ...


@runtime_checkable
class Odometer(Protocol):
    """A base that integrates its own odometry; the robot program uses it without encoders."""

    def latest(self) -> OdometrySample | None: ...


@runtime_checkable
class PoseSource(Protocol):
    """The robot's own localization: the program takes its pose instead of running its own
    particle filter, and carries it forward by odometry between two of its poses."""

    def latest(self) -> PoseSample | None: ...


@runtime_checkable
class MapSource(Protocol):
    """The robot's own map as its mapping or map server publishes it: the program follows it,
    a map other than the one in use (another object) replacing it."""

    def latest(self) -> World | None: ...


@runtime_checkable
class HardwareConnection(Protocol):
    """Hardware behind a cable or socket: whether it answers, and what is wrong if not."""

    @property
    def connected(self) -> bool: ...

    @property
    def status(self) -> str:
        """A short human-readable state, e.g. "connected to 127.0.0.1:8101" or why not."""
        ...


@runtime_checkable
class RecoverableConnection(Protocol):
    """A connection whose fault holds until the operator's deliberate act (a JAUS robot's
    lost control): the robot program calls :meth:`recover` when the e-stop is released."""

    def recover(self) -> None:
        """Try again (ask for control anew); nothing when there is no fault to recover from."""
        ...


@runtime_checkable
class Bumpers(Protocol):
    def latest(self) -> BumperState | None: ...


@runtime_checkable
class Camera(Protocol):
    def capture(self) -> npt.NDArray[np.uint8] | None:
        """The newest RGB frame (H×W×3), or None when there is none yet."""
        ...


@runtime_checkable
class EncodedCamera(Protocol):
    """A camera whose frames come compressed (a network camera, a ROS ``CompressedImage``):
    the server sends them as they came instead of decoding and encoding them again."""

    def capture_jpeg(self, quality: int) -> tuple[bytes, int, int] | None:
        """The newest frame not taken yet as (JPEG, width, height), encoded at ``quality`` only
        if it did not come as JPEG; None when nothing new came."""
        ...


@runtime_checkable
class Arm(Protocol):
    """A manipulator arm with a gripper: joints jogged by velocity, encoders read back.

    A command holds until the next one; the arm's own limits apply below it (the robot program
    runs the anti-collision check above it). Non-finite commands stop the arm.
    """

    @property
    def joint_names(self) -> tuple[str, ...]:
        """The jogged joints, in the order of velocity commands and states (URDF names)."""
        ...

    def command_velocities(self, velocities: Sequence[float]) -> None:
        """Joint velocities, rad/s (revolute) or m/s (prismatic), in ``joint_names`` order."""

    def state(self) -> ArmState:
        """Joint positions and velocities as the encoders read them."""
        ...

    def command_gripper(self, opening: float) -> None:
        """Open or close the fingers to ``opening`` metres apart (0: closed)."""

    def gripper_state(self) -> GripperState: ...
