"""The obstacle memory's compiled control cycle: clearing what the sensors see through, taking
in fresh readings, forgetting the old, and the points outside the laser's view, in one call.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numba
import numpy as np
import numpy.typing as npt

from freelook.safety._kernels import (
    _beams_wedge,
    _beyond_beam,
    in_cones,
    outside_sweep,
    to_frame,
)

__all__ = [
    "Cones",
    "Fresh",
    "MemorySettings",
    "Odometry",
    "Remembered",
    "Sweep",
    "compile_memory_cycle",
    "memory_cycle",
    "remember",
]

_Array = npt.NDArray[np.float64]
_Mask = npt.NDArray[np.bool_]


class Remembered(NamedTuple):
    """The obstacle memory's points: odometry-frame positions, stamps, from the laser?"""

    xy: _Array
    stamp: _Array
    laser: _Mask


class Odometry(NamedTuple):
    """The robot's odometry pose at ``now``: position and heading (cosine, sine)."""

    x: float
    y: float
    c: float
    s: float
    now: float


class Sweep(NamedTuple):
    """A laser's sweep in the robot frame: origin, first bearing, step, last bearing, ranges
    (empty: no laser)."""

    x: float
    y: float
    first: float
    step: float
    last: float
    ranges: _Array


class Cones(NamedTuple):
    """Sonar transducers in the robot frame: origins, bearings and readings (empty: none)."""

    x: _Array
    y: _Array
    bearing: _Array
    reach: _Array


class MemorySettings(NamedTuple):
    """How the memory clears (sensor ``tolerance``, sonar ``half_cone``), how long
    (``seconds``) and how far (``reach``) it remembers, and its grid's ``cell``."""

    tolerance: float
    half_cone: float
    seconds: float
    reach: float
    cell: float


class Fresh(NamedTuple):
    """This moment's readings in the robot frame, the first ``laser_count`` the laser's; taken
    in only when ``due``."""

    points: _Array
    laser_count: int
    due: bool


#: A code's multiplier of a cell's column: rows this far apart would share codes.
_ROW_SPAN = 1_000_003


@numba.njit(cache=True, nogil=True)
def remember(
    fresh: Fresh,
    memory: Remembered,
    odometry: Odometry,
    limits: tuple[float, float, float],
    out: Remembered,
) -> int:
    """The obstacle memory's update: the ``fresh`` readings placed at ``odometry`` and stamped
    its time, before the remembered points; those newer than ``limits[0]`` and nearer than
    ``limits[1]`` kept; of them the first in each grid cell (side ``limits[2]``) and source,
    ordered by cell (column, then row; a stable sort). Writes ``out`` and returns how many.

    A cell is coded relative to the robot's own (kept points are within the reach of it, so
    the codes stay small wherever the robot is); cells are ordered the same as by their
    absolute indices."""
    x, y, c, s, now = odometry
    since, reach, cell = limits
    home0 = np.floor(x / cell)
    home1 = np.floor(y / cell)
    points, laser_count = fresh.points, fresh.laser_count
    xy, stamp, laser = memory
    out_xy, out_stamp, out_laser = out
    n_fresh = points.shape[0]
    n = n_fresh + xy.shape[0]
    near_xy = np.empty((n, 2))
    near_stamp = np.empty(n)
    near_laser = np.empty(n, dtype=np.bool_)
    code = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        if i < n_fresh:
            wx = x + c * points[i, 0] - s * points[i, 1]
            wy = y + s * points[i, 0] + c * points[i, 1]
            when = now
            is_laser = i < laser_count
        else:
            wx = xy[i - n_fresh, 0]
            wy = xy[i - n_fresh, 1]
            when = stamp[i - n_fresh]
            is_laser = laser[i - n_fresh]
        if not (when > since and math.hypot(wx - x, wy - y) < reach):
            continue
        k0 = int(np.floor(wx / cell) - home0)
        k1 = int(np.floor(wy / cell) - home1)
        code[m] = (k0 * _ROW_SPAN + k1) * 2 + (1 if is_laser else 0)
        near_xy[m, 0] = wx
        near_xy[m, 1] = wy
        near_stamp[m] = when
        near_laser[m] = is_laser
        m += 1
    order = np.argsort(code[:m], kind="mergesort")
    kept = 0
    for r in range(m):
        i = order[r]
        if r > 0 and code[i] == code[order[r - 1]]:
            continue
        out_xy[kept, 0] = near_xy[i, 0]
        out_xy[kept, 1] = near_xy[i, 1]
        out_stamp[kept] = near_stamp[i]
        out_laser[kept] = near_laser[i]
        kept += 1
    return kept


@numba.njit(cache=True, nogil=True)
def _compact(
    keep: _Mask, xy: _Array, stamp: _Array, laser: _Mask, local: _Array
) -> tuple[_Array, _Array, _Mask, _Array]:
    """The rows ``keep`` marks of the four arrays (copies, in order; the arrays themselves when
    it marks them all, as most cycles do)."""
    m = 0
    for i in range(keep.shape[0]):
        m += keep[i]
    if m == keep.shape[0]:
        return xy, stamp, laser, local
    out_xy = np.empty((m, 2))
    out_stamp = np.empty(m)
    out_laser = np.empty(m, dtype=np.bool_)
    out_local = np.empty((m, 2))
    k = 0
    for i in range(keep.shape[0]):
        if keep[i]:
            out_xy[k, 0] = xy[i, 0]
            out_xy[k, 1] = xy[i, 1]
            out_stamp[k] = stamp[i]
            out_laser[k] = laser[i]
            out_local[k, 0] = local[i, 0]
            out_local[k, 1] = local[i, 1]
            k += 1
    return out_xy, out_stamp, out_laser, out_local


@numba.njit(cache=True, nogil=True)
def _cleared(
    local: _Array, laser: _Mask, sweep: Sweep, cones: Cones, settings: MemorySettings
) -> _Mask:
    """Which points stay: not laser points the sweep passes beyond, nor points inside a sonar
    cone nearer than its reading."""
    n = local.shape[0]
    keep = np.ones(n, dtype=np.bool_)
    ranges = sweep.ranges
    if ranges.shape[0] > 0:  # the laser's points it passes beyond (the sonar's stay)
        edges = _beams_wedge(sweep.first, sweep.step, ranges.shape[0])
        for i in range(n):
            if laser[i]:
                keep[i] = not _beyond_beam(
                    local[i, 0] - sweep.x,
                    local[i, 1] - sweep.y,
                    edges,
                    sweep.first,
                    sweep.step,
                    ranges,
                    settings.tolerance,
                )
    if cones.x.shape[0] > 0 and n > 0:
        hit = np.empty(n, dtype=np.bool_)
        in_cones(
            local,
            cones.x,
            cones.y,
            cones.bearing,
            cones.reach,
            settings.half_cone,
            settings.tolerance,
            hit,
        )
        for i in range(n):
            keep[i] = keep[i] and not hit[i]
    return keep


@numba.njit(cache=True, nogil=True)
def _outside_view(local: _Array, sweep: Sweep) -> _Array:
    """The points outside the sweep's view (all of them without a laser)."""
    m = local.shape[0]
    outside = np.ones(m, dtype=np.bool_)
    if sweep.ranges.shape[0] > 0:
        outside_sweep(local, sweep.x, sweep.y, sweep.first, sweep.last, outside)
    count = 0
    for i in range(m):
        count += outside[i]
    points = np.empty((count, 2))
    k = 0
    for i in range(m):
        if outside[i]:
            points[k, 0] = local[i, 0]
            points[k, 1] = local[i, 1]
            k += 1
    return points


@numba.njit(cache=True, nogil=True)
def memory_cycle(
    memory: Remembered,
    odometry: Odometry,
    sweep: Sweep,
    cones: Cones,
    settings: MemorySettings,
    fresh: Fresh,
) -> tuple[Remembered, _Array, _Array, float]:
    """The obstacle memory's control cycle: the remembered laser points the sweep passes
    beyond forgotten, then those inside a sonar cone nearer than its reading; the ``fresh``
    readings taken in when due (:func:`remember`); the old forgotten; the rest in the robot
    frame, and those outside the sweep's view.

    Returns (the memory, its points in the robot frame, those outside the sweep's view, the
    oldest stamp).
    """
    x, y, c, s, now = odometry
    xy, stamp, laser = memory
    local = np.empty((xy.shape[0], 2))
    to_frame(xy, x, y, c, s, local)
    keep = _cleared(local, laser, sweep, cones, settings)
    xy, stamp, laser, local = _compact(keep, xy, stamp, laser, local)
    if fresh.due:
        m = fresh.points.shape[0] + xy.shape[0]
        out_xy, out_stamp, out_laser = np.empty((m, 2)), np.empty(m), np.empty(m, dtype=np.bool_)
        out = Remembered(out_xy, out_stamp, out_laser)
        limits = (now - settings.seconds, settings.reach, settings.cell)
        kept = remember(fresh, Remembered(xy, stamp, laser), odometry, limits, out)
        xy, stamp, laser = out_xy[:kept], out_stamp[:kept], out_laser[:kept]
        local = np.empty((kept, 2))
        to_frame(xy, x, y, c, s, local)
    young = np.empty(xy.shape[0], dtype=np.bool_)
    oldest = math.inf
    for i in range(xy.shape[0]):
        young[i] = stamp[i] > now - settings.seconds
        if young[i] and stamp[i] < oldest:
            oldest = stamp[i]
    xy, stamp, laser, local = _compact(young, xy, stamp, laser, local)
    points = _outside_view(local, sweep)
    return Remembered(xy, stamp, laser), local, points, oldest


@functools.cache
def compile_memory_cycle() -> None:
    """Compile the memory's cycle now (or load it from numba's cache), not in the first
    control cycle."""
    points = np.zeros((1, 2))
    one = np.ones(1)
    out = np.zeros(1, dtype=np.bool_)
    memory_cycle(
        Remembered(points, one, out),
        Odometry(0.0, 0.0, 1.0, 0.0, 1.0),
        Sweep(0.0, 0.0, -1.0, 0.1, 1.0, one),
        Cones(one, one, one, one),
        MemorySettings(0.1, 0.2, 1.0, 1.0, 0.1),
        Fresh(points, 1, True),
    )
