"""Simulated sensors: laser, sonar rings, rate gyro, wheel encoders (noise seeded)."""

from freelook.sim.sensors._sensors import Laser, RateGyro, SonarRing, WheelEncoders

__all__ = [
    "Laser",
    "RateGyro",
    "SonarRing",
    "WheelEncoders",
]
