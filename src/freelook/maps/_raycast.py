"""Ray casting against an occupancy grid: a compiled kernel and a plain-Python reference.

The kernel jumps through open space by the distance transform (sphere tracing) and walks cell
by cell near obstacles, so a beam costs a few dozen steps however long it is. Leaving the grid
counts as no return.
"""

from __future__ import annotations

import hashlib
import math
from typing import TypeVar

import numba
import numpy as np
import numpy.typing as npt

__all__ = [
    "cast_beams",
    "cast_rays",
    "cast_rays_from",
    "cast_rays_reference",
    "clearance_of",
    "grid_key",
]


@numba.njit(cache=True, nogil=True)
def _cast(
    grid: npt.NDArray[np.bool_],
    clearance: npt.NDArray[np.float32],
    ox: float,
    oy: float,
    resolution: float,
    xs: npt.NDArray[np.float64],
    ys: npt.NDArray[np.float64],
    angles: npt.NDArray[np.float64],
    max_range: float,
    out: npt.NDArray[np.float64],
) -> None:
    """Sphere tracing through free space, exact cell walking near obstacles.

    ``clearance[i, j]`` is the distance (cells) from cell (i, j)'s centre to the nearest
    obstacle cell centre. From any point within a cell, obstacle cells are at least
    clearance − 1.5 cells away (half-diagonals of both cells); the ray jumps a cell less.
    """
    rows, cols = grid.shape
    limit = max_range / resolution
    single = xs.shape[0] == 1
    for k in range(angles.shape[0]):
        o = 0 if single else k
        gx = (xs[o] - ox) / resolution
        gy = (ys[o] - oy) / resolution
        dx = math.cos(angles[k])
        dy = math.sin(angles[k])
        step_j = 1 if dx > 0.0 else -1
        step_i = 1 if dy > 0.0 else -1
        t_delta_x = abs(1.0 / dx) if dx != 0.0 else 1e30
        t_delta_y = abs(1.0 / dy) if dy != 0.0 else 1e30
        t = 0.0
        result = max_range
        while True:
            # (re)start a cell walk at distance t along the ray
            px = gx + dx * t
            py = gy + dy * t
            i = math.floor(py)
            j = math.floor(px)
            if i < 0 or j < 0 or i >= rows or j >= cols:
                break
            if grid[i, j]:
                result = t * resolution
                break
            t_max_x = t + ((j + 1 - px) if dx > 0.0 else (px - j)) * t_delta_x
            t_max_y = t + ((i + 1 - py) if dy > 0.0 else (py - i)) * t_delta_y
            jumped = False
            while True:
                c = clearance[i, j]
                if c > 4.0:
                    t = max(t, min(t_max_x, t_max_y)) + c - 2.5
                    jumped = True
                    break
                if t_max_x < t_max_y:
                    t = t_max_x
                    t_max_x += t_delta_x
                    j += step_j
                else:
                    t = t_max_y
                    t_max_y += t_delta_y
                    i += step_i
                if t > limit or i < 0 or j < 0 or i >= rows or j >= cols:
                    break
                if grid[i, j]:
                    result = t * resolution
                    break
            if not jumped or t > limit:
                break
        out[k] = min(result, max_range)


@numba.njit(cache=True, nogil=True)
def cast_beams(
    grid: npt.NDArray[np.bool_],
    clearance: npt.NDArray[np.float32],
    ox: float,
    oy: float,
    resolution: float,
    x: float,
    y: float,
    angles: npt.NDArray[np.float64],
    max_range: float,
    out: npt.NDArray[np.float64],
) -> None:
    """:func:`cast_rays` for compiled callers: the beams from one start point, given the grid's
    :func:`clearance_of` (its one-element start arrays made here, not in Python)."""
    xs = np.empty(1)
    ys = np.empty(1)
    xs[0] = x
    ys[0] = y
    _cast(grid, clearance, ox, oy, resolution, xs, ys, angles, max_range, out)


def clearance_map(grid: npt.NDArray[np.bool_]) -> npt.NDArray[np.float32]:
    """Distance (cells) from each cell centre to the nearest obstacle cell centre."""
    from scipy.ndimage import distance_transform_edt

    if not grid.any():
        return np.full(grid.shape, 1e9, dtype=np.float32)
    return np.asarray(distance_transform_edt(~grid), dtype=np.float32)


def grid_key(grid: npt.NDArray[np.bool_]) -> tuple[tuple[int, ...], bytes]:
    """A key equal for grids of equal shape and cells: tables computed from one serve all
    (the same map loaded twice, by the simulator and the robot, or by one trial after
    another)."""
    cells = np.ascontiguousarray(grid)
    return cells.shape, hashlib.blake2b(cells.view(np.uint8).data, digest_size=16).digest()


_K = TypeVar("_K")
_V = TypeVar("_V")
_KEPT = 8  # grids a cache below remembers; the oldest goes
_CLEARANCE_BY_ID: dict[int, tuple[npt.NDArray[np.bool_], npt.NDArray[np.float32]]] = {}
_CLEARANCE: dict[tuple[tuple[int, ...], bytes], npt.NDArray[np.float32]] = {}


def clearance_of(grid: npt.NDArray[np.bool_]) -> npt.NDArray[np.float32]:
    """:func:`clearance_map` of ``grid``, computed once per map (the grid object is looked up
    first: a cast should not hash its grid)."""
    cached = _CLEARANCE_BY_ID.get(id(grid))
    if cached is not None and cached[0] is grid:
        return cached[1]
    key = grid_key(grid)
    clearance = _CLEARANCE.get(key)
    if clearance is None:
        clearance = clearance_map(grid)
        _remember(_CLEARANCE, key, clearance)
    _remember(_CLEARANCE_BY_ID, id(grid), (grid, clearance))
    return clearance


def _remember(cache: dict[_K, _V], key: _K, value: _V) -> None:
    if len(cache) >= _KEPT:
        del cache[next(iter(cache))]
    cache[key] = value


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
    cast_beams(
        grid,
        clearance_of(grid),
        origin[0],
        origin[1],
        resolution,
        float(x),
        float(y),
        angles,
        float(max_range),
        result,
    )
    return result


def cast_rays_from(
    grid: npt.NDArray[np.bool_],
    origin: tuple[float, float],
    resolution: float,
    xs: npt.NDArray[np.float64],
    ys: npt.NDArray[np.float64],
    angles: npt.NDArray[np.float64],
    max_range: float,
) -> npt.NDArray[np.float64]:
    """Like :func:`cast_rays` with one start point per ray."""
    result = np.empty(angles.shape[0])
    _cast(
        grid,
        clearance_of(grid),
        origin[0],
        origin[1],
        resolution,
        xs,
        ys,
        angles,
        float(max_range),
        result,
    )
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
