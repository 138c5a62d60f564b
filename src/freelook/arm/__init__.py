"""The manipulator arm: its model (URDF/SRDF), forward kinematics of its collision boxes and
the box–box separation test (seed 003's anti-collision system)."""

from freelook.arm._kinematics import box_poses, link_transforms, tool_pose
from freelook.arm._model import ArmModel
from freelook.arm._sat import obb_overlap, obb_separation, pair_separations
from freelook.arm._urdf import load_arm, load_urdf

__all__ = [
    "ArmModel",
    "box_poses",
    "link_transforms",
    "load_arm",
    "load_urdf",
    "obb_overlap",
    "obb_separation",
    "pair_separations",
    "tool_pose",
]
