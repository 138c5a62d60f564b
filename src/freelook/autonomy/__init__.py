"""Autonomy on a teleoperated robot (Kievit-Kylar): colour-blob vision on the camera's frames,
targets tracked over frames, and the five-phase bomb-disposal task as a state machine. All of
it sans-I/O: frames, poses and stamps go in, commands come out; the robot program runs it
through the same safety as an operator's commands."""

from freelook.autonomy._perception import Perception
from freelook.autonomy._steps import TaskStep
from freelook.autonomy._task import (
    DisposalTask,
    PhaseRecord,
    TaskCommand,
    TaskInputs,
    TaskSettings,
    phase_durations,
)
from freelook.autonomy._tracking import Track, Tracker
from freelook.autonomy._vision import (
    Blob,
    CameraModel,
    ColorTarget,
    Sighting,
    color_mask,
    detect_blobs,
    hsv,
    locate,
)

__all__ = [
    "Blob",
    "CameraModel",
    "ColorTarget",
    "DisposalTask",
    "Perception",
    "PhaseRecord",
    "Sighting",
    "TaskCommand",
    "TaskInputs",
    "TaskSettings",
    "TaskStep",
    "Track",
    "Tracker",
    "color_mask",
    "detect_blobs",
    "hsv",
    "locate",
    "phase_durations",
]
