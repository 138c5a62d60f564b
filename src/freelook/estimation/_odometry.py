"""Odometry from wheel-encoder counts (exact arcs between samples)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from freelook.geometry import wrap_angle

__all__ = ["Odometry", "OdometryEstimate"]


@dataclass(frozen=True, slots=True)
class OdometryEstimate:
    x: float
    y: float
    theta: float
    v: float
    omega: float  # from the encoders (slips when turning)
    stamp: float


class Odometry:
    """Dead reckoning from cumulative encoder counts (an external yaw increment may be used), or
    from the motion steps a base that integrates its own odometry reports."""

    def __init__(
        self,
        counts_per_rev: int,
        wheel_diameter: float,
        track_width: float,
        pose: tuple[float, float, float] = (0.0, 0.0, 0.0),
    ) -> None:
        self.metres_per_count = math.pi * wheel_diameter / counts_per_rev
        self.track_width = track_width
        self.x, self.y, self.theta = pose
        self._last: tuple[int, int, float] | None = None
        self.v = 0.0
        self.omega = 0.0
        self.stamp = 0.0
        self.distance = 0.0

    @property
    def pose(self) -> tuple[float, float, float]:
        """(x, y, θ) now."""
        return (self.x, self.y, self.theta)

    def update(
        self, left: int, right: int, now: float, yaw_increment: float | None = None
    ) -> OdometryEstimate:
        """Advance with new cumulative counts; ``yaw_increment`` replaces the encoder one."""
        self.advance_counts(left, right, now, yaw_increment)
        return self.estimate()

    def advance_counts(
        self, left: int, right: int, now: float, yaw_increment: float | None = None
    ) -> None:
        """:meth:`update` without building its estimate (the control cycle reads the pose)."""
        last = self._last
        self._last = (left, right, now)
        if last is None:
            self.stamp = now
            return
        l0, r0, t0 = last
        metres_per_count = self.metres_per_count
        dl = (left - l0) * metres_per_count
        dr = (right - r0) * metres_per_count
        ds = 0.5 * (dl + dr)
        encoder_dth = (dr - dl) / self.track_width
        dth = encoder_dth if yaw_increment is None else yaw_increment
        theta = self.theta
        if abs(dth) < 1e-9:
            self.x += ds * math.cos(theta + 0.5 * dth)
            self.y += ds * math.sin(theta + 0.5 * dth)
        else:
            radius = ds / dth
            self.x += radius * (math.sin(theta + dth) - math.sin(theta))
            self.y -= radius * (math.cos(theta + dth) - math.cos(theta))
        self.theta = wrap_angle(theta + dth)
        dt = now - t0
        if dt > 0:
            self.v = ds / dt
            self.omega = encoder_dth / dt
        self.distance += abs(ds)
        self.stamp = now

    def advance(self, step: tuple[float, float, float], now: float, v: float) -> OdometryEstimate:
        """Advance by a motion ``step`` (forward, left, turn) in the robot's frame, as a base
        that integrates its own odometry reports it; ``v`` is its measured speed."""
        dt = now - self.stamp
        c, s = math.cos(self.theta), math.sin(self.theta)
        self.x += c * step[0] - s * step[1]
        self.y += s * step[0] + c * step[1]
        self.theta = wrap_angle(self.theta + step[2])
        self.v = v
        if dt > 0:
            self.omega = step[2] / dt
        self.distance += math.hypot(step[0], step[1])
        self.stamp = now
        return self.estimate()

    def estimate(self) -> OdometryEstimate:
        return OdometryEstimate(self.x, self.y, self.theta, self.v, self.omega, self.stamp)
