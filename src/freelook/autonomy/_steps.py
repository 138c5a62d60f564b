"""The disposal task's steps within a phase, beside :class:`~freelook.types.TaskPhase`."""

from __future__ import annotations

from enum import Enum

__all__ = ["ARM_ORDER", "TaskStep"]


class TaskStep(Enum):
    """A phase's own steps, beside :class:`~freelook.types.TaskPhase`: the search stows the
    arm before it turns; the grasp and the drop move the arm step by step. The value is the
    step's name in outcomes and failures."""

    NONE = ""  # the phase just began
    STOW = "stow"  # the arm high and close before the base turns
    TURN = "turn"  # turn in place until the target is seen
    OPEN = "open"  # the gripper opens
    OVER = "over"  # the tool over the object, or over the receptacle
    DOWN = "down"  # down to the grasp
    CLOSE = "close"  # the gripper closes
    LIFT = "lift"  # to the carrying pose with the object
    RELEASE = "release"  # the gripper opens over the receptacle
    BACK = "back"  # to the carrying pose, empty


#: the grasp's and the drop's steps in the order progress counts them
ARM_ORDER = (
    TaskStep.NONE,
    TaskStep.OPEN,
    TaskStep.OVER,
    TaskStep.DOWN,
    TaskStep.CLOSE,
    TaskStep.LIFT,
    TaskStep.RELEASE,
    TaskStep.BACK,
)
