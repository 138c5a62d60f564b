"""The built-in simulator: worlds, vehicle, sensors, camera and their assembly, for one robot
(:class:`Simulator`) or many robots in one world stepped together (:class:`Fleet`)."""

from freelook.sim._fleet import Fleet
from freelook.sim._simulator import ARM_PERIOD, LaserFrame, Simulator, SonarFrame

__all__ = ["ARM_PERIOD", "Fleet", "LaserFrame", "Simulator", "SonarFrame"]
