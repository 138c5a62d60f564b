"""Hardware interfaces of the robot program (Kievit-Kylar's "plug-and-play").

The robot program talks to hardware only through these protocols. The simulator implements all
of them; a real robot implements the ones it has (a robot without a pan unit or a gyro still
runs: the robot program asks the HAL what is there). Readings carry the time they were taken, in
the robot's clock, so estimation never guesses.

The package sits below every package that uses it: safety reads its scans, the robot program
its devices, and the backends in :mod:`freelook.hardware` implement them.
"""

from freelook.hal._devices import (
    Arm,
    Bumpers,
    Camera,
    DriveBase,
    EncodedCamera,
    HardwareConnection,
    MapSource,
    Odometer,
    PanTiltUnit,
    PoseSource,
    RangeSensor,
    RateGyro,
    RecoverableConnection,
    WheelEncoders,
)
from freelook.hal._drive import DriveCommand, DriveKind, scale_within
from freelook.hal._hardware import LatestReading, RobotHardware
from freelook.hal._readings import (
    BumperState,
    EncoderSample,
    GyroSample,
    OdometrySample,
    PanTiltState,
    PoseSample,
    RangeScan,
)
from freelook.types import ArmState, GripperState

__all__ = [
    "Arm",
    "ArmState",
    "BumperState",
    "Bumpers",
    "Camera",
    "DriveBase",
    "DriveCommand",
    "DriveKind",
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
    "scale_within",
]
