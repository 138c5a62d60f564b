"""Click-to-go's messages (operator → robot): a goal the robot drives to on its own, and its
stop. Like a linear drive's start, a goal's start carries an expiry (a late one is refused,
never driven to late); once taken, the goal holds until it is reached, replaced, stopped or
taken over, fed by whatever the station in control sends (a heartbeat will do)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GoalStart", "GoalStop"]


@dataclass(frozen=True, slots=True)
class GoalStart:
    """Drive on its own to (x, y) on the robot's map (m), around what its range sensors see,
    under its own safety; a new one replaces it, any drive command or the e-stop ends it."""

    x: float
    y: float


@dataclass(frozen=True, slots=True)
class GoalStop:
    """Stop driving to the goal (the robot stands)."""
