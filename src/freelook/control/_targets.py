"""The thesis's reference target generator (the thesis Algorithm 5.2): reach, then advance.

The reference is not a clock: the generator holds one target state (x_r, y_r, θ_r, v_r, ω_r)
from the path's points (eqs. 3.3–3.5 at each point) until the robot's reported position
reaches it, then hands out the next. A robot that falls behind is waited for; one that never
gets there never finishes. The thesis does not say how close "reached" is (its pseudo-code
compares the states for equality, which integer millimetres never meet): ``reach`` is that
radius, and a target the robot has already passed (it lies behind the robot, within
``reach_behind``) counts as reached too, so a point missed by a little is not circled back to.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from freelook.control._reference import Reference, SampledPath

__all__ = ["ReachThenAdvance"]


class ReachThenAdvance:
    """Targets along sampled points, advanced when the reported pose reaches the current one."""

    def __init__(
        self,
        t: npt.ArrayLike,
        x: npt.ArrayLike,
        y: npt.ArrayLike,
        *,
        periodic: bool = False,
        reach: float = 0.05,
        reach_behind: float = 0.3,
    ) -> None:
        if reach <= 0 or reach_behind < 0:
            raise ValueError(f"need reach > 0 and reach_behind ≥ 0, got {reach}, {reach_behind}")
        times = np.asarray(t, dtype=np.float64)
        path = SampledPath(times, x, y, periodic=periodic)
        self.targets: tuple[Reference, ...] = tuple(path.at(float(k - times[0])) for k in times)
        self.reach = reach
        self.reach_behind = reach_behind
        self.index = 0
        self.done = False

    @property
    def target(self) -> Reference:
        """The target the robot is sent toward now (the last one once done)."""
        return self.targets[self.index]

    def _reached(self, ref: Reference, x: float, y: float, theta: float) -> bool:
        dx, dy = ref.x - x, ref.y - y
        distance = math.hypot(dx, dy)
        if distance <= self.reach:
            return True
        ahead = math.cos(theta) * dx + math.sin(theta) * dy
        return distance <= self.reach_behind and ahead < 0.0

    def update(self, x: float, y: float, theta: float) -> Reference | None:
        """The target for a robot reported at (x, y, θ), after advancing past every target it
        has reached; None once the last target is reached."""
        while not self.done and self._reached(self.target, x, y, theta):
            if self.index == len(self.targets) - 1:
                self.done = True
            else:
                self.index += 1
        return None if self.done else self.target
