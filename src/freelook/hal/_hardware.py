"""One robot's hardware as the robot program gets it, and a device read from a kept value."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from freelook.hal._devices import (
    Arm,
    Bumpers,
    Camera,
    DriveBase,
    HardwareConnection,
    MapSource,
    Odometer,
    PanTiltUnit,
    PoseSource,
    RangeSensor,
    RateGyro,
    WheelEncoders,
)

__all__ = ["LatestReading", "RobotHardware"]


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
