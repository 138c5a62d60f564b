"""Footprint-against-grid collision checks, compiled."""

from __future__ import annotations

import itertools
import math

import numba
import numpy as np
import numpy.typing as npt

__all__ = ["footprint_hits", "perimeter_points"]


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
