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

from freelook.config import FootprintConfig
from freelook.hal import RangeScan
from freelook.safety._sonar_gaps import gap_points, neighbour_order

__all__ = ["ScanPoints"]

_Array = npt.NDArray[np.float64]
#: a reading kept for comparing the next with it: the scan, and its ranges' bits when seen
_Seen = tuple[RangeScan, bytes]
#: a sonar reading kept, with what its points were made with: (half cone, nearer), footprint
_SeenSonar = tuple[_Seen, tuple[float, float], "FootprintConfig | None", tuple[_Array, _Array]]
_NONE = np.zeros((0, 2))
_NONE.flags.writeable = False


@numba.njit(cache=True, nogil=True)
def _unit_vectors(bearings: _Array) -> _Array:
    """(cos, sin) of each bearing, rows: the C library's sine and cosine, which numpy's are
    here (the tests hold the points made from them to numpy's form)."""
    out = np.empty((bearings.shape[0], 2))
    for k in range(bearings.shape[0]):
        out[k, 0] = math.cos(bearings[k])
        out[k, 1] = math.sin(bearings[k])
    return out


@numba.njit(cache=True, nogil=True)
def _hit_points(ranges: _Array, units: _Array, ox: _Array, oy: _Array, range_max: float) -> _Array:
    """:meth:`RangeScan.points` in one compiled pass (the same sums and products), each beam's
    direction given as its unit vector."""
    hits = 0
    for k in range(ranges.shape[0]):
        if ranges[k] < range_max:
            hits += 1
    out = np.empty((hits, 2))
    n = 0
    for k in range(ranges.shape[0]):
        r = ranges[k]
        if r < range_max:
            out[n, 0] = ox[k] + r * units[k, 0]
            out[n, 1] = oy[k] + r * units[k, 1]
            n += 1
    return out


@numba.njit(cache=True, nogil=True)
def _cone_points(
    ranges: _Array,
    units: npt.NDArray[np.float64],
    ox: _Array,
    oy: _Array,
    range_max: float,
) -> _Array:
    """:func:`_cone_points_numpy` in one compiled pass: points across each echoing cone,
    offset-major (``units[i]``: the unit vectors of every transducer's bearing plus the i-th
    offset, −half, −half/2, 0, half/2, half)."""
    hits = 0
    for k in range(ranges.shape[0]):
        if ranges[k] < range_max:
            hits += 1
    out = np.empty((units.shape[0] * hits, 2))
    n = 0
    for i in range(units.shape[0]):
        for k in range(ranges.shape[0]):
            r = ranges[k]
            if r < range_max:
                out[n, 0] = ox[k] + r * units[i, k, 0]
                out[n, 1] = oy[k] + r * units[i, k, 1]
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


class _Layout:
    """A sensor's fixed columns (bearings and beam origins) as the compiled passes take them.

    A HAL hands the same three arrays with every reading of a sensor (:meth:`ScanPoints._same`
    relies on it too), so they are checked and made contiguous once; each reading then has
    only its ranges to check.
    """

    __slots__ = ("bearings", "columns", "cones", "neighbours", "origin_x", "origin_y", "units")

    def __init__(self, scan: RangeScan) -> None:
        self.bearings, self.origin_x, self.origin_y = scan.bearings, scan.origin_x, scan.origin_y
        fixed = (scan.bearings, scan.origin_x, scan.origin_y)
        self.columns: tuple[_Array, _Array, _Array] | None = (
            (_f64(fixed[0]), _f64(fixed[1]), _f64(fixed[2])) if _plain(fixed) else None
        )
        # the beams' directions, and a sonar's cone directions by half-angle, worked out once
        self.units = _unit_vectors(self.columns[0]) if self.columns is not None else _NONE
        self.cones: dict[float, npt.NDArray[np.float64]] = {}
        #: a sonar ring's transducers in order around the body (:func:`neighbour_order`), once
        #: asked for
        self.neighbours: npt.NDArray[np.int64] | None = None

    def cone_units(self, half: float) -> npt.NDArray[np.float64]:
        """The unit vectors of each bearing turned by −half, −half/2, 0, half/2 and half."""
        units = self.cones.get(half)
        if units is None:
            assert self.columns is not None
            bearings = self.columns[0]
            offsets = (-half, -half / 2, 0.0, half / 2, half)
            units = np.stack([_unit_vectors(bearings + offset) for offset in offsets])
            if len(self.cones) >= 8:  # a sonar has one cone angle; a few at most
                self.cones.clear()
            self.cones[half] = units
        return units

    def fits(self, scan: RangeScan) -> bool:
        return (
            scan.bearings is self.bearings
            and scan.origin_x is self.origin_x
            and scan.origin_y is self.origin_y
        )

    def compiled_input(self, scan: RangeScan) -> tuple[_Array, _Array, _Array] | None:
        """(ranges, beam origin x, y) for a compiled pass (the directions are :attr:`units`),
        or None: numpy's form takes it."""
        columns, ranges = self.columns, scan.ranges
        if columns is None or ranges.dtype != np.float64 or len(ranges) != len(columns[0]):
            return None
        return _f64(ranges), columns[1], columns[2]


class ScanPoints:
    """Robot-frame points of the newest laser scan and sonar reading (callers only read them)."""

    def __init__(self) -> None:
        one = np.ones(1)
        units = _unit_vectors(one)  # compiled now, not in the first control cycle
        _hit_points(one, units, one, one, 2.0)
        _cone_points(one, units[None], one, one, 2.0)
        warm = RangeScan(0.0, one, one, one, one, 2.0)
        gap_points(warm, 0.1, FootprintConfig(length=0.1, width=0.1, swing_radius=0.1))
        self._laser: tuple[_Seen, _Array] | None = None
        self._sonar: _SeenSonar | None = None
        self._layouts: dict[str, _Layout] = {}

    def _layout(self, sensor: str, scan: RangeScan) -> _Layout:
        layout = self._layouts.get(sensor)
        if layout is None or not layout.fits(scan):
            layout = self._layouts[sensor] = _Layout(scan)
        return layout

    @staticmethod
    def _same(scan: RangeScan, seen: _Seen) -> bool:
        """Whether ``scan`` is the reading seen last: the same stamp, layout and range bits
        (bits, not values: a reading equal to the last only as −0.0 is to 0.0 is worked out
        again, and then gives what it would have; a buffer the HAL refilled in place shows
        other bits)."""
        kept, bits = seen
        return (
            scan.stamp == kept.stamp  # a new stamp: worked out again (the same if it is not new)
            and scan.bearings is kept.bearings
            and scan.origin_x is kept.origin_x
            and scan.origin_y is kept.origin_y
            and scan.range_max == kept.range_max
            and scan.ranges.dtype == kept.ranges.dtype
            and scan.ranges.shape == kept.ranges.shape
            and scan.ranges.tobytes() == bits
        )

    @staticmethod
    def _kept(scan: RangeScan) -> _Seen:
        """``scan`` and the bits of its ranges now (a HAL may refill its buffer in place)."""
        return scan, scan.ranges.tobytes()

    def laser(self, scan: RangeScan | None) -> _Array:
        """The hit points of ``scan`` (:meth:`RangeScan.points`)."""
        if scan is None:
            return _NONE
        if self._laser is None or not self._same(scan, self._laser[0]):
            points = self._hits(self._layout("laser", scan), scan)
            points.flags.writeable = False
            self._laser = (self._kept(scan), points)
        return self._laser[1]

    def sonar(
        self,
        scan: RangeScan | None,
        half: float,
        footprint: FootprintConfig | None = None,
        nearer: float = 0.0,
    ) -> tuple[_Array, _Array]:
        """(points spread over each echoing cone, the cones' axis points) of ``scan``.

        A sonar echo may come from anywhere across its cone, so each reading becomes points
        spread over the cone (``half`` its half-angle) at the measured range, or ``nearer``
        than it (the sensor's noise: a reading as likely short as long). With the robot's
        ``footprint``, the gaps between cones too narrow for it to pass are closed by points
        of their own (:func:`gap_points`), after the cones'. The axes are the echoes as read.
        """
        if scan is None:
            return _NONE, _NONE
        seen = self._sonar
        if (
            seen is None
            or seen[1] != (half, nearer)
            or seen[2] is not footprint
            or not self._same(scan, seen[0])
        ):
            layout = self._layout("sonar", scan)
            near = scan
            if nearer > 0.0:
                hit = scan.ranges < scan.range_max
                ranges = np.where(hit, np.maximum(scan.ranges - nearer, 0.0), scan.ranges)
                near = scan._replace(ranges=ranges)
            points = self._cones(layout, near, half)
            if near is scan:  # the cones' axes are among their points
                echoes = len(points) // 5
                axes = points[2 * echoes : 3 * echoes]
            else:
                axes = self._hits(layout, scan)
            if footprint is not None:
                if layout.neighbours is None:
                    layout.neighbours = neighbour_order(scan.bearings, scan.origin_x, scan.origin_y)
                gaps = gap_points(near, half, footprint, layout.neighbours)
                points = np.concatenate((points, gaps))
            points.flags.writeable = axes.flags.writeable = False
            seen = (self._kept(scan), (half, nearer), footprint, (points, axes))
            self._sonar = seen
        return seen[3]

    @staticmethod
    def _hits(layout: _Layout, scan: RangeScan) -> _Array:
        """The hit points of ``scan`` (:meth:`RangeScan.points`, :func:`_hit_points`)."""
        compiled = layout.compiled_input(scan)
        if compiled is None:  # other types and shapes as numpy has them
            return scan.points()
        ranges, ox, oy = compiled
        return _hit_points(ranges, layout.units, ox, oy, float(scan.range_max))

    @staticmethod
    def _cones(layout: _Layout, scan: RangeScan, half: float) -> _Array:
        """Each echo of ``scan`` as five points over its cone (:func:`_cone_points`)."""
        compiled = layout.compiled_input(scan)
        if compiled is None:  # other types and shapes as numpy has them
            return _cone_points_numpy(scan, half)
        ranges, ox, oy = compiled
        units = layout.cone_units(float(half))
        return _cone_points(ranges, units, ox, oy, float(scan.range_max))
