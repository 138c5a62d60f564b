"""The robot program: hardware interfaces, control cycle, modes, safety and estimation wiring."""

from freelook.robot._core import CycleOutput, RobotCore
from freelook.robot._runner import SimulatedRobot
from freelook.robot._sim_hal import simulated_hardware

__all__ = ["CycleOutput", "RobotCore", "SimulatedRobot", "simulated_hardware"]
