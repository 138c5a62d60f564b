"""Driving to a clicked goal (sans-I/O): straight while the way there is clear, else along the
clear heading nearest the goal's bearing, among the obstacle points the range sensors see.

Each cycle :meth:`GoalDrive.update` takes the robot's pose and the obstacle points around it
(robot frame: what the laser and sonar see now, what the robot remembers and its map's walls)
and answers (v, ω). A heading is clear for the distance the footprint, widened by a margin, can
travel along it before a point is in its way. The way to the goal is taken while it is clear
for the lookahead (or to the goal, when nearer); otherwise the robot heads for the clear
heading nearest the goal's bearing, keeping to the side it chose while it goes round (it does
not swing from one side of an obstacle to the other). The speed is the linear drive's law,
v = √(0.05·d) capped at the mode's speed, with d the distance to go or the clear distance,
whichever is shorter; beyond 45 degrees off its heading the robot turns on the spot. Safety
judges whatever this asks, after it.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from freelook.control._linear import _GAIN, _HEADING_GAIN, _MAX_TURN

__all__ = ["GoalDrive", "GoalStep"]

#: the headings judged, every 5 degrees all round (robot frame)
_HEADINGS = np.radians(np.arange(-180.0, 180.0, 5.0))
_COS, _SIN = np.cos(_HEADINGS), np.sin(_HEADINGS)
#: rad a heading on the other side of the goal's bearing is counted farther (while going round)
_SIDE_PENALTY = math.radians(40.0)
_DRIVE_WITHIN = math.radians(45.0)  # heading error beyond which the robot turns on the spot
_PROGRESS = 0.05  # m nearer that counts as progress (against give_up)


class GoalStep(NamedTuple):
    """What the goal drive asks for this cycle, and why."""

    v: float
    omega: float
    #: the goal is within tolerance (the drive asks for nothing more)
    reached: bool = False
    #: the way to the goal is clear (False: going round, or no way seen)
    straight: bool = True
    #: the heading aimed at (robot frame, rad)
    heading: float = 0.0
    distance: float = 0.0  # m to the goal


class GoalDrive:
    """One goal: where it is (map frame), how the robot may drive to it, and whether it went
    round an obstacle or got stuck."""

    def __init__(
        self,
        x: float,
        y: float,
        *,
        max_speed: float,
        half_width: float,
        front: float,
        tolerance: float = 0.15,
        lookahead: float = 1.2,
        give_up: float = 30.0,
    ) -> None:
        """``half_width``: half the footprint's width plus the margin kept; ``front``: how far
        the footprint reaches ahead of the robot's reference point, plus the margin."""
        if not (math.isfinite(x) and math.isfinite(y)):
            raise ValueError(f"goal ({x}, {y}) is not a finite point")
        self.x, self.y = x, y
        self.max_speed = max_speed
        self.half_width = half_width
        self.front = front
        self.tolerance = tolerance
        self.lookahead = lookahead
        self.give_up = give_up
        self._side = 0.0  # the side it goes round on (+1 left, −1 right, 0 none)
        self._best: tuple[float, float] | None = None  # nearest distance so far, and when
        self.detours = 0  # times it turned off the way to the goal

    def clear_distances(self, points: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """For each of the judged headings, how far the widened footprint can travel along it
        before a point is in its way (inf: nothing is)."""
        if len(points) == 0:
            return np.full(_HEADINGS.shape, np.inf)
        px, py = points[:, 0], points[:, 1]
        along = np.outer(_COS, px) + np.outer(_SIN, py)
        across = np.outer(-_SIN, px) + np.outer(_COS, py)
        blocking = (along > 0.0) & (np.abs(across) < self.half_width)
        reach = np.where(blocking, along - self.front, np.inf)
        out: npt.NDArray[np.float64] = np.maximum(reach.min(axis=1), 0.0)
        return out

    def stuck(self, distance: float, now: float) -> bool:
        """Whether the robot has come no nearer for ``give_up`` s."""
        best = self._best
        if best is None or distance < best[0] - _PROGRESS:
            self._best = (distance, now)
            return False
        return now - best[1] > self.give_up

    def update(self, pose: tuple[float, float, float], points: npt.NDArray[np.float64]) -> GoalStep:
        """(v, ω) toward the goal from ``pose`` (map frame), around ``points`` (N×2, robot
        frame)."""
        x, y, theta = pose
        dx, dy = self.x - x, self.y - y
        distance = math.hypot(dx, dy)
        if distance <= self.tolerance:
            return GoalStep(0.0, 0.0, reached=True, distance=distance)
        bearing = math.remainder(math.atan2(dy, dx) - theta, 2 * math.pi)
        needed = min(distance, self.lookahead)
        ahead = self._clear_along(bearing, points)
        if ahead >= needed:
            self._side = 0.0
            return self._steer(bearing, min(distance, ahead), distance, straight=True)
        clear = self.clear_distances(points)
        off = np.remainder(_HEADINGS - bearing + math.pi, 2 * math.pi) - math.pi
        cost = np.abs(off)
        if self._side:  # going round already: the other side counts farther
            cost = cost + np.where(np.sign(off) == -self._side, _SIDE_PENALTY, 0.0)
        cost = np.where(clear >= needed, cost, np.inf)
        k = int(np.argmin(cost))
        if not math.isfinite(float(cost[k])):  # nothing clear that far: turn to look round
            turn = self._side if self._side else (1.0 if bearing >= 0 else -1.0)
            return GoalStep(
                0.0, turn * _MAX_TURN, straight=False, heading=bearing, distance=distance
            )
        if self._side == 0.0:
            self.detours += 1
        self._side = 1.0 if off[k] > 0 else -1.0
        heading = float(_HEADINGS[k])
        return self._steer(heading, min(distance, float(clear[k])), distance, straight=False)

    def _clear_along(self, heading: float, points: npt.NDArray[np.float64]) -> float:
        """:meth:`clear_distances` for one heading."""
        if len(points) == 0:
            return math.inf
        c, s = math.cos(heading), math.sin(heading)
        along = c * points[:, 0] + s * points[:, 1]
        across = -s * points[:, 0] + c * points[:, 1]
        blocking = (along > 0.0) & (np.abs(across) < self.half_width)
        if not blocking.any():
            return math.inf
        return max(0.0, float(along[blocking].min()) - self.front)

    def _steer(self, heading: float, room: float, distance: float, *, straight: bool) -> GoalStep:
        """Turn toward ``heading`` (robot frame) and drive when facing it, at the linear
        drive's law over ``room`` m."""
        omega = max(-_MAX_TURN, min(_MAX_TURN, _HEADING_GAIN * heading))
        if abs(heading) > _DRIVE_WITHIN:
            return GoalStep(0.0, omega, straight=straight, heading=heading, distance=distance)
        v = min(self.max_speed, math.sqrt(room * _GAIN)) * math.cos(heading)
        return GoalStep(v, omega, straight=straight, heading=heading, distance=distance)
