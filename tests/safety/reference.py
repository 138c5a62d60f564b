"""The safety layer's sensor geometry and obstacle memory in plain numpy: the statements the
compiled loops are checked against.

The loops and these agree except where a point lies within a few ulps of a decision's edge (a
beam's rounding edge, a cone's side, a sweep's end): numpy's ``arctan2`` may run vectorised
code of its own, a few ulps from the C library's that the loops call. The ``near_*`` masks
mark the points within ``band`` of an edge, where a test accepts either answer.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from freelook.geometry import Pose

__all__ = [
    "NumpyMemory",
    "in_sonar_cones",
    "near_beam_edge",
    "near_cone_side",
    "near_sweep_end",
    "outside_sweep",
    "seen_through",
]

_Array = npt.NDArray[np.float64]
_Mask = npt.NDArray[np.bool_]
_Cones = tuple[_Array, _Array, _Array, _Array]
_Sweep = tuple[_Array, _Array, tuple[float, float]]
#: radians (or beams, for a rounding edge) within which the two forms may differ
BAND = 1e-9


def seen_through(
    points: _Array,
    bearings: _Array,
    ranges: _Array,
    origin: tuple[float, float],
    tolerance: float = 0.1,
) -> _Mask:
    """The points a sweep passes beyond: their bearing's nearest beam reaches further."""
    beams = min(len(bearings), len(ranges))
    if beams < 2 or not len(points):
        return np.zeros(len(points), dtype=bool)
    dx, dy = points[:, 0] - origin[0], points[:, 1] - origin[1]
    step = float(bearings[1] - bearings[0])
    with np.errstate(invalid="ignore"):
        index = np.rint((np.arctan2(dy, dx) - bearings[0]) / step)
        inside = (index >= 0) & (index < beams)
    beam_range = np.full(len(index), -np.inf)
    beam_range[inside] = ranges[index[inside].astype(np.int64)]
    return np.asarray(inside & (beam_range > np.hypot(dx, dy) + tolerance), dtype=bool)


def near_beam_edge(
    points: _Array, bearings: _Array, origin: tuple[float, float], band: float = BAND
) -> _Mask:
    """The points whose bearing lies within ``band`` beams of a rounding edge between two."""
    dx, dy = points[:, 0] - origin[0], points[:, 1] - origin[1]
    q = (np.arctan2(dy, dx) - bearings[0]) / (bearings[1] - bearings[0])
    return np.asarray(np.abs(q - np.floor(q) - 0.5) < band)


def in_sonar_cones(
    points: _Array, sonar: _Cones, half_cone: float, tolerance: float = 0.1
) -> _Mask:
    """The points inside a cone nearer than its reading."""
    n = min(len(a) for a in sonar)
    if not len(points) or not n:
        return np.zeros(len(points), dtype=bool)
    ox, oy, bearing, reach = (a[:n] for a in sonar)
    dx = points[None, :, 0] - ox[:, None]
    dy = points[None, :, 1] - oy[:, None]
    off = np.abs(np.angle(np.exp(1j * (np.arctan2(dy, dx) - bearing[:, None]))))
    inside = (off < half_cone) & (np.hypot(dx, dy) < reach[:, None] - tolerance)
    return np.asarray(inside.any(axis=0))


def near_cone_side(points: _Array, sonar: _Cones, half_cone: float, band: float = BAND) -> _Mask:
    """The points within ``band`` radians of a cone's side (however far)."""
    ox, oy, bearing, _ = sonar
    dx = points[None, :, 0] - ox[:, None]
    dy = points[None, :, 1] - oy[:, None]
    off = np.abs(np.angle(np.exp(1j * (np.arctan2(dy, dx) - bearing[:, None]))))
    return np.asarray((np.abs(off - half_cone) < band).any(axis=0))


def outside_sweep(points: _Array, origin: tuple[float, float], first: float, last: float) -> _Mask:
    """The points outside the bearings [first, last] seen from ``origin``."""
    bearing = np.arctan2(points[:, 1] - origin[1], points[:, 0] - origin[0])
    return np.asarray((bearing < first) | (bearing > last))


def near_sweep_end(
    points: _Array, origin: tuple[float, float], first: float, last: float, band: float = BAND
) -> _Mask:
    """The points within ``band`` radians of a sweep's first or last bearing."""
    bearing = np.arctan2(points[:, 1] - origin[1], points[:, 0] - origin[0])
    return np.asarray((np.abs(bearing - first) < band) | (np.abs(bearing - last) < band))


class NumpyMemory:
    """The obstacle memory's control cycle in numpy, one step at a time."""

    def __init__(self, seconds: float, reach: float, cell: float = 0.05) -> None:
        self.seconds, self.reach, self.cell = seconds, reach, cell
        self.xy = np.zeros((0, 2))
        self.stamp = np.zeros(0)
        self.laser = np.zeros(0, dtype=bool)
        self.last_sample: float | None = None

    def to_robot(self, odometry: Pose) -> _Array:
        x, y, theta = odometry
        c, s = math.cos(theta), math.sin(theta)
        dx, dy = self.xy[:, 0] - x, self.xy[:, 1] - y
        return np.column_stack((c * dx + s * dy, -s * dx + c * dy))

    def forget(self, gone: _Mask) -> None:
        keep = ~gone
        self.xy, self.stamp, self.laser = self.xy[keep], self.stamp[keep], self.laser[keep]

    def observe(self, fresh: _Array, laser_count: int, odometry: Pose, now: float) -> None:
        """Take in ``fresh`` readings (robot frame, the laser's first); one point per grid cell
        and source, the newest."""
        self.last_sample = now
        x, y, theta = odometry
        c, s = math.cos(theta), math.sin(theta)
        world = np.column_stack(
            (x + c * fresh[:, 0] - s * fresh[:, 1], y + s * fresh[:, 0] + c * fresh[:, 1])
        )
        xy = np.vstack((world, self.xy))
        stamp = np.concatenate((np.full(len(fresh), now), self.stamp))
        is_laser = np.concatenate((np.arange(len(fresh)) < laser_count, self.laser))
        with np.errstate(invalid="ignore"):
            near = (stamp > now - self.seconds) & (
                np.hypot(xy[:, 0] - x, xy[:, 1] - y) < self.reach
            )
        xy, stamp, is_laser = xy[near], stamp[near], is_laser[near]
        keys = np.floor(xy / self.cell).astype(np.int64)
        code = (keys[:, 0] * 1_000_003 + keys[:, 1]) * 2 + is_laser
        _, first = np.unique(code, return_index=True)
        self.xy, self.stamp, self.laser = xy[first], stamp[first], is_laser[first]

    def update(
        self,
        odometry: Pose,
        now: float,
        laser_points: _Array,
        sonar_points: _Array,
        sweep: _Sweep | None,
        cones: _Cones | None,
        half_cone: float,
        tolerance: float = 0.1,
    ) -> _Array:
        """Clear what the sweep sees through and the cones hear beyond, take in the readings
        when due, forget the old; the young points outside the sweep's view."""
        if sweep is not None and self.laser.any():
            bearings, ranges, origin = sweep
            passed = seen_through(self.to_robot(odometry), bearings, ranges, origin, tolerance)
            self.forget(passed & self.laser)
        if cones is not None and len(self.xy):
            self.forget(in_sonar_cones(self.to_robot(odometry), cones, half_cone, tolerance))
        if self.last_sample is None or now - self.last_sample >= 0.1:
            self.observe(np.vstack((laser_points, sonar_points)), len(laser_points), odometry, now)
        young = self.stamp > now - self.seconds
        self.xy, self.stamp, self.laser = self.xy[young], self.stamp[young], self.laser[young]
        local = self.to_robot(odometry)
        if sweep is None or not len(sweep[0]):
            return local
        bearings, _, origin = sweep
        kept: _Array = local[outside_sweep(local, origin, bearings[0], bearings[-1])]
        return kept
