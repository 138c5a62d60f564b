"""Rasterising walls (thick segments) and points into an occupancy grid."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["draw_points", "draw_segment"]


def draw_segment(
    grid: npt.NDArray[np.bool_],
    origin: tuple[float, float],
    resolution: float,
    x1: float,
    y1: float,
    x2: float,
    y2: float,
    thickness: float,
) -> None:
    """Mark every cell whose centre lies within thickness/2 of the segment (plus half a cell)."""
    rows, cols = grid.shape
    half = max(thickness, resolution) / 2
    lo_x, hi_x = min(x1, x2) - half, max(x1, x2) + half
    lo_y, hi_y = min(y1, y2) - half, max(y1, y2) + half
    j0 = max(0, math.floor((lo_x - origin[0]) / resolution))
    j1 = min(cols, math.ceil((hi_x - origin[0]) / resolution) + 1)
    i0 = max(0, math.floor((lo_y - origin[1]) / resolution))
    i1 = min(rows, math.ceil((hi_y - origin[1]) / resolution) + 1)
    if j0 >= j1 or i0 >= i1:
        return
    xs = origin[0] + (np.arange(j0, j1) + 0.5) * resolution
    ys = origin[1] + (np.arange(i0, i1) + 0.5) * resolution
    px, py = np.meshgrid(xs, ys)
    dx, dy = x2 - x1, y2 - y1
    length_sq = dx * dx + dy * dy
    if length_sq == 0.0:
        t = np.zeros_like(px)
    else:
        t = np.clip(((px - x1) * dx + (py - y1) * dy) / length_sq, 0.0, 1.0)
    dist = np.hypot(px - (x1 + t * dx), py - (y1 + t * dy))
    grid[i0:i1, j0:j1] |= dist <= half + 1e-9


def draw_points(
    grid: npt.NDArray[np.bool_],
    origin: tuple[float, float],
    resolution: float,
    points: npt.NDArray[np.float64],
) -> None:
    """Mark the cells holding each (x, y) point."""
    if len(points) == 0:
        return
    j = np.floor((points[:, 0] - origin[0]) / resolution).astype(np.int64)
    i = np.floor((points[:, 1] - origin[1]) / resolution).astype(np.int64)
    ok = (i >= 0) & (i < grid.shape[0]) & (j >= 0) & (j < grid.shape[1])
    grid[i[ok], j[ok]] = True
