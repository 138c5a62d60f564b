"""Obstacle memory: range readings remembered where they were seen, for a while.

A Pioneer's laser looks forward only and its sonar ring leaves 20–40° gaps between cones, so
an obstacle passed on the way in can drop out of sight as the robot reverses or turns past it.
The memory keeps each reading in the odometry frame (smooth, never jumps) on a coarse grid, and
hands the ones near the robot back to safety as extra points, in the manner of a costmap's
obstacle layer. A remembered laser point is cleared when the laser now sees through it (a
person who walked away); any point is cleared when a sonar cone now holding it hears its echo
further away. The laser never clears what the sonar heard: it may pass over it.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from freelook.geometry import Pose
from freelook.safety._kernels import beyond_beams, in_cones, outside_sweep, to_frame
from freelook.safety._memory_cycle import (
    Cones,
    Fresh,
    MemorySettings,
    Odometry,
    Remembered,
    Sweep,
    compile_memory_cycle,
    memory_cycle,
    remember,
)

__all__ = ["ObstacleMemory", "in_sonar_cones", "seen_through"]

_Array = npt.NDArray[np.float64]
_Cones = tuple[_Array, _Array, _Array, _Array]
_Layout = tuple[_Array, _Array, _Array]  # the transducers' x, y and bearings
_Geometry = tuple[float, float, float, float, float]  # a sweep's origin, first, step, last
_NONE = np.zeros(0)
_NO_POINTS = np.zeros((0, 2))
_NO_SWEEP = Sweep(0.0, 0.0, 0.0, 0.0, 0.0, _NONE)
_NO_CONES = Cones(_NONE, _NONE, _NONE, _NONE)
#: A memory's reach in cells at most (its cells are coded relative to the robot's own).
_MOST_CELLS = 2.0**20


def _f64(values: _Array) -> _Array:
    return np.ascontiguousarray(values, dtype=np.float64)


def _points(values: _Array) -> _Array:
    """Points as the compiled loops take them: rows of (x, y), float64, contiguous."""
    return _f64(values).reshape(-1, 2)


def _sweep_geometry(bearings: _Array) -> tuple[float, float, float]:
    """A sweep's first bearing, step and last bearing (step 0 for a single beam)."""
    first, last = float(bearings[0]), float(bearings[-1])
    step = float(bearings[1] - bearings[0]) if len(bearings) > 1 else 0.0
    return first, step, last


def seen_through(
    points: _Array,
    bearings: _Array,
    ranges: _Array,
    origin: tuple[float, float],
    tolerance: float = 0.1,
) -> npt.NDArray[np.bool_]:
    """Which points (robot frame) a laser sweep (sorted, evenly spaced bearings) now passes
    beyond: nothing is there, or the laser would have stopped at it. A bearing without a
    range, or a range without a bearing, is no beam."""
    out = np.zeros(len(points), dtype=bool)
    beams = min(len(bearings), len(ranges))
    if beams < 2 or not len(points):
        return out
    first, step, _ = _sweep_geometry(bearings)
    ox, oy = float(origin[0]), float(origin[1])
    beyond_beams(_points(points), ox, oy, first, step, _f64(ranges[:beams]), tolerance, out)
    return out


def _transducers(sonar: _Cones) -> _Cones:
    """The sonar's (x, y, bearing, range) as the compiled loops take them, as many as each
    of the four has."""
    n = min(len(sonar[0]), len(sonar[1]), len(sonar[2]), len(sonar[3]))
    ox, oy, bearing, reach = sonar
    return _f64(ox[:n]), _f64(oy[:n]), _f64(bearing[:n]), _f64(reach[:n])


def in_sonar_cones(
    points: _Array,
    sonar: _Cones,
    half_cone: float,
    tolerance: float = 0.1,
) -> npt.NDArray[np.bool_]:
    """Which points (robot frame) lie inside a sonar's cone nearer than its reading: the sonar
    hears the nearest echo in its cone, so nothing is there.

    ``sonar`` = (origin x, origin y, bearing, range) of each transducer, robot frame.
    """
    out = np.zeros(len(points), dtype=bool)
    ox, oy, bearing, reach = _transducers(sonar)
    if not len(points) or not len(ox):
        return out
    in_cones(_points(points), ox, oy, bearing, reach, float(half_cone), tolerance, out)
    return out


class ObstacleMemory:
    """Points (odometry frame) seen by range sensors in the last ``seconds``, near the robot."""

    def __init__(
        self, seconds: float, reach: float, cell: float = 0.05, sample_period: float = 0.1
    ) -> None:
        if not (cell > 0.0 and 0.0 <= reach <= cell * _MOST_CELLS):
            raise ValueError(
                f"obstacle memory: reach {reach} m and cell {cell} m: expected a positive "
                f"cell and a reach of at most {_MOST_CELLS:.0f} cells"
            )
        compile_memory_cycle()  # now, not in the first control cycle
        self.seconds = seconds
        self.reach = reach
        self.cell = cell
        self.sample_period = sample_period
        self._xy = np.zeros((0, 2))
        self._stamp = np.zeros(0)
        self._laser = np.zeros(0, dtype=bool)
        # no stamp is older (a bound kept as points go, so most cycles need not look at them)
        self._oldest = math.inf
        self._last_sample: float | None = None
        # (odometry, the point array they were computed from, the points in the robot frame):
        # one cycle's clearing and reading all look from the same odometry
        self._local: tuple[Pose, _Array, _Array] | None = None
        # the compiled cycle's form of the last sweep's geometry and the last sonar layout
        self._sweep_view: tuple[_Array, tuple[float, float], _Geometry] | None = None
        self._cone_layout: tuple[_Layout, _Layout] | None = None

    def __len__(self) -> int:
        return len(self._stamp)

    def due(self, now: float) -> bool:
        """Whether it is time to take in the current readings (every ``sample_period``)."""
        return self._last_sample is None or now - self._last_sample >= self.sample_period

    def update(
        self,
        odometry: Pose,
        now: float,
        laser_points: _Array,
        sonar_points: _Array,
        sweep: tuple[_Array, _Array, tuple[float, float]] | None,
        cones: _Cones | None,
        half_cone: float,
        tolerance: float = 0.1,
    ) -> _Array:
        """A control cycle's work at ``odometry``: forget what the laser's ``sweep`` (sorted
        bearings, ranges, origin) sees through and what the sonar ``cones`` hear beyond
        (:meth:`clear_seen_through`, :meth:`clear_in_cones`), take in this moment's readings
        when :meth:`due` (:meth:`observe`), and return the :meth:`points` outside the sweep's
        view. One compiled call, the same memory and points as those steps one by one."""
        x, y, theta = odometry
        view = self._view(sweep) if sweep is not None and len(sweep[0]) else _NO_SWEEP
        sonar = Cones(*self._cones(cones)) if cones is not None else _NO_CONES
        due = self.due(now)
        if due:
            fresh = np.concatenate((_points(laser_points), _points(sonar_points)))
        else:
            fresh = _NO_POINTS
        settings = MemorySettings(
            float(tolerance),
            float(half_cone),
            float(self.seconds),
            float(self.reach),
            float(self.cell),
        )
        # the memory's own arrays are float64 and contiguous: this class makes them so
        memory, local, points, self._oldest = memory_cycle(
            Remembered(self._xy, self._stamp, self._laser),
            Odometry(float(x), float(y), math.cos(theta), math.sin(theta), float(now)),
            view,
            sonar,
            settings,
            Fresh(fresh, len(laser_points), due),
        )
        self._xy, self._stamp, self._laser = memory
        self._local = (odometry, self._xy, local)
        if due:
            self._last_sample = now
        return points

    def _view(self, sweep: tuple[_Array, _Array, tuple[float, float]]) -> Sweep:
        """The sweep as the compiled cycle takes it (its geometry worked out again only for
        other bearings or another origin: a laser's are the same every scan)."""
        bearings, ranges, origin = sweep
        cached = self._sweep_view
        if cached is None or cached[0] is not bearings or cached[1] != origin:
            first, step, last = _sweep_geometry(bearings)
            geometry = (float(origin[0]), float(origin[1]), first, step, last)
            cached = self._sweep_view = (bearings, origin, geometry)
        return Sweep(*cached[2], _f64(ranges[: len(bearings)]))

    def _cones(self, cones: _Cones) -> _Cones:
        """The transducers' x, y, bearings and readings as the compiled cycle takes them (the
        layout converted again only for other arrays: a sonar ring's are the same every
        reading)."""
        cached = self._cone_layout
        n = len(cones[3])
        if cached is not None:
            (x, y, bearings), layout = cached
            if x is cones[0] and y is cones[1] and bearings is cones[2] and len(layout[0]) == n:
                return (*layout, _f64(cones[3]))
        ox, oy, bearing, reach = _transducers(cones)
        self._cone_layout = ((cones[0], cones[1], cones[2]), (ox, oy, bearing))
        return ox, oy, bearing, reach

    def observe(self, laser: _Array, sonar: _Array, odometry: Pose, now: float) -> None:
        """Remember this moment's readings (robot frame) at ``odometry``; forget the old."""
        self._last_sample = now
        x, y, theta = odometry
        fresh = np.concatenate((_points(laser), _points(sonar)))
        n = len(fresh) + len(self._xy)
        xy, stamp, is_laser = np.empty((n, 2)), np.empty(n), np.empty(n, dtype=bool)
        kept = remember(
            Fresh(fresh, len(laser), True),
            Remembered(self._xy, self._stamp, self._laser),
            Odometry(float(x), float(y), math.cos(theta), math.sin(theta), float(now)),
            (float(now) - float(self.seconds), float(self.reach), float(self.cell)),
            Remembered(xy, stamp, is_laser),
        )
        self._xy, self._stamp, self._laser = xy[:kept], stamp[:kept], is_laser[:kept]
        self._oldest = float(self._stamp.min()) if kept else math.inf

    def clear_seen_through(
        self,
        odometry: Pose,
        bearings: _Array,
        ranges: _Array,
        origin: tuple[float, float],
        tolerance: float = 0.1,
    ) -> None:
        """Forget remembered laser points that a laser sweep (sorted bearings) now passes."""
        # np.count_nonzero, not .any(): the same answer for a mask, without a reduction's
        # set-up (several times a cycle)
        if not np.count_nonzero(self._laser):
            return
        passed = seen_through(self._to_robot(odometry), bearings, ranges, origin, tolerance)
        passed &= self._laser
        if np.count_nonzero(passed):
            self._keep(~passed)

    def clear_in_cones(
        self,
        odometry: Pose,
        sonar: tuple[_Array, _Array, _Array, _Array],
        half_cone: float,
        tolerance: float = 0.1,
    ) -> None:
        """Forget remembered points inside a sonar's cone nearer than its reading now: the
        sonar hears the nearest echo in its cone, so nothing is there any more.

        ``sonar`` = (origin x, origin y, bearing, range) of each transducer, robot frame.
        """
        if not len(self._xy):
            return
        inside = in_sonar_cones(self._to_robot(odometry), sonar, half_cone, tolerance)
        if np.count_nonzero(inside):
            self._keep(~inside)

    def points(
        self,
        odometry: Pose,
        now: float,
        seen: tuple[tuple[float, float], float, float] | None = None,
    ) -> _Array:
        """The remembered points still young, in the robot frame at ``odometry``.

        ``seen`` = (origin, first bearing, last bearing) of a laser sweeping now: points in its
        view are left out, since the laser reports what is there itself.
        """
        threshold = now - self.seconds
        if not self._oldest > threshold:  # (NaN: look)
            young = self._stamp > threshold
            if np.count_nonzero(young) != len(young):
                self._keep(young)
            self._oldest = float(self._stamp.min()) if len(self._stamp) else math.inf
        local = self._to_robot(odometry)
        if seen is None:
            return local.copy()
        (ox, oy), first, last = seen
        outside = np.empty(len(local), dtype=bool)
        outside_sweep(local, float(ox), float(oy), float(first), float(last), outside)
        return local[outside]

    def _keep(self, keep: npt.NDArray[np.bool_]) -> None:
        """Keep only the points ``keep`` marks (and their robot-frame copies)."""
        if np.count_nonzero(keep) == len(keep):
            return
        before, cached = self._xy, self._local
        self._xy, self._stamp, self._laser = self._xy[keep], self._stamp[keep], self._laser[keep]
        fresh = cached is not None and cached[1] is before
        self._local = (cached[0], self._xy, cached[2][keep]) if fresh and cached else None

    def _to_robot(self, odometry: Pose) -> _Array:
        cached = self._local
        if cached is not None and cached[1] is self._xy and cached[0] == odometry:
            return cached[2]
        x, y, theta = odometry
        local = np.empty((len(self._xy), 2))
        to_frame(
            self._xy,
            float(x),
            float(y),
            math.cos(theta),
            math.sin(theta),
            local,
        )
        self._local = (odometry, self._xy, local)
        return local
