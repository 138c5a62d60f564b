"""Drive kinematics: drive models, Tank and Free Look Control, direction-preserving saturation."""

from freelook.kinematics._commands import WheelCommand
from freelook.kinematics._control_modes import (
    free_look_control,
    free_look_control_batch,
    holonomic_free_look,
    tank_control,
    tank_control_batch,
)
from freelook.kinematics._drive import (
    DriveState,
    camera_pose,
    drive_derivative,
    integrate_drive,
    integrate_holonomic,
    omni_ground_matrix,
    omni_wheel_matrix,
)
from freelook.kinematics._manoeuvres import (
    Segment,
    Trace,
    fig6_segments,
    fig7_object,
    fig7_segments,
    simulate_free_look,
)
from freelook.kinematics._saturation import saturation_factor, saturation_factor_batch

__all__ = [
    "DriveState",
    "Segment",
    "Trace",
    "WheelCommand",
    "camera_pose",
    "drive_derivative",
    "fig6_segments",
    "fig7_object",
    "fig7_segments",
    "free_look_control",
    "free_look_control_batch",
    "holonomic_free_look",
    "integrate_drive",
    "integrate_holonomic",
    "omni_ground_matrix",
    "omni_wheel_matrix",
    "saturation_factor",
    "saturation_factor_batch",
    "simulate_free_look",
    "tank_control",
    "tank_control_batch",
]
