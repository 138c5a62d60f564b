"""Footprint-against-grid collision checks, compiled."""

from __future__ import annotations

import itertools
import math

import numba
import numpy as np
import numpy.typing as npt

__all__ = ["footprint_clear", "footprint_hits", "perimeter_points"]

#: Cells :func:`footprint_clear` keeps between an outline and any obstacle cell: far more than
#: the float32 rounding of the clearance and the outline's own arithmetic.
_CLEAR_MARGIN = 0.01


def perimeter_points(
    length: float, width: float, center_forward: float, spacing: float
) -> npt.NDArray[np.float64]:
    """Points (N×2, body frame) along the footprint rectangle, at most ``spacing`` apart."""
    hl, hw = length / 2, width / 2
    corners = np.array([[hl, hw], [-hl, hw], [-hl, -hw], [hl, -hw], [hl, hw]])
    corners[:, 0] += center_forward
    points = []
    for a, b in itertools.pairwise(corners):
        n = max(1, math.ceil(float(np.hypot(*(b - a))) / spacing))
        t = np.arange(n) / n
        points.append(a + t[:, None] * (b - a))
    return np.vstack(points)


@numba.njit(cache=True, nogil=True)
def footprint_hits(
    grid: npt.NDArray[np.bool_],
    ox: float,
    oy: float,
    resolution: float,
    x: float,
    y: float,
    theta: float,
    points: npt.NDArray[np.float64],
) -> int:
    """Bit flags of which footprint points touch an obstacle: 1 front half, 2 rear half.

    Points outside the grid count as obstacles.
    """
    rows, cols = grid.shape
    c = math.cos(theta)
    s = math.sin(theta)
    flags = 0
    for k in range(points.shape[0]):
        bx = points[k, 0]
        by = points[k, 1]
        px = x + c * bx - s * by
        py = y + s * bx + c * by
        j = math.floor((px - ox) / resolution)
        i = math.floor((py - oy) / resolution)
        if i < 0 or j < 0 or i >= rows or j >= cols or grid[i, j]:
            flags |= 1 if bx >= 0.0 else 2
    return flags


@numba.njit(cache=True, nogil=True, inline="always")
def footprint_clear(
    clearance: npt.NDArray[np.float32],
    ox: float,
    oy: float,
    resolution: float,
    x: float,
    y: float,
    reach: float,
) -> bool:
    """Whether nothing within ``reach`` (m) of (x, y) lies in an obstacle cell or off the grid:
    then :func:`footprint_hits` of an outline reaching no further from (x, y) finds no hit,
    without a look at each of its points. ``clearance``: the grid's
    :func:`~freelook.maps.clearance_of` (how far from anywhere in a cell no obstacle cell is).
    False near the grid's edge, near an obstacle, or for a pose not finite."""
    rows, cols = clearance.shape
    gx = (x - ox) / resolution
    gy = (y - oy) / resolution
    r = reach / resolution + _CLEAR_MARGIN
    if not (gx - r >= 0.0 and gy - r >= 0.0 and gx + r < cols and gy + r < rows):
        return False
    return bool(clearance[int(gy), int(gx)] > r)
