"""The manipulator arm (TAROS 2018): its model from URDF/SRDF, forward kinematics of its
collision boxes, the separating-axis test, the two-phase anti-collision check, and Kievit-Kylar's
gradient-descent reach planner with a damped-least-squares baseline. Everything here is
sans-I/O except the loaders."""

from freelook.arm._guard import ArmDecision, ArmGuard, ArmPhase, PhaseRule
from freelook.arm._kinematics import box_poses, link_transforms, tool_pose
from freelook.arm._model import ArmModel
from freelook.arm._planner import GradientPlanner, Plan, PlanFollower, ReachGoal, dls_ik
from freelook.arm._sat import obb_overlap, obb_separation, pair_separations
from freelook.arm._urdf import load_arm, load_urdf

__all__ = [
    "ArmDecision",
    "ArmGuard",
    "ArmModel",
    "ArmPhase",
    "GradientPlanner",
    "PhaseRule",
    "Plan",
    "PlanFollower",
    "ReachGoal",
    "box_poses",
    "dls_ik",
    "link_transforms",
    "load_arm",
    "load_urdf",
    "obb_overlap",
    "obb_separation",
    "pair_separations",
    "tool_pose",
]
