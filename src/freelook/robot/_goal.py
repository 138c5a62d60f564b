"""Click-to-go on the robot (sans-I/O): the mode that drives to a goal on its own.

The operator clicked a point; the robot drives there by itself (:class:`~freelook.control.
GoalDrive`: straight while clear, around what its range sensors see and remember otherwise),
at the linear drive's speed limit, and safety judges every cycle of it as any other mode's. A
new goal replaces the one in force; a drive command, a stop or the e-stop ends it (the mode
table). The goal is refused while the e-stop is engaged, while the robot searches the map for
its pose, and beyond ``[goal] max_distance``. It ends on its own when reached, or when the
robot came no nearer for ``[goal] give_up`` s; :attr:`GoalDriving.outcome` says which.
"""

from __future__ import annotations

import math

import numpy as np

from freelook.config import RobotConfig
from freelook.control import GoalDrive
from freelook.link import GoalStart
from freelook.robot._estimator import StateEstimator
from freelook.robot._modes import STAND, DriveMode, Intent
from freelook.safety import RangePoints, SafetyFilter
from freelook.types import Mode

__all__ = ["GoalDriving"]


class GoalDriving(DriveMode):
    """Click-to-go: the robot drives itself to the goal it was given."""

    def __init__(
        self, config: RobotConfig, estimator: StateEstimator, safety: SafetyFilter
    ) -> None:
        super().__init__(Mode.GOAL)
        self.config = config
        self.estimator = estimator
        self.safety = safety
        self.drive: GoalDrive | None = None
        #: how the last goal ended: "reached", "given up", or None while one runs (or none ran)
        self.outcome: str | None = None
        self._points = RangePoints(np.zeros((0, 2)), np.zeros((0, 2)))

    def see(self, points: RangePoints) -> None:
        """What the range sensors see, remembered and the map's walls (robot frame), each
        cycle before :meth:`command`."""
        self._points = points

    def refusal(self) -> str | None:
        if self.safety.estop:
            return "click-to-go refused: the e-stop is engaged"
        return None

    def prepare(self, message: GoalStart, now: float) -> str | None:
        """Set up the drive to the goal ``message`` names; why it cannot be, or None."""
        goal = self.config.goal
        if not self.estimator.pose_trusted:
            return "click-to-go refused: the robot is still searching the map for its pose"
        x, y, _ = self.estimator.pose
        far = math.hypot(message.x - x, message.y - y)
        if far > goal.max_distance:
            return (
                f"click-to-go refused: the goal is {far:.1f} m away, "
                f"farther than max_distance {goal.max_distance:g} m"
            )
        fp = self.config.footprint
        self.drive = GoalDrive(
            message.x,
            message.y,
            max_speed=self.config.limits.linear_max_speed,
            half_width=fp.width / 2 + goal.margin,
            front=fp.center_forward + fp.length / 2 + goal.margin,
            tolerance=goal.tolerance,
            lookahead=goal.lookahead,
            give_up=goal.give_up,
        )
        self.drive.stuck(far, now)  # progress counts from here
        self.outcome = None
        return None

    def exit(self, now: float) -> None:
        self.drive = None

    def finished(self, now: float) -> bool:
        return self.outcome is not None

    def command(self, now: float, yaw_rate: float, pan: float) -> Intent:
        drive = self.drive
        if drive is None or self.outcome is not None:
            return STAND
        live, prior = self._points
        points = np.concatenate((live, prior)) if len(prior) else live
        step = drive.update(self.estimator.pose, points)
        if step.reached:
            self.outcome = "reached"
            return STAND
        if drive.stuck(step.distance, now):
            self.outcome = "given up"
            return STAND
        return Intent(step.v, step.omega)
