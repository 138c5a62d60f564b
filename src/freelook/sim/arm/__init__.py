"""The manipulator arm in the simulator: lagging velocity-controlled joints with limits,
encoders, and a gripper that picks up, carries and drops world objects."""

from freelook.sim.arm._arm import SimulatedArm
from freelook.sim.arm._objects import ArmObject, objects_from_world

__all__ = ["ArmObject", "SimulatedArm", "objects_from_world"]
