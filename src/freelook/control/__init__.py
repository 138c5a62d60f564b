"""Controllers: Free Look Control, trajectory references and tracking, velocity limits, linear
drive, keyboard."""

from freelook.control._free_look import (
    CameraCommand,
    CameraReference,
    FreeLookController,
)
from freelook.control._goal import GoalDrive, GoalStep
from freelook.control._keyboard import KeyboardDrive, KeyboardKey
from freelook.control._limits import limit_velocity, thesis_limit_velocity
from freelook.control._linear import LinearDrive, LinearDriveOutput
from freelook.control._reference import (
    AnalyticPath,
    Reference,
    SampledPath,
    TrajectoryReference,
    ellipse_path,
    ellipse_points,
    reference_from_derivatives,
)
from freelook.control._targets import ReachThenAdvance
from freelook.control._tracking import TrackingController, TrackingErrors

__all__ = [
    "AnalyticPath",
    "CameraCommand",
    "CameraReference",
    "FreeLookController",
    "GoalDrive",
    "GoalStep",
    "KeyboardDrive",
    "KeyboardKey",
    "LinearDrive",
    "LinearDriveOutput",
    "ReachThenAdvance",
    "Reference",
    "SampledPath",
    "TrackingController",
    "TrackingErrors",
    "TrajectoryReference",
    "ellipse_path",
    "ellipse_points",
    "limit_velocity",
    "reference_from_derivatives",
    "thesis_limit_velocity",
]
