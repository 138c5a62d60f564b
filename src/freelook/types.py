"""Domain types every layer shares: the robot's drive mode, why safety changed a command, and
the state of an arm and its gripper.

They belong to the robot's domain, not to any wire format: the link encodes them, the robot
program reports them, the operator station and the page show them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, IntFlag

__all__ = ["ArmState", "GripperState", "Mode", "SafetyFlags", "TaskPhase"]


class Mode(IntEnum):
    """Drive modes of the robot program (one source of truth: the robot's telemetry)."""

    IDLE = 0
    VELOCITY = 1
    WHEELS = 2
    TANK = 3
    FREE_LOOK = 4
    KEYBOARD = 5
    LINEAR = 6
    TRAJECTORY = 7
    ARM = 8  # the tracks stand still; the operator jogs the arm and its gripper
    #: the robot runs its task (Kievit-Kylar's bomb disposal); any operator input pauses it
    AUTONOMY = 9
    #: the robot drives itself to a goal the operator clicked (click-to-go)
    GOAL = 10


class TaskPhase(IntEnum):
    """Where the autonomous disposal task (Kievit-Kylar's five phases) stands."""

    IDLE = 0  # no task started
    SEARCH_OBJECT = 1  # turn until the suspicious object's colour is seen
    APPROACH_OBJECT = 2  # visual servoing to within the arm's reach
    GRASP = 3  # reach with the planner, close the gripper, lift
    SEARCH_RECEPTACLE = 4
    APPROACH_RECEPTACLE = 5
    DROP = 6  # the tool over the receptacle, the gripper opens
    DONE = 7
    FAILED = 8


class SafetyFlags(IntFlag):
    """Why the safety layer changed the command (several may hold at once)."""

    NONE = 0
    ZONE = 1
    APPROACH = 2
    WATCHDOG = 4
    ESTOP = 8
    BUMPER = 16
    HARDWARE = 32  # the hardware does not answer (a lost cable or socket): nothing is commanded
    DELAY = 64  # the speed capped to what the link's round trip lets the robot stop from


@dataclass(frozen=True, slots=True)
class ArmState:
    """Joint encoders of an arm: positions (rad or m) and velocities, in ``names`` order (the
    URDF's joint names)."""

    stamp: float
    names: tuple[str, ...]
    positions: tuple[float, ...]
    velocities: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class GripperState:
    """How far the fingers are apart (m) and whether they hold something."""

    stamp: float
    opening: float
    holding: bool
