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
    MemoryStatus,
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


def _f64(values: _Array) -> _Array:
    return np.ascontiguousarray(values, dtype=np.float64)


def seen_through(
    points: _Array,
    bearings: _Array,
    ranges: _Array,
    origin: tuple[float, float],
    tolerance: float = 0.1,
    *,
    compiled: bool = True,
) -> npt.NDArray[np.bool_]:
    """Which points (robot frame) a laser sweep (sorted bearings) now passes beyond: nothing
    is there, or the laser would have stopped at it.

    ``compiled=False``: numpy alone, the same answers without the compiled loop (for a
    control cycle that must not wait for its first compile)."""
    if len(bearings) < 2 or not len(points):
        return np.zeros(len(points), dtype=bool)
    if len(ranges) != len(bearings) or not compiled:
        return _seen_through_numpy(points, bearings, ranges, origin, tolerance)
    out = np.empty(len(points), dtype=bool)
    doubt = np.empty(len(points), dtype=bool)
    step = float(bearings[1] - bearings[0])
    points = _f64(points)
    ox, oy = float(origin[0]), float(origin[1])
    first = float(bearings[0])
    if beyond_beams(points, ox, oy, first, step, _f64(ranges), tolerance, out, doubt):
        out[doubt] = _seen_through_numpy(points[doubt], bearings, ranges, origin, tolerance)
    return out


def _seen_through_numpy(
    points: _Array,
    bearings: _Array,
    ranges: _Array,
    origin: tuple[float, float],
    tolerance: float,
) -> npt.NDArray[np.bool_]:
    """:func:`seen_through` in numpy (the compiled loop's reference, and its word on doubt)."""
    dx, dy = points[:, 0] - origin[0], points[:, 1] - origin[1]
    step = float(bearings[1] - bearings[0])
    index = np.rint((np.arctan2(dy, dx) - bearings[0]) / step).astype(np.int64)
    inside = (index >= 0) & (index < len(bearings))
    beam_range = np.full(len(index), -np.inf)
    beam_range[inside] = ranges[index[inside]]
    return np.asarray(inside & (beam_range > np.hypot(dx, dy) + tolerance), dtype=bool)


def in_sonar_cones(
    points: _Array,
    sonar: tuple[_Array, _Array, _Array, _Array],
    half_cone: float,
    tolerance: float = 0.1,
    *,
    compiled: bool = True,
) -> npt.NDArray[np.bool_]:
    """Which points (robot frame) lie inside a sonar's cone nearer than its reading: the sonar
    hears the nearest echo in its cone, so nothing is there.

    ``sonar`` = (origin x, origin y, bearing, range) of each transducer, robot frame;
    ``compiled=False``: numpy alone, as :func:`seen_through`.
    """
    if not len(points) or not len(sonar[0]):
        return np.zeros(len(points), dtype=bool)
    ox, oy, bearing, reach = sonar
    n = len(ox)
    if len(oy) != n or len(bearing) != n or len(reach) != n or not compiled:
        return _in_sonar_cones_numpy(points, sonar, half_cone, tolerance)
    out = np.empty(len(points), dtype=bool)
    doubt = np.empty(len(points), dtype=bool)
    points = _f64(points)
    ox, oy, bearing, reach = _f64(ox), _f64(oy), _f64(bearing), _f64(reach)
    if in_cones(points, ox, oy, bearing, reach, float(half_cone), tolerance, out, doubt):
        out[doubt] = _in_sonar_cones_numpy(points[doubt], sonar, half_cone, tolerance)
    return out


def _in_sonar_cones_numpy(
    points: _Array,
    sonar: tuple[_Array, _Array, _Array, _Array],
    half_cone: float,
    tolerance: float,
) -> npt.NDArray[np.bool_]:
    """:func:`in_sonar_cones` in numpy (the compiled loop's reference, and its word on doubt)."""
    ox, oy, bearing, reach = sonar
    dx = points[None, :, 0] - ox[:, None]
    dy = points[None, :, 1] - oy[:, None]
    off = np.abs(np.angle(np.exp(1j * (np.arctan2(dy, dx) - bearing[:, None]))))
    inside = (off < half_cone) & (np.hypot(dx, dy) < reach[:, None] - tolerance)
    return np.asarray(inside.any(axis=0))


class ObstacleMemory:
    """Points (odometry frame) seen by range sensors in the last ``seconds``, near the robot."""

    def __init__(
        self, seconds: float, reach: float, cell: float = 0.05, sample_period: float = 0.1
    ) -> None:
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
        usual = (
            laser_points.dtype == np.float64
            and sonar_points.dtype == np.float64
            and self._xy.dtype == np.float64
            and (sweep is None or 2 <= len(sweep[0]) == len(sweep[1]))
            and (cones is None or len(cones[0]) == len(cones[1]) == len(cones[2]) == len(cones[3]))
        )
        if not usual:
            return self._update_numpy(
                odometry, now, laser_points, sonar_points, sweep, cones, half_cone, tolerance
            )
        x, y, theta = odometry
        view = self._view(sweep) if sweep is not None else _NO_SWEEP
        sonar = Cones(*self._cones(cones), _f64(cones[3])) if cones is not None else _NO_CONES
        due = self.due(now)
        fresh = np.concatenate((laser_points, sonar_points)) if due else _NO_POINTS
        settings = MemorySettings(
            float(tolerance),
            float(half_cone),
            float(self.seconds),
            float(self.reach),
            float(self.cell),
        )
        # the memory's own arrays are float64 and contiguous: this class makes them so
        status, memory, local, points, oldest = memory_cycle(
            Remembered(self._xy, self._stamp, self._laser),
            Odometry(float(x), float(y), math.cos(theta), math.sin(theta), float(now)),
            view,
            sonar,
            settings,
            Fresh(fresh, len(laser_points), due),
        )
        if status == MemoryStatus.IN_DOUBT:  # the numpy forms decide, step by step
            return self._update_numpy(
                odometry, now, laser_points, sonar_points, sweep, cones, half_cone, tolerance
            )
        self._xy, self._stamp, self._laser = memory
        self._local = (odometry, self._xy, local)
        if status == MemoryStatus.CELLS_TOO_LARGE:
            self._last_sample = now
            self._observe_numpy(fresh, len(laser_points), odometry, now)
            return self._view_numpy(odometry, now, sweep)
        if due:
            self._last_sample = now
        self._oldest = oldest
        if status == MemoryStatus.NEAR_SWEEP_ENDS:  # the arctangents decide, as in numpy's form
            bearing = np.arctan2(local[:, 1] - view.y, local[:, 0] - view.x)
            points = local[(bearing < view.first) | (bearing > view.last)]
        return points

    def _view(self, sweep: tuple[_Array, _Array, tuple[float, float]]) -> Sweep:
        """The sweep as the compiled cycle takes it (its geometry worked out again only for
        other bearings or another origin: a laser's are the same every scan)."""
        bearings, ranges, origin = sweep
        cached = self._sweep_view
        if cached is None or cached[0] is not bearings or cached[1] != origin:
            first, last = float(bearings[0]), float(bearings[-1])
            step = float(bearings[1] - bearings[0])
            geometry = (float(origin[0]), float(origin[1]), first, step, last)
            cached = self._sweep_view = (bearings, origin, geometry)
        return Sweep(*cached[2], _f64(ranges))

    def _cones(self, cones: _Cones) -> _Layout:
        """The transducers' x, y and bearings as the compiled cycle takes them (converted again
        only for other arrays: a sonar ring's are the same every reading)."""
        cached = self._cone_layout
        if cached is not None:
            (x, y, bearings), layout = cached
            if x is cones[0] and y is cones[1] and bearings is cones[2]:
                return layout
        layout = (_f64(cones[0]), _f64(cones[1]), _f64(cones[2]))
        self._cone_layout = ((cones[0], cones[1], cones[2]), layout)
        return layout

    def _update_numpy(
        self,
        odometry: Pose,
        now: float,
        laser_points: _Array,
        sonar_points: _Array,
        sweep: tuple[_Array, _Array, tuple[float, float]] | None,
        cones: _Cones | None,
        half_cone: float,
        tolerance: float,
    ) -> _Array:
        """:meth:`update` in numpy, one step at a time: its reference, and its way in doubt
        (no compiled loop but the cycle's own is ever needed, so none is loaded for this)."""
        if sweep is not None and np.count_nonzero(self._laser):
            bearings, ranges, origin = sweep
            local = self._to_robot_numpy(odometry)
            passed = seen_through(local, bearings, ranges, origin, tolerance, compiled=False)
            self._forget(passed & self._laser)
        if cones is not None and len(self._xy):
            local = self._to_robot_numpy(odometry)
            self._forget(in_sonar_cones(local, cones, half_cone, tolerance, compiled=False))
        if self.due(now):
            self._last_sample = now
            self._observe_numpy(
                np.vstack((laser_points, sonar_points)), len(laser_points), odometry, now
            )
        return self._view_numpy(odometry, now, sweep)

    def _forget(self, gone: npt.NDArray[np.bool_]) -> None:
        if np.count_nonzero(gone):
            keep = ~gone
            self._xy, self._stamp, self._laser = (
                self._xy[keep],
                self._stamp[keep],
                self._laser[keep],
            )
            self._local = None

    def _to_robot_numpy(self, odometry: Pose) -> _Array:
        """The remembered points in the robot frame at ``odometry``, in numpy (the compiled
        loop's arithmetic)."""
        x, y, theta = odometry
        c, s = math.cos(theta), math.sin(theta)
        dx, dy = self._xy[:, 0] - x, self._xy[:, 1] - y
        return np.column_stack((c * dx + s * dy, -s * dx + c * dy))

    def _view_numpy(
        self,
        odometry: Pose,
        now: float,
        sweep: tuple[_Array, _Array, tuple[float, float]] | None,
    ) -> _Array:
        """:meth:`points` in numpy: the young ones, outside the ``sweep``'s view."""
        young = self._stamp > now - self.seconds
        if np.count_nonzero(young) != len(young):
            self._xy, self._stamp, self._laser = (
                self._xy[young],
                self._stamp[young],
                self._laser[young],
            )
            self._local = None
        self._oldest = float(self._stamp.min()) if len(self._stamp) else math.inf
        local = self._to_robot_numpy(odometry)
        if sweep is None:
            return local
        bearings, _, (ox, oy) = sweep
        bearing = np.arctan2(local[:, 1] - oy, local[:, 0] - ox)
        outside = (bearing < float(bearings[0])) | (bearing > float(bearings[-1]))
        points: _Array = local[outside]
        return points

    def observe(self, laser: _Array, sonar: _Array, odometry: Pose, now: float) -> None:
        """Remember this moment's readings (robot frame) at ``odometry``; forget the old."""
        self._last_sample = now
        x, y, theta = odometry
        fresh = np.vstack((laser, sonar))
        if fresh.dtype == np.float64 and self._xy.dtype == np.float64:
            # compiled: the numpy form's arithmetic, one pass (with its sort for the cells)
            n = len(fresh) + len(self._xy)
            xy, stamp, is_laser = np.empty((n, 2)), np.empty(n), np.empty(n, dtype=bool)
            kept = remember(
                Fresh(np.ascontiguousarray(fresh), len(laser), True),
                Remembered(_f64(self._xy), _f64(self._stamp), np.ascontiguousarray(self._laser)),
                Odometry(float(x), float(y), math.cos(theta), math.sin(theta), float(now)),
                (float(now) - float(self.seconds), float(self.reach), float(self.cell)),
                Remembered(xy, stamp, is_laser),
            )
            if kept >= 0:
                self._xy, self._stamp, self._laser = xy[:kept], stamp[:kept], is_laser[:kept]
                self._oldest = float(self._stamp.min()) if kept else math.inf
                return
        self._observe_numpy(fresh, len(laser), odometry, now)

    def _observe_numpy(self, fresh: _Array, laser_count: int, odometry: Pose, now: float) -> None:
        """:meth:`observe` in numpy (the compiled update's reference, and its fallback)."""
        x, y, theta = odometry
        c, s = math.cos(theta), math.sin(theta)
        sonar_count = len(fresh) - laser_count
        world = np.column_stack(
            (x + c * fresh[:, 0] - s * fresh[:, 1], y + s * fresh[:, 0] + c * fresh[:, 1])
        )
        xy = np.vstack((world, self._xy))
        stamp = np.concatenate((np.full(len(fresh), now), self._stamp))
        is_laser = np.concatenate(
            (np.ones(laser_count, dtype=bool), np.zeros(sonar_count, dtype=bool), self._laser)
        )
        near = (stamp > now - self.seconds) & (np.hypot(xy[:, 0] - x, xy[:, 1] - y) < self.reach)
        xy, stamp, is_laser = xy[near], stamp[near], is_laser[near]
        # one point per grid cell and source, the newest (fresh readings come first)
        keys = np.floor(xy / self.cell).astype(np.int64)
        code = (keys[:, 0] * 1_000_003 + keys[:, 1]) * 2 + is_laser
        _, first = np.unique(code, return_index=True)
        self._xy, self._stamp, self._laser = xy[first], stamp[first], is_laser[first]
        self._oldest = float(self._stamp.min()) if len(self._stamp) else math.inf

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
        doubt = np.empty(len(local), dtype=bool)
        if outside_sweep(local, float(ox), float(oy), float(first), float(last), outside, doubt):
            near = local[doubt]
            bearing = np.arctan2(near[:, 1] - oy, near[:, 0] - ox)
            outside[doubt] = (bearing < first) | (bearing > last)
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
            _f64(self._xy),
            float(x),
            float(y),
            math.cos(theta),
            math.sin(theta),
            local,
        )
        self._local = (odometry, self._xy, local)
        return local
