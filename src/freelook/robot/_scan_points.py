"""Range readings as obstacle points, worked out once per reading.

The control cycle (50 Hz) outpaces the sonar ring (25 Hz) and meets a laser scan twice now and
then, so the points of a reading the cycle has seen before are handed back as they were. A
HAL may wrap the same reading in a new :class:`RangeScan` at every call: a reading is the same
when its ranges are equal and its bearings and beam origins are the same arrays.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import numpy.typing as npt

from freelook.robot.hal import RangeScan

__all__ = ["ScanPoints"]

_Array = npt.NDArray[np.float64]
_NONE = np.zeros((0, 2))
_NONE.flags.writeable = False


@numba.njit(cache=True, nogil=True)
def _hit_points(
    ranges: _Array, bearings: _Array, ox: _Array, oy: _Array, range_max: float
) -> _Array:
    """:meth:`RangeScan.points` in one compiled pass (the same sums and products, and the
    C library's sine and cosine, which numpy's are here: the tests hold them equal)."""
    hits = 0
    for k in range(ranges.shape[0]):
        if ranges[k] < range_max:
            hits += 1
    out = np.empty((hits, 2))
    n = 0
    for k in range(ranges.shape[0]):
        r = ranges[k]
        if r < range_max:
            out[n, 0] = ox[k] + r * math.cos(bearings[k])
            out[n, 1] = oy[k] + r * math.sin(bearings[k])
            n += 1
    return out


@numba.njit(cache=True, nogil=True)
def _cone_points(
    ranges: _Array, bearings: _Array, ox: _Array, oy: _Array, range_max: float, half: float
) -> _Array:
    """:func:`_cone_points_numpy` in one compiled pass: five points across each echoing
    cone (offset by −half, −half/2, 0, half/2, half), offset-major."""
    offsets = (-half, -half / 2, 0.0, half / 2, half)
    hits = 0
    for k in range(ranges.shape[0]):
        if ranges[k] < range_max:
            hits += 1
    out = np.empty((5 * hits, 2))
    n = 0
    for offset in offsets:
        for k in range(ranges.shape[0]):
            r = ranges[k]
            if r < range_max:
                bearing = bearings[k] + offset
                out[n, 0] = ox[k] + r * math.cos(bearing)
                out[n, 1] = oy[k] + r * math.sin(bearing)
                n += 1
    return out


def _cone_points_numpy(scan: RangeScan, half: float) -> _Array:
    """Each echo as five points spread over its cone at the measured range (offset-major)."""
    hit = scan.ranges < scan.range_max
    offsets = np.array([-half, -half / 2, 0.0, half / 2, half])
    bearing = (scan.bearings[hit][None, :] + offsets[:, None]).ravel()
    r = np.tile(scan.ranges[hit], len(offsets))
    return np.column_stack(
        (
            np.tile(scan.origin_x[hit], len(offsets)) + r * np.cos(bearing),
            np.tile(scan.origin_y[hit], len(offsets)) + r * np.sin(bearing),
        )
    )


def _f64(values: _Array) -> _Array:
    return np.ascontiguousarray(values, dtype=np.float64)


def _plain(columns: tuple[_Array, ...]) -> bool:
    """Whether a reading's columns are float64 and of one length (the compiled passes' input)."""
    return len({len(column) for column in columns}) == 1 and all(
        column.dtype == np.float64 for column in columns
    )


class ScanPoints:
    """Robot-frame points of the newest laser scan and sonar reading (callers only read them)."""

    def __init__(self) -> None:
        one = np.ones(1)
        _hit_points(one, one, one, one, 2.0)  # compiled now, not in the first control cycle
        _cone_points(one, one, one, one, 2.0, 0.1)
        self._laser: tuple[RangeScan, _Array] | None = None
        self._sonar: tuple[RangeScan, float, tuple[_Array, _Array]] | None = None

    @staticmethod
    def _same(scan: RangeScan, seen: RangeScan) -> bool:
        return scan is seen or (
            scan.stamp == seen.stamp  # a new stamp: worked out again (the same if it is not new)
            and scan.bearings is seen.bearings
            and scan.origin_x is seen.origin_x
            and scan.origin_y is seen.origin_y
            and scan.range_max == seen.range_max
            and np.array_equal(scan.ranges, seen.ranges)
        )

    @staticmethod
    def _kept(scan: RangeScan) -> RangeScan:
        """``scan`` with a copy of its ranges (a HAL may refill its buffer in place)."""
        return RangeScan(
            scan.stamp,
            scan.ranges.copy(),
            scan.bearings,
            scan.origin_x,
            scan.origin_y,
            scan.range_max,
        )

    def laser(self, scan: RangeScan | None) -> _Array:
        """The hit points of ``scan`` (:meth:`RangeScan.points`)."""
        if scan is None:
            return _NONE
        if self._laser is None or not self._same(scan, self._laser[0]):
            columns = (scan.ranges, scan.bearings, scan.origin_x, scan.origin_y)
            if _plain(columns):
                ranges, bearings, ox, oy = (_f64(column) for column in columns)
                points = _hit_points(ranges, bearings, ox, oy, float(scan.range_max))
            else:  # other types and shapes as numpy has them
                points = scan.points()
            points.flags.writeable = False
            self._laser = (self._kept(scan), points)
        return self._laser[1]

    def sonar(self, scan: RangeScan | None, half: float) -> tuple[_Array, _Array]:
        """(points spread over each echoing cone, the cones' axis points) of ``scan``.

        A sonar echo may come from anywhere across its cone, so each reading becomes points
        spread over the cone (``half`` its half-angle) at the measured range.
        """
        if scan is None:
            return _NONE, _NONE
        if self._sonar is None or self._sonar[1] != half or not self._same(scan, self._sonar[0]):
            columns = (scan.ranges, scan.bearings, scan.origin_x, scan.origin_y)
            if _plain(columns):
                ranges, bearings, ox, oy = (_f64(column) for column in columns)
                points = _cone_points(ranges, bearings, ox, oy, float(scan.range_max), float(half))
            else:  # other types and shapes as numpy has them
                points = _cone_points_numpy(scan, half)
            echoes = len(points) // 5
            axes = points[2 * echoes : 3 * echoes]
            points.flags.writeable = axes.flags.writeable = False
            self._sonar = (self._kept(scan), half, (points, axes))
        return self._sonar[2]
