"""The built-in simulator: worlds, vehicle, sensors, camera and their assembly."""

from freelook.sim._simulator import LaserFrame, Simulator, SonarFrame

__all__ = ["LaserFrame", "Simulator", "SonarFrame"]
