"""Linear drive (the thesis eq. 5.5): shuttle along x between two points, reversing at each end.

The thesis sets v = √(|x_ref − x|·50) with x in mm and v in mm/s; in SI that is
v = √(|x_ref − x|·0.05) m/s, capped at the mode's 400 mm/s. The robot drives forward toward the
far end and backs up toward the near one (it never turns around), like the thesis's shuttle.
A robot that does not face along x first turns on the spot to the nearer of the two headings
along the x axis, and holds that heading while it shuttles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["LinearDrive", "LinearDriveOutput"]

_GAIN = 0.05  # m/s² (50 mm/s² in the thesis's units)
_HEADING_GAIN = 1.5  # 1/s
_MAX_TURN = math.radians(40.0)
_ALIGNED = math.radians(10.0)  # turn on the spot first beyond this heading error


@dataclass(frozen=True, slots=True)
class LinearDriveOutput:
    v: float
    omega: float
    target: float  # the x the robot is heading for
    legs_done: int


class LinearDrive:
    """Sans-I/O shuttle state machine; call :meth:`update` with the pose every cycle."""

    def __init__(
        self,
        x_start: float,
        x_end: float,
        max_speed: float = 0.4,
        tolerance: float = 0.01,
        min_speed: float = 0.02,
    ) -> None:
        if x_start == x_end:
            raise ValueError("linear drive needs two different points")
        self.x_start = x_start
        self.x_end = x_end
        self.max_speed = max_speed
        self.tolerance = tolerance
        self.min_speed = min_speed
        self.target = x_end
        self.legs_done = 0

    def update(self, x: float, y: float, theta: float) -> LinearDriveOutput:
        """Velocity toward the current end point; switch ends on arrival."""
        del y
        # distance to go, measured along the robot's heading projected on x
        remaining = self.target - x
        if abs(remaining) <= self.tolerance:
            self.legs_done += 1
            self.target = self.x_start if self.target == self.x_end else self.x_end
            remaining = self.target - x
        # hold the heading along x (forward or backward, whichever is nearer)
        along = 0.0 if math.cos(theta) >= 0.0 else math.pi
        error = math.remainder(along - theta, 2 * math.pi)
        omega = max(-_MAX_TURN, min(_MAX_TURN, _HEADING_GAIN * error))
        if abs(error) > _ALIGNED:
            return LinearDriveOutput(0.0, omega, self.target, self.legs_done)
        speed = min(self.max_speed, math.sqrt(abs(remaining) * _GAIN))
        speed = max(speed, self.min_speed)
        direction = math.copysign(1.0, remaining * math.cos(theta))
        return LinearDriveOutput(direction * speed, omega, self.target, self.legs_done)
