"""The robot's motion as its JAUS pose and velocity reports tell it, each report checked.

Reports arrive in JAUS's z-down frame (y right, yaw clockwise) and leave in freelook's (y left,
counter-clockwise). A report that lacks a field, says the robot is where the position field
saturates, or moves it faster than it can go (over the time since the pose it is measured from,
whatever the reports' rate) is dropped and counted, never believed.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from typing import TYPE_CHECKING

from freelook.hal import OdometrySample
from freelook.judp import POSITION, LocalPose, VelocityState

if TYPE_CHECKING:
    from freelook.hardware.judp._options import ClientOptions

__all__ = ["ReportedMotion"]

_SPEED_BASELINE = 0.2  # s: speeds from successive poses span at least this much
_HALF_STEP = (POSITION.upper - POSITION.lower) / POSITION.steps
#: m a pose may move beyond what the robot's speed allows since the anchor: arrival jitter
#: (a report that came a little early) and the position field's resolution
_JUMP_SLACK = 0.02


def _robot_time(stamp: int | None, now: float) -> float:
    """Seconds into the month of a JAUS time stamp (ms bits 0–9, s 10–15, min 16–21, h 22–26,
    day 27–31), or ``now`` without one."""
    if stamp is None:
        return now
    ms, sec = stamp & 0x3FF, stamp >> 10 & 0x3F
    minute, hour, day = stamp >> 16 & 0x3F, stamp >> 22 & 0x1F, stamp >> 27 & 0x1F
    return (((day * 24 + hour) * 60 + minute) * 60 + sec) + ms / 1000.0


class ReportedMotion:
    """The newest odometry sample and body velocity the robot reported; refusals are counted
    in ``dropped`` (the client's)."""

    def __init__(self, options: ClientOptions, dropped: Counter[str]) -> None:
        self.options = options
        self.dropped = dropped
        self.odometry: OdometrySample | None = None
        self.velocity: tuple[float, float, float] | None = None  # vx, vy, ω (freelook frame)
        # the pose a report's jump is measured from (t, x, y): moved on at most once a sensor
        # period, so reports at any rate are held to the robot's speed over the time they span
        self._anchor: tuple[float, float, float] | None = None
        # recent accepted poses (the robot's time if it stamps them, else arrival), for speeds
        self._poses: deque[tuple[float, float, float, float]] = deque(maxlen=64)

    def on_pose(self, pose: LocalPose, now: float, velocity_sensor: bool) -> None:
        """A pose report; its wheel speeds from the velocity reports when the robot has a
        ``velocity_sensor`` and one came, else from successive poses."""
        if pose.x is None or pose.y is None or pose.yaw is None:
            self.dropped["ReportLocalPose without X, Y and Yaw"] += 1
            return
        if max(abs(pose.x), abs(pose.y)) >= POSITION.upper - _HALF_STEP:
            self.dropped["ReportLocalPose out of range (saturated position)"] += 1
            return
        x, y, theta = pose.x, -pose.y, -pose.yaw
        anchor = self._anchor
        if anchor is not None:
            dt = now - anchor[0]
            jump = math.hypot(x - anchor[1], y - anchor[2])
            if jump > self._speed_bound() * max(dt, 0.0) + _JUMP_SLACK:
                self.dropped["ReportLocalPose out of range (a jump faster than the robot)"] += 1
                return
        if anchor is None or now - anchor[0] >= self.options.sensor_period:
            self._anchor = (now, x, y)
        if self.velocity is not None and velocity_sensor:
            v, _, omega = self.velocity
        else:
            v, omega = self._pose_speeds(_robot_time(pose.timestamp, now), x, y, theta)
        half = omega * self.options.track_width / 2.0
        self.odometry = OdometrySample(now, x, y, theta, v - half, v + half)

    def _pose_speeds(self, t: float, x: float, y: float, theta: float) -> tuple[float, float]:
        """Forward speed and yaw rate over at least :data:`_SPEED_BASELINE` of poses (a
        burst of late datagrams then skews them little)."""
        poses = self._poses
        if poses and not 0.0 <= t - poses[-1][0] < 60.0:
            poses.clear()  # the robot's clock jumped (or a new month): start again
        poses.append((t, x, y, theta))
        old = next((p for p in reversed(poses) if t - p[0] >= _SPEED_BASELINE), None)
        if old is None:
            old = poses[0]
        dt = t - old[0]
        if dt <= 0.0:
            return 0.0, 0.0
        heading = old[3] + math.remainder(theta - old[3], math.tau) / 2.0
        forward = (x - old[1]) * math.cos(heading) + (y - old[2]) * math.sin(heading)
        return forward / dt, math.remainder(theta - old[3], math.tau) / dt

    def on_velocity(self, state: VelocityState) -> None:
        """A velocity report."""
        if state.vx is None or state.yaw_rate is None:
            self.dropped["ReportVelocityState without Velocity_X and YawRate"] += 1
            return
        vy = state.vy or 0.0
        if max(abs(state.vx), abs(vy)) > self._speed_bound():
            self.dropped["ReportVelocityState out of range (faster than the robot)"] += 1
            return
        if abs(state.yaw_rate) > 2.0 * self.options.max_turn_rate + 0.1:
            self.dropped["ReportVelocityState out of range (turning faster than the robot)"] += 1
            return
        self.velocity = (state.vx, -vy, -state.yaw_rate)

    def _speed_bound(self) -> float:
        return 2.0 * self.options.max_speed + 0.1
