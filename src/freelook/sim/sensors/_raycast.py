"""Ray casting against an occupancy grid: a compiled DDA kernel and a plain-Python reference.

The kernel walks each beam cell by cell (Amanatides–Woo) and stops at the first occupied cell,
so its cost grows with the free distance only. Leaving the grid counts as no return.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import numpy.typing as npt

__all__ = ["cast_rays", "cast_rays_reference"]


@numba.njit(cache=True, nogil=True)
def _cast(
    grid: npt.NDArray[np.bool_],
    ox: float,
    oy: float,
    resolution: float,
    x: float,
    y: float,
    angles: npt.NDArray[np.float64],
    max_range: float,
    out: npt.NDArray[np.float64],
) -> None:
    rows, cols = grid.shape
    gx = (x - ox) / resolution
    gy = (y - oy) / resolution
    limit = max_range / resolution
    for k in range(angles.shape[0]):
        dx = math.cos(angles[k])
        dy = math.sin(angles[k])
        i = math.floor(gy)
        j = math.floor(gx)
        if i < 0 or j < 0 or i >= rows or j >= cols:
            out[k] = max_range
            continue
        if grid[i, j]:
            out[k] = 0.0
            continue
        step_j = 1 if dx > 0 else -1
        step_i = 1 if dy > 0 else -1
        t_delta_x = abs(1.0 / dx) if dx != 0.0 else 1e30
        t_delta_y = abs(1.0 / dy) if dy != 0.0 else 1e30
        if dx > 0:
            t_max_x = (j + 1 - gx) * t_delta_x
        elif dx < 0:
            t_max_x = (gx - j) * t_delta_x
        else:
            t_max_x = 1e30
        if dy > 0:
            t_max_y = (i + 1 - gy) * t_delta_y
        elif dy < 0:
            t_max_y = (gy - i) * t_delta_y
        else:
            t_max_y = 1e30
        result = max_range
        while True:
            if t_max_x < t_max_y:
                t = t_max_x
                t_max_x += t_delta_x
                j += step_j
            else:
                t = t_max_y
                t_max_y += t_delta_y
                i += step_i
            if t > limit:
                break
            if i < 0 or j < 0 or i >= rows or j >= cols:
                break
            if grid[i, j]:
                result = t * resolution
                break
        out[k] = result


def cast_rays(
    grid: npt.NDArray[np.bool_],
    origin: tuple[float, float],
    resolution: float,
    x: float,
    y: float,
    angles: npt.NDArray[np.float64],
    max_range: float,
    out: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """Distance from (x, y) along each world-frame angle to the first occupied cell."""
    result = np.empty(angles.shape[0]) if out is None else out
    _cast(grid, origin[0], origin[1], resolution, x, y, angles, max_range, result)
    return result


def cast_rays_reference(
    grid: npt.NDArray[np.bool_],
    origin: tuple[float, float],
    resolution: float,
    x: float,
    y: float,
    angles: npt.NDArray[np.float64],
    max_range: float,
    step_fraction: float = 0.05,
) -> npt.NDArray[np.float64]:
    """A per-beam Python loop marching in small fixed steps: slow, simple, independent."""
    rows, cols = grid.shape
    step = resolution * step_fraction
    out = np.full(len(angles), float(max_range))
    for k, angle in enumerate(angles.tolist()):
        c, s = math.cos(angle), math.sin(angle)
        distance = 0.0
        while distance <= max_range:
            px, py = x + c * distance, y + s * distance
            i = math.floor((py - origin[1]) / resolution)
            j = math.floor((px - origin[0]) / resolution)
            if not (0 <= i < rows and 0 <= j < cols):
                break
            if grid[i, j]:
                out[k] = distance
                break
            distance += step
    return out
