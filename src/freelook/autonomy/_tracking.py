"""A target tracked over frames in the odometry frame (sans-I/O, stamps given).

Sightings arrive in the robot frame; the tracker keeps the target where odometry says it is,
so it stays put while the robot turns and drives. A new target is believed only after
``confirm`` sightings that agree within ``gate``; after that, sightings within the gate are
averaged in (the estimate steadies as the robot closes in), and sightings elsewhere are
ignored. A target not seen within the gate for ``lost_after`` seconds is lost: the behaviour
searches again, and whatever is seen next is a new candidate (a moved object is found where it
now is).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from freelook.autonomy._vision import Sighting
from freelook.geometry import Pose

__all__ = ["Track", "Tracker"]


@dataclass(frozen=True, slots=True)
class Track:
    """A believed target: its centre in the odometry frame and what it looks like.

    ``height`` follows the sightings (smoothed); ``tallest`` is the most any sighting saw. A
    colour blob loses its top to shade or tinted light more often than it gains one, so
    ``tallest`` is the estimate to keep clear of (a rim to pass over)."""

    x: float
    y: float
    width: float
    height: float
    seen: float  # stamp of the newest sighting within the gate
    sightings: int
    tallest: float = 0.0

    def in_robot_frame(self, odom: Pose) -> tuple[float, float]:
        """(x, y) of the target in the robot frame at odometry pose ``odom``."""
        dx, dy = self.x - odom.x, self.y - odom.y
        c, s = math.cos(odom.theta), math.sin(odom.theta)
        return c * dx + s * dy, -s * dx + c * dy


class Tracker:
    """One target's track from a stream of (possibly empty) sightings."""

    def __init__(
        self,
        *,
        gate: float = 0.5,
        confirm: int = 3,
        lost_after: float = 2.0,
        smoothing: float = 0.3,
    ) -> None:
        self.gate = gate
        self.confirm = confirm
        self.lost_after = lost_after
        self.smoothing = smoothing
        self.track: Track | None = None
        self._candidate: Track | None = None
        self.rejected = 0  # sightings outside the gate of a confirmed track

    def reset(self) -> None:
        self.track = None
        self._candidate = None

    def update(self, now: float, odom: Pose, sightings: list[Sighting]) -> Track | None:
        """Take one frame's sightings (robot frame, largest first); the confirmed track."""
        c, s = math.cos(odom.theta), math.sin(odom.theta)
        points = [(odom.x + c * k.x - s * k.y, odom.y + s * k.x + c * k.y, k) for k in sightings]
        if self.track is not None:
            near = _nearest(points, self.track.x, self.track.y, self.gate)
            if near is not None:
                self.track = _blend(self.track, near, now, self.smoothing)
            else:
                self.rejected += len(points)
                if now - self.track.seen > self.lost_after:
                    self.track = None
            return self.track
        candidate = self._candidate
        if candidate is not None and now - candidate.seen > self.lost_after:
            candidate = None
        if candidate is None:
            if points:
                x, y, k = points[0]
                candidate = Track(x, y, k.width, k.height, now, 1, k.height)
        else:
            near = _nearest(points, candidate.x, candidate.y, self.gate)
            if near is not None:
                candidate = _blend(candidate, near, now, 0.5)
            elif points:
                x, y, k = points[0]
                candidate = Track(x, y, k.width, k.height, now, 1, k.height)
        self._candidate = candidate
        if candidate is not None and candidate.sightings >= self.confirm:
            self.track, self._candidate = candidate, None
        return self.track


def _nearest(
    points: list[tuple[float, float, Sighting]], x: float, y: float, gate: float
) -> tuple[float, float, Sighting] | None:
    best, best_d = None, gate
    for p in points:
        d = math.hypot(p[0] - x, p[1] - y)
        if d <= best_d:
            best, best_d = p, d
    return best


def _blend(track: Track, point: tuple[float, float, Sighting], now: float, a: float) -> Track:
    x, y, k = point
    return Track(
        track.x + a * (x - track.x),
        track.y + a * (y - track.y),
        track.width + a * (k.width - track.width),
        track.height + a * (k.height - track.height),
        now,
        track.sightings + 1,
        max(track.tallest, k.height),
    )
