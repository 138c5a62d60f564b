"""Click-to-go at the station (sans-I/O): the goal this station sent and what became of it.

The robot drives to the goal itself (``robot/_goal.py``) and reports only its mode; the
station follows that report. A goal is "sent" until the robot reports click-to-go's mode,
"driving" while it does, and when the robot leaves it: "reached" (the reported pose within
the goal's tolerance, a little slack for the report's age), "taken over" (this station sent
a command that ends it: a stick, a key, the e-stop, a mode, a stop), or "stopped short" (the
robot gave up, or its safety held it: it says why in its own log). A goal the robot never
took up ("refused", with the robot's reason when it gave one) is said so too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from freelook.config import RobotConfig
from freelook.link import (
    ArmVelocityCommand,
    EStop,
    FreeLookCommand,
    GoalStop,
    GripperCommand,
    LinearDriveStart,
    LinearDriveStop,
    Message,
    ModeChange,
    TankCommand,
    Telemetry,
    TrajectoryStart,
    TrajectoryStop,
    VelocityCommand,
    WheelSpeedCommand,
)
from freelook.types import Mode

__all__ = ["TAKES_OVER", "GoalState", "StationGoal"]

#: what this station sends that ends a goal on the robot (an engaged e-stop too)
TAKES_OVER = (
    VelocityCommand,
    WheelSpeedCommand,
    TankCommand,
    FreeLookCommand,
    ArmVelocityCommand,
    GripperCommand,
    ModeChange,
    LinearDriveStart,
    LinearDriveStop,
    TrajectoryStart,
    TrajectoryStop,
    GoalStop,
)
#: s a goal may wait for the robot to report driving to it, beyond the link's round trip
TAKE_UP = 2.0
#: m of slack on the tolerance when the reported pose is judged (the report is a little old)
SLACK = 0.1


@dataclass(slots=True)
class GoalState:
    """One goal as this station knows it."""

    x: float
    y: float
    sent_at: float
    state: str = "sent"
    reason: str = ""
    ended_at: float | None = None


class StationGoal:
    """The newest goal this station sent (None before any), followed on the robot's reports."""

    def __init__(self, config: RobotConfig) -> None:
        self.tolerance = config.goal.tolerance
        self.goal: GoalState | None = None

    @property
    def active(self) -> bool:
        """Whether a goal is sent or being driven to."""
        return self.goal is not None and self.goal.state in ("sent", "driving")

    def sent(self, x: float, y: float, now: float) -> None:
        """A goal left for the robot (it replaces any before it)."""
        self.goal = GoalState(x, y, now)

    def _end(self, state: str, now: float, reason: str = "") -> None:
        goal = self.goal
        if goal is not None and self.active:
            goal.state, goal.reason, goal.ended_at = state, reason, now

    def took_over(self, messages: list[Message], now: float) -> None:
        """This station sent ``messages``: one that ends the goal ends it, "taken over"."""
        if not self.active:
            return
        for message in messages:
            stop = isinstance(message, EStop) and message.engaged
            if stop or isinstance(message, TAKES_OVER):
                why = "stopped from the page" if isinstance(message, GoalStop) else ""
                self._end("cancelled" if why else "taken over", now, why)
                return

    def refused(self, reason: str, now: float) -> None:
        """The robot refused the goal, and said why."""
        self._end("refused", now, reason)

    def follow(self, telemetry: Telemetry, now: float, round_trip: float | None) -> None:
        """The robot's report: it drives to the goal, or it stopped doing so."""
        goal = self.goal
        if goal is None or not self.active:
            return
        if telemetry.mode == Mode.GOAL:
            goal.state = "driving"
            return
        if goal.state == "sent":
            if now - goal.sent_at > TAKE_UP + (round_trip or 0.0):
                self._end("refused", now, "the robot did not take the goal up")
            return
        x, y, _ = telemetry.pose
        if math.hypot(goal.x - x, goal.y - y) <= self.tolerance + SLACK:
            self._end("reached", now)
        else:
            self._end("stopped short", now, "the robot stopped driving to it on its own")

    def view(self, now: float) -> dict[str, Any] | None:
        """The goal for the page: where, what became of it, since when (s)."""
        goal = self.goal
        if goal is None:
            return None
        since = goal.sent_at if goal.ended_at is None else goal.ended_at
        return {
            "x": goal.x,
            "y": goal.y,
            "state": goal.state,
            "reason": goal.reason,
            "age": round(max(0.0, now - since), 2),
        }
