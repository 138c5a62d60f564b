"""Hardware interfaces of the robot program (Kievit-Kylar's "plug-and-play").

The robot program talks to hardware only through these protocols. The simulator implements all
of them; a real robot implements the ones it has (a robot without a pan unit or a gyro still
runs: the robot program asks the HAL what is there). Readings carry the time they were taken, in
the robot's clock, so estimation never guesses. They are named tuples: a control cycle reads
several of them, made afresh at each new reading, and a named tuple costs a third to a half
of a frozen dataclass to make.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, NamedTuple, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from freelook.maps import World
from freelook.types import ArmState, GripperState

__all__ = [
    "Arm",
    "ArmState",
    "BumperState",
    "Bumpers",
    "Camera",
    "DriveBase",
    "EncodedCamera",
    "EncoderSample",
    "GripperState",
    "GyroSample",
    "HardwareConnection",
    "LatestReading",
    "MapSource",
    "Odometer",
    "OdometrySample",
    "PanTiltState",
    "PanTiltUnit",
    "PoseSample",
    "PoseSource",
    "RangeScan",
    "RangeSensor",
    "RateGyro",
    "RecoverableConnection",
    "RobotHardware",
    "WheelEncoders",
]


class RangeScan(NamedTuple):
    """One sweep of a range sensor in the robot frame (x forward, y left, origin at z)."""

    stamp: float
    ranges: npt.NDArray[np.float64]  # m; range_max where nothing was hit
    bearings: npt.NDArray[np.float64]  # rad, robot frame
    origin_x: npt.NDArray[np.float64]  # where each beam starts, robot frame, m
    origin_y: npt.NDArray[np.float64]
    range_max: float
    #: a scan of several lasers merged: its first this many beams are one laser's sweep
    #: (bearings evenly spaced and rising, from one origin), the rest the others' (None: one
    #: laser's, all its sweep)
    sweep: int | None = None

    @property
    def sweep_beams(self) -> int:
        """How many of the first beams are one laser's sweep (:attr:`sweep`)."""
        n = min(len(self.bearings), len(self.ranges))
        return n if self.sweep is None else min(n, self.sweep)

    def points(self) -> npt.NDArray[np.float64]:
        """Hit points (N×2, robot frame) of the beams that returned something."""
        hit = self.ranges < self.range_max
        r = self.ranges[hit]
        b = self.bearings[hit]
        return np.column_stack(
            (self.origin_x[hit] + r * np.cos(b), self.origin_y[hit] + r * np.sin(b))
        )


class GyroSample(NamedTuple):
    stamp: float
    rate: float  # rad/s, counter-clockwise positive
    # the sum of every sample's rate × period since start (the delta-angle output most IMUs
    # give): a reader slower than the gyro, or one that stalled, loses no rotation
    angle: float | None = None


class EncoderSample(NamedTuple):
    stamp: float
    left: int  # cumulative counts
    right: int


class OdometrySample(NamedTuple):
    """A base's own dead reckoning (as a Pioneer's controller reports it in every SIP)."""

    stamp: float
    x: float  # m, in the base's odometry frame (where it was switched on or reset)
    y: float
    theta: float  # rad
    v_left: float  # m/s, measured wheel speeds
    v_right: float


class PoseSample(NamedTuple):
    """A pose from the robot's own localization (a ROS robot's AMCL), in the map's frame."""

    stamp: float  # when the robot stood there (its scan's time), on the robot's clock
    x: float  # m
    y: float
    theta: float  # rad
    std_xy: float  # m, the larger of its position's two standard deviations
    std_theta: float  # rad


class PanTiltState(NamedTuple):
    stamp: float
    pan: float  # rad, relative to the chassis
    tilt: float  # rad


class BumperState(NamedTuple):
    stamp: float
    front: bool
    rear: bool


@runtime_checkable
class DriveBase(Protocol):
    """Wheels or tracks. Differential, tracked and skid-steer bases take wheel speeds; holonomic
    ones a twist."""

    @property
    def kind(self) -> Literal["differential", "tracked", "skid_steer", "holonomic"]: ...

    def command_wheels(self, left: float, right: float) -> None:
        """Track/wheel surface speeds in m/s (differential, tracked and skid-steer bases)."""

    def command_twist(self, vx: float, vy: float, omega: float) -> None:
        """Body velocity (holonomic bases; others use vy = 0)."""


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


@dataclass(frozen=True, slots=True)
class RobotHardware:
    """What one robot has. Absent devices are None; the robot program adapts."""

    drive: DriveBase
    encoders: WheelEncoders | None = None
    pan_tilt: PanTiltUnit | None = None
    gyro: RateGyro | None = None
    laser: RangeSensor | None = None
    sonar: RangeSensor | None = None
    bumpers: Bumpers | None = None
    camera: Camera | None = None
    odometer: Odometer | None = None
    connection: HardwareConnection | None = None  # None: always there (a simulator)
    arm: Arm | None = None
    #: the robot's own localization, taken instead of the program's (None: the program's)
    localization: PoseSource | None = None
    #: the robot's own map, followed as it changes (None: the map the program was given)
    map_source: MapSource | None = None
    #: the cameras of the config's ``[[cameras]]`` by stream id (a stereo pair's frame holds
    #: both eyes side by side, captured at one instant); a stream missing here is not sent
    stream_cameras: Mapping[int, Camera] = field(default_factory=dict)
    #: what this hardware cannot give the program beyond an absent device, one line each
    #: (said at start, e.g. an arm without position sensing that moves in timed chunks)
    notes: tuple[str, ...] = ()


_T = TypeVar("_T")


class LatestReading(Generic[_T]):
    """A device whose newest reading is a value its backend keeps up to date (an odometer or
    bumpers read from a connection's state): :meth:`latest` is whatever ``read()`` gives."""

    __slots__ = ("_read",)

    def __init__(self, read: Callable[[], _T | None]) -> None:
        self._read = read

    def latest(self) -> _T | None:
        return self._read()
