"""Hardware abstraction: the protocols a robot (simulated or real) implements."""

from freelook.robot.hal._interfaces import (
    Bumpers,
    BumperState,
    Camera,
    DriveBase,
    EncoderSample,
    GyroSample,
    HardwareConnection,
    Odometer,
    OdometrySample,
    PanTiltState,
    PanTiltUnit,
    RangeScan,
    RangeSensor,
    RateGyro,
    RobotHardware,
    WheelEncoders,
)

__all__ = [
    "BumperState",
    "Bumpers",
    "Camera",
    "DriveBase",
    "EncoderSample",
    "GyroSample",
    "HardwareConnection",
    "Odometer",
    "OdometrySample",
    "PanTiltState",
    "PanTiltUnit",
    "RangeScan",
    "RangeSensor",
    "RateGyro",
    "RobotHardware",
    "WheelEncoders",
]
