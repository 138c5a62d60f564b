"""Trajectory references (the thesis eqs. 3.3–3.5) from analytic paths or sampled points.

v_r = ±√(ẋ² + ẏ²), θ_r = atan2(ẏ, ẋ) (+π when reversing), ω_r = (ẋÿ − ẏẍ)/(ẋ² + ẏ²).
A reversing reference drives backwards along the path: its heading is the path tangent plus π
and its speed is negative; ω_r is unchanged (the formula is invariant to that sign).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from freelook.geometry import wrap_angle

__all__ = [
    "AnalyticPath",
    "Reference",
    "SampledPath",
    "TrajectoryReference",
    "ellipse_path",
    "ellipse_points",
    "reference_from_derivatives",
]


@dataclass(frozen=True, slots=True)
class Reference:
    """Reference state at one instant: pose and feed-forward velocities."""

    x: float
    y: float
    theta: float
    v: float
    omega: float


def reference_from_derivatives(
    x: float, y: float, dx: float, dy: float, ddx: float, ddy: float, reverse: bool = False
) -> Reference:
    """Eqs. 3.3–3.5 at one instant."""
    speed_sq = dx * dx + dy * dy
    speed = math.sqrt(speed_sq)
    if speed_sq < 1e-18:
        return Reference(x, y, 0.0, 0.0, 0.0)
    theta = math.atan2(dy, dx)
    omega = (dx * ddy - dy * ddx) / speed_sq
    if reverse:
        return Reference(x, y, wrap_angle(theta + math.pi), -speed, omega)
    return Reference(x, y, theta, speed, omega)


class TrajectoryReference:
    """Anything that gives a :class:`Reference` at time t and has a duration."""

    duration: float

    def at(self, t: float) -> Reference:
        raise NotImplementedError


@dataclass(frozen=True)
class AnalyticPath(TrajectoryReference):
    """A path given as functions of time returning (x, y), (ẋ, ẏ) and (ẍ, ÿ)."""

    position: Callable[[float], tuple[float, float]]
    velocity: Callable[[float], tuple[float, float]]
    acceleration: Callable[[float], tuple[float, float]]
    duration: float
    reverse: bool = False

    def at(self, t: float) -> Reference:
        t = min(max(t, 0.0), self.duration)
        x, y = self.position(t)
        dx, dy = self.velocity(t)
        ddx, ddy = self.acceleration(t)
        return reference_from_derivatives(x, y, dx, dy, ddx, ddy, self.reverse)


class SampledPath(TrajectoryReference):
    """A path through time-stamped points, differentiated with a cubic spline.

    ``periodic`` closes the path smoothly (the last point must equal the first).
    """

    def __init__(
        self,
        t: npt.ArrayLike,
        x: npt.ArrayLike,
        y: npt.ArrayLike,
        *,
        reverse: bool = False,
        periodic: bool = False,
    ) -> None:
        times = np.asarray(t, dtype=np.float64)
        if times.ndim != 1 or len(times) < 2 or np.any(np.diff(times) <= 0):
            raise ValueError("sampled path needs ≥ 2 points with strictly increasing times")
        # imported here: scipy.interpolate costs a robot program ~20 MB it needs only for
        # sampled paths
        from scipy.interpolate import CubicSpline

        bc = "periodic" if periodic else "not-a-knot"
        self._sx = CubicSpline(times, np.asarray(x, dtype=np.float64), bc_type=bc)
        self._sy = CubicSpline(times, np.asarray(y, dtype=np.float64), bc_type=bc)
        self.t0 = float(times[0])
        self.duration = float(times[-1] - times[0])
        self.reverse = reverse

    def at(self, t: float) -> Reference:
        tt = self.t0 + min(max(t, 0.0), self.duration)
        return reference_from_derivatives(
            float(self._sx(tt)),
            float(self._sy(tt)),
            float(self._sx(tt, 1)),
            float(self._sy(tt, 1)),
            float(self._sx(tt, 2)),
            float(self._sy(tt, 2)),
            self.reverse,
        )


def ellipse_path(
    period: float = 40.0,
    a: float = 1.8,
    b: float = 1.0,
    laps: float = 1.0,
    reverse: bool = False,
    centre: tuple[float, float] = (0.0, 0.0),
) -> AnalyticPath:
    """The thesis eq. 6.1: x = a·cos(2πt/T), y = b·sin(2πt/T) (counter-clockwise).

    ``reverse`` drives the same ellipse backwards (clockwise, heading opposite to travel).
    """
    w = 2 * math.pi / period
    sign = -1.0 if reverse else 1.0
    cx, cy = centre

    def position(t: float) -> tuple[float, float]:
        return (cx + a * math.cos(w * t), cy + sign * b * math.sin(w * t))

    def velocity(t: float) -> tuple[float, float]:
        return (-a * w * math.sin(w * t), sign * b * w * math.cos(w * t))

    def acceleration(t: float) -> tuple[float, float]:
        return (-a * w * w * math.cos(w * t), -sign * b * w * w * math.sin(w * t))

    return AnalyticPath(position, velocity, acceleration, period * laps, reverse)


def ellipse_points(
    n: int = 101, period: float = 40.0, a: float = 1.8, b: float = 1.0
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The thesis's sampled ellipse: ``n`` points (t, x, y) over one period, closed."""
    t = np.linspace(0.0, period, n)
    w = 2 * math.pi / period
    return t, a * np.cos(w * t), b * np.sin(w * t)
