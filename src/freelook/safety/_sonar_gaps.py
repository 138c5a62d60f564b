"""Gaps between sonar cones that the robot could not pass through anyway, closed.

A sonar ring leaves gaps between its cones (a Pioneer's front ring: 12.5° between the 50° and
30° cones). Where the laser sees nothing — glass, a thin rail — an obstacle can run through such
a gap unheard, and the approach check, which judges each point on its own, lets the robot slide
a corner into it: each cone's echo is beside the body, not ahead of it. Two neighbouring cones
whose echoes come closer together than the robot is wide leave room no robot can drive
through, so the space between them is taken as closed: points along the line between the two
cones' facing edges, at their measured ranges. Neighbours are the transducers next to each
other around the body (a silent one between two echoes leaves their gap open: it hears nothing
there). What lies inside the robot's own body is left out (no obstacle can be there).
"""

from __future__ import annotations

import math

import numba
import numpy as np
import numpy.typing as npt

from freelook.config import FootprintConfig
from freelook.hal import RangeScan

__all__ = ["gap_points", "neighbour_order"]

_Array = npt.NDArray[np.float64]
#: m at most between the points along a closed gap (less than an approach margin: no corner
#: of the margin-inflated footprint fits between two of them)
SPACING = 0.02


def neighbour_order(bearings: _Array, origin_x: _Array, origin_y: _Array) -> npt.NDArray[np.int64]:
    """The transducers in order around the body: by where each sits, seen from the centre,
    then by where it looks (two at one place, front and rear rings' side sonars)."""
    place = np.arctan2(np.asarray(origin_y, np.float64), np.asarray(origin_x, np.float64))
    return np.lexsort((np.asarray(bearings, np.float64), place)).astype(np.int64)


@numba.njit(cache=True, nogil=True)
def _gaps(
    ranges: _Array,
    bearings: _Array,
    ox: _Array,
    oy: _Array,
    order: npt.NDArray[np.int64],
    half: float,
    range_max: float,
    length: float,
    width: float,
    cx: float,
) -> _Array:
    """:func:`gap_points` in one compiled pass over the neighbouring pairs of ``order``."""
    n = order.shape[0]
    # at most one gap per neighbouring pair, each with fewer than width / SPACING + 1 points
    out = np.empty((n * (int(width / SPACING) + 2), 2))
    count = 0
    for k in range(n if n > 2 else n - 1):
        i, j = order[k], order[(k + 1) % n]
        if not (ranges[i] < range_max and ranges[j] < range_max):
            continue
        # the facing edges: the nearest pairing of i's two edges with j's two
        best, ax, ay, bx, by = math.inf, 0.0, 0.0, 0.0, 0.0
        for si in (-1.0, 1.0):
            px = ox[i] + ranges[i] * math.cos(bearings[i] + si * half)
            py = oy[i] + ranges[i] * math.sin(bearings[i] + si * half)
            for sj in (-1.0, 1.0):
                qx = ox[j] + ranges[j] * math.cos(bearings[j] + sj * half)
                qy = oy[j] + ranges[j] * math.sin(bearings[j] + sj * half)
                d = math.hypot(qx - px, qy - py)
                if d < best:
                    best, ax, ay, bx, by = d, px, py, qx, qy
        if not best < width:
            continue
        steps = max(1, math.ceil(best / SPACING))
        for s in range(1, steps):  # the edges themselves are points already
            t = s / steps
            x = ax + t * (bx - ax)
            y = ay + t * (by - ay)
            if abs(x - cx) < length / 2 and abs(y) < width / 2:
                continue  # inside the body
            out[count, 0] = x
            out[count, 1] = y
            count += 1
    return out[:count].copy()


def gap_points(
    scan: RangeScan,
    half: float,
    footprint: FootprintConfig,
    order: npt.NDArray[np.int64] | None = None,
) -> _Array:
    """Robot-frame points closing each gap narrower than ``footprint`` is wide between two
    neighbouring echoing cones of ``scan`` (``half``: each cone's half-angle), none inside the
    body. ``order``: :func:`neighbour_order` of the scan's transducers, if worked out before."""
    bearings = np.ascontiguousarray(scan.bearings, dtype=np.float64)
    ox = np.ascontiguousarray(scan.origin_x, dtype=np.float64)
    oy = np.ascontiguousarray(scan.origin_y, dtype=np.float64)
    ranges = np.ascontiguousarray(scan.ranges, dtype=np.float64)
    n = min(len(bearings), len(ox), len(oy), len(ranges))
    if order is None or len(order) != n:
        order = neighbour_order(bearings[:n], ox[:n], oy[:n])
    return _gaps(
        ranges,
        bearings,
        ox,
        oy,
        order,
        float(half),
        float(scan.range_max),
        footprint.length,
        footprint.width,
        footprint.center_forward,
    )
