"""Linear drive (seed 004 eq. 5.5): shuttle along x between two points, reversing at each end.

The thesis sets v = √(|x_ref − x|·50) with x in mm and v in mm/s; in SI that is
v = √(|x_ref − x|·0.05) m/s, capped at the mode's 400 mm/s. The robot drives forward toward the
far end and backs up toward the near one (it never turns around), like the thesis's shuttle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["LinearDrive", "LinearDriveOutput"]

_GAIN = 0.05  # m/s² (50 mm/s² in the thesis's units)


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
        speed = min(self.max_speed, math.sqrt(abs(remaining) * _GAIN))
        speed = max(speed, self.min_speed)
        direction = math.copysign(1.0, remaining * math.cos(theta)) if math.cos(theta) else 1.0
        return LinearDriveOutput(direction * speed, 0.0, self.target, self.legs_done)
