"""Simulated sensors: laser, sonar rings, rate gyro, wheel encoders (noise seeded)."""

from freelook.sim.sensors._sensors import (
    Laser,
    NormalsAhead,
    RateGyro,
    SonarRing,
    WheelEncoders,
    laser_params,
    laser_scan,
    spoil_returns,
)

__all__ = [
    "Laser",
    "NormalsAhead",
    "RateGyro",
    "SonarRing",
    "WheelEncoders",
    "laser_params",
    "laser_scan",
    "spoil_returns",
]
