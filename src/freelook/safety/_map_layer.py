"""The robot's map as a safety layer (a static costmap layer, in the manner of Nav2's).

The map the robot was given (a file, as on a real robot) is ray cast from the localized pose
into range points around the robot: it covers what the sonar cones miss behind and beside it.
The map's keep-out lines and areas join them as points along their outlines, so the safety
layer slows and stops the robot before it enters one, as before a wall (ARNL treats its
forbidden lines and areas so). An area the robot already stands in is left out: the robot may
always drive out of it.

The layer acts only while the pose is trusted; a wrong pose would put phantom walls around the
robot, so during a global search safety runs on the range sensors alone. Even a trusted pose
may be wrong, so the robot drops the map's walls that its sensors see through (see
:meth:`PointSources.points`); keep-out outlines are not physical and stay.
"""

from __future__ import annotations

import math
import struct

import numba
import numpy as np
import numpy.typing as npt

from freelook.geometry import Pose
from freelook.hal import RangeScan
from freelook.maps import World, cast_fan, clearance_of, unit_vectors
from freelook.safety._kernels import beyond_beams, in_cones

__all__ = ["MapLayer"]

_Array = npt.NDArray[np.float64]
_Mask = npt.NDArray[np.bool_]
_Layout = tuple[_Array, _Array, _Array]  # a sensor's fixed arrays (origins and bearings)
_CAST_KEY = struct.Struct("<4d")  # x, y, θ, reach
_NONE = np.zeros(0)


@numba.njit(cache=True, nogil=True)
def _unseen_walls(
    clearance: npt.NDArray[np.float32],
    ox: float,
    oy: float,
    resolution: float,
    x: float,
    y: float,
    theta: float,
    units: _Array,
    reach: float,
    cast_again: bool,
    ranges: _Array,
    laser_x: float,
    laser_y: float,
    first: float,
    step: float,
    laser_ranges: _Array,
    sonar_x: _Array,
    sonar_y: _Array,
    sonar_bearings: _Array,
    sonar_ranges: _Array,
    half_cone: float,
    tolerance: float,
    walls: _Array,
    masks: _Mask,
    unseen: _Array,
) -> int:
    """The map's wall points (rays cast into ``ranges`` only when ``cast_again``) that
    neither sensor sees through, into ``unseen``: returns how many. ``masks`` rows: seen by
    the laser, heard by a sonar. An empty ``laser_ranges`` or ``sonar_x``: no such sensor."""
    if cast_again:
        cast_fan(clearance, (ox, oy, resolution), (x, y, theta), units, reach, ranges)
    n = 0
    for k in range(ranges.shape[0]):
        if ranges[k] < reach:
            walls[n, 0] = ranges[k] * units[k, 0]
            walls[n, 1] = ranges[k] * units[k, 1]
            n += 1
    points = walls[:n]
    seen, heard = masks[0], masks[1]
    if laser_ranges.shape[0] > 0:
        beyond_beams(points, laser_x, laser_y, first, step, laser_ranges, tolerance, seen)
    else:
        seen[:n] = False
    if sonar_x.shape[0] > 0:
        in_cones(
            points,
            sonar_x,
            sonar_y,
            sonar_bearings,
            sonar_ranges,
            half_cone,
            tolerance,
            heard,
        )
    else:
        heard[:n] = False
    m = 0
    for i in range(n):
        if not (seen[i] or heard[i]):
            unseen[m, 0] = points[i, 0]
            unseen[m, 1] = points[i, 1]
            m += 1
    return m


def _f64(values: _Array) -> _Array:
    return np.ascontiguousarray(values, dtype=np.float64)


def _same_arrays(kept: _Layout, fixed: _Layout) -> bool:
    """Whether a sensor hands the very arrays it handed before (its layout is then kept)."""
    return kept[0] is fixed[0] and kept[1] is fixed[1] and kept[2] is fixed[2]


class MapLayer:
    """Obstacle points (robot frame) from a map around a pose: walls and keep-out outlines."""

    def __init__(
        self, robot_map: World, reach: float, rays: int = 120, spacing: float = 0.05
    ) -> None:
        self.map = robot_map
        self.reach = reach
        self._clearance = clearance_of(robot_map.obstacles())
        self._world = (robot_map.origin[0], robot_map.origin[1], robot_map.resolution)
        angles = np.linspace(-math.pi, math.pi, rays, endpoint=False)
        # each ray's direction in the robot frame, worked out once (the rays never turn in it)
        self._units = unit_vectors(angles)
        self._ranges = np.empty(rays)
        # unseen_walls' own casts, the pose and reach they are from, its points and masks
        self._unseen_ranges = np.empty(rays)
        self._unseen_cast = b""
        self._walls = np.empty((rays, 2))
        self._masks = np.empty((2, rays), dtype=bool)
        self._unseen = np.empty((rays, 2))
        # the compiled call's form of the last laser's and sonar ring's fixed geometry
        self._laser_layout: tuple[_Layout, tuple[tuple[float, float], float, float]] | None = None
        self._sonar_layout: tuple[_Layout, _Layout] | None = None
        origin = Pose(*robot_map.origin, 0.0)
        self.wall_points(origin)  # compiled now, not in the first cycle
        self.unseen_walls(origin, None, None, 0.0)
        outlines: list[npt.NDArray[np.float64]] = []
        owners: list[npt.NDArray[np.int64]] = []
        for index, area in enumerate(robot_map.keep_out):
            for x1, y1, x2, y2 in area.segments():
                steps = max(1, math.ceil(math.hypot(x2 - x1, y2 - y1) / spacing))
                t = np.linspace(0.0, 1.0, steps + 1)
                outlines.append(np.column_stack((x1 + t * (x2 - x1), y1 + t * (y2 - y1))))
                owners.append(np.full(steps + 1, index))
        self._outline = np.vstack(outlines) if outlines else np.zeros((0, 2))
        self._owner = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)

    def points(self, pose: Pose) -> npt.NDArray[np.float64]:
        """The map's obstacles within ``reach`` of ``pose``, as points in the robot frame."""
        walls = self.wall_points(pose)
        keep_out = self.keep_out_points(pose)
        return np.vstack((walls, keep_out)) if len(keep_out) else walls

    def wall_points(self, pose: Pose) -> npt.NDArray[np.float64]:
        """The map's walls within ``reach`` of ``pose`` (robot frame), one point per ray.

        The rays are cast by :func:`~freelook.maps.cast_fan` itself, the one compiled cast the
        simulated laser runs too (each kernel holding a cast of its own costs the process
        about half a megabyte)."""
        x, y, theta = pose
        reach = float(self.reach)
        ranges = self._ranges
        pose_now = (float(x), float(y), float(theta))
        cast_fan(self._clearance, self._world, pose_now, self._units, reach, ranges)
        hits = ranges < reach
        points: npt.NDArray[np.float64] = ranges[hits, np.newaxis] * self._units[hits]
        return points

    def unseen_walls(
        self,
        pose: Pose,
        laser: RangeScan | None,
        sonar: RangeScan | None,
        half_cone: float,
        tolerance: float = 0.1,
    ) -> npt.NDArray[np.float64]:
        """:meth:`wall_points` less those the ``laser`` sees through
        (:func:`~freelook.safety.seen_through`) or a ``sonar`` cone (``half_cone`` wide each
        side) hears beyond (:func:`~freelook.safety.in_sonar_cones`): a wall the sensors see
        through is not there (the pose is off, or the map is old). A bearing without a range
        (or a range without a bearing) is no beam, and a sonar's transducers are those with
        all four of their values.

        One compiled call every control cycle, the same points as those three calls; a robot
        standing still is not cast from again."""
        x, y, theta = float(pose[0]), float(pose[1]), float(pose[2])
        reach = float(self.reach)
        key = _CAST_KEY.pack(x, y, theta, reach)  # as bytes: −0.0 is not 0.0 here
        cast_again = key != self._unseen_cast
        self._unseen_cast = key
        ox, oy, resolution = self._world
        # (lasers merged: the first one's sweep alone sees walls through)
        beams = laser.sweep_beams if laser is not None else 0
        if laser is not None and beams >= 2:
            laser_at, first, step = self._sweep(laser)
            laser_ranges = _f64(laser.ranges[:beams])
        else:
            laser_at, first, step, laser_ranges = (0.0, 0.0), 0.0, 0.0, _NONE
        if sonar is not None and len(sonar.ranges):
            cones = self._cones(sonar)
        else:
            cones = (_NONE, _NONE, _NONE, _NONE)
        m = _unseen_walls(
            self._clearance,
            ox,
            oy,
            resolution,
            x,
            y,
            theta,
            self._units,
            reach,
            cast_again,
            self._unseen_ranges,
            laser_at[0],
            laser_at[1],
            first,
            step,
            laser_ranges,
            *cones,
            float(half_cone),
            float(tolerance),
            self._walls,
            self._masks,
            self._unseen,
        )
        return self._unseen[:m].copy()

    def _sweep(self, laser: RangeScan) -> tuple[tuple[float, float], float, float]:
        """The laser's origin, first bearing and step (worked out again only for other
        arrays: a laser's are the same every scan)."""
        fixed = (laser.bearings, laser.origin_x, laser.origin_y)
        cached = self._laser_layout
        if cached is not None and _same_arrays(cached[0], fixed):
            return cached[1]
        sweep = (
            (float(laser.origin_x[0]), float(laser.origin_y[0])),
            float(laser.bearings[0]),
            float(laser.bearings[1] - laser.bearings[0]),
        )
        self._laser_layout = (fixed, sweep)
        return sweep

    def _cones(self, sonar: RangeScan) -> tuple[_Array, _Array, _Array, _Array]:
        """The transducers' x, y, bearings and readings as the compiled call takes them, as
        many as each of the four has (the layout converted again only for other arrays: a
        sonar ring's are the same every reading)."""
        fixed = (sonar.origin_x, sonar.origin_y, sonar.bearings)
        n = len(sonar.ranges)
        cached = self._sonar_layout
        if cached is None or not _same_arrays(cached[0], fixed) or len(cached[1][0]) != n:
            n = min(n, len(fixed[0]), len(fixed[1]), len(fixed[2]))
            layout = (_f64(fixed[0][:n]), _f64(fixed[1][:n]), _f64(fixed[2][:n]))
            cached = self._sonar_layout = (fixed, layout)
        ox, oy, bearings = cached[1]
        return ox, oy, bearings, _f64(sonar.ranges[: len(ox)])

    def keep_out_points(self, pose: Pose) -> npt.NDArray[np.float64]:
        """Points along the keep-out outlines within ``reach`` of ``pose`` (robot frame), but
        none of an area ``pose`` stands in."""
        if len(self._outline) == 0:
            return self._outline
        x, y, theta = pose
        dx = self._outline[:, 0] - x
        dy = self._outline[:, 1] - y
        near = dx * dx + dy * dy <= self.reach * self.reach
        for index, area in enumerate(self.map.keep_out):
            if area.contains(x, y):
                near &= self._owner != index
        c, s = math.cos(theta), math.sin(theta)
        return np.column_stack((c * dx[near] + s * dy[near], -s * dx[near] + c * dy[near]))
