"""Ray casting against an occupancy grid: compiled kernels (and a slow, independent reference).

A beam jumps through open space by the grid's clearance table (sphere tracing) and walks cell
by cell near obstacles, so it costs a few dozen steps however long it is. The distance to the
hit is the crossing of the hit cell's boundary worked out from that boundary alone, so how the
beam got there (which jumps, which walk) never changes a bit of it: the ranges are those of a
walk through every cell. Leaving the grid counts as no return.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from typing import TypeVar

import numba
import numpy as np
import numpy.typing as npt

from freelook.maps._distance import distance_to_background, grow
from freelook.maps._kept import remember

__all__ = [
    "cast_beams",
    "cast_beams_from",
    "cast_fan",
    "cast_rays",
    "cast_rays_from",
    "cast_rays_reference",
    "clearance_of",
    "enclosed_of",
    "grid_key",
    "unit_vectors",
]

# A beam jumps from a cell whose clearance is at least this (cells), walks otherwise: a shorter
# jump costs more than the cell steps it saves.
_JUMP_FROM = 1.5
# Each jump stops this far (cells) short of its clearance: more than float32's rounding of it.
_JUMP_MARGIN = 0.01
# What a beam is doing: still going, or done (hit an obstacle cell, or left the grid or reach).
_GOING, _HIT, _MISSED = 0, 1, 2
# A beam before its first move: (what it is doing, walking, t, i, j, bx, by, t_x, t_y).
_START = (_GOING, False, 0.0, 0, 0, 0.0, 0.0, 0.0, 0.0)


@numba.njit(cache=True, nogil=True, inline="always")
def _ray(
    gx: float, gy: float, dx: float, dy: float, limit: float
) -> tuple[float, float, float, float, float, float, int, int, float]:
    """A beam's fixed numbers: start (gx, gy) and unit direction (dx, dy) in grid cells, their
    reciprocals, the cell steps and the reach (cells)."""
    inv_x = 1.0 / dx if dx != 0.0 else 0.0
    inv_y = 1.0 / dy if dy != 0.0 else 0.0
    return (gx, gy, dx, dy, inv_x, inv_y, 1 if dy > 0.0 else -1, 1 if dx > 0.0 else -1, limit)


@numba.njit(cache=True, nogil=True, inline="always")
def _step(
    clearance: npt.NDArray[np.float32],
    ray: tuple[float, float, float, float, float, float, int, int, float],
    beam: tuple[int, bool, float, int, int, float, float, float, float],
) -> tuple[int, bool, float, int, int, float, float, float, float]:
    """One move of a beam: a jump by the clearance of the cell it is in, or, near an obstacle,
    one cell of a walk whose crossings are worked out from the boundary crossed. ``t`` is the
    distance travelled (cells), the hit's when done."""
    gx, gy, dx, dy, inv_x, inv_y, step_i, step_j, limit = ray
    _, walking, t, i, j, bx, by, t_x, t_y = beam
    rows, cols = clearance.shape
    rows_f, cols_f = float(rows), float(cols)
    if not walking:
        py = gy + dy * t
        px = gx + dx * t
        # off the grid, or not a number: compared before converting, so no start however far
        # off makes an index
        if not (py >= 0.0 and px >= 0.0 and py < rows_f and px < cols_f):
            return (_MISSED, walking, t, i, j, bx, by, t_x, t_y)
        i = int(py)  # the floor, on the grid
        j = int(px)
        c = clearance[i, j]
        if c < 0.0:
            return (_HIT, walking, t, i, j, bx, by, t_x, t_y)
        if c >= _JUMP_FROM:
            t += c - _JUMP_MARGIN
            return (_MISSED if t > limit else _GOING, walking, t, i, j, bx, by, t_x, t_y)
        bx = float(j + 1 if dx > 0.0 else j)
        by = float(i + 1 if dy > 0.0 else i)
        t_x = (bx - gx) * inv_x if dx != 0.0 else 1e30
        t_y = (by - gy) * inv_y if dy != 0.0 else 1e30
        return (_GOING, True, t, i, j, bx, by, t_x, t_y)
    # a crossing a jump landed past (the beam on a cell's boundary) does not take it back
    if t_x < t_y:
        t = max(t, t_x)
        j += step_j
        bx += step_j
        t_x = (bx - gx) * inv_x
    else:
        t = max(t, t_y)
        i += step_i
        by += step_i
        t_y = (by - gy) * inv_y
    if t > limit or i < 0 or j < 0 or i >= rows or j >= cols:
        return (_MISSED, walking, t, i, j, bx, by, t_x, t_y)
    c = clearance[i, j]
    if c < 0.0:
        return (_HIT, walking, t, i, j, bx, by, t_x, t_y)
    if c >= _JUMP_FROM:
        t += c - _JUMP_MARGIN
        return (_MISSED if t > limit else _GOING, False, t, i, j, bx, by, t_x, t_y)
    return (_GOING, walking, t, i, j, bx, by, t_x, t_y)


@numba.njit(cache=True, nogil=True)
def _trace(
    clearance: npt.NDArray[np.float32],
    gx: npt.NDArray[np.float64],
    gy: npt.NDArray[np.float64],
    dx: npt.NDArray[np.float64],
    dy: npt.NDArray[np.float64],
    limit: float,
    resolution: float,
    max_range: float,
    out: npt.NDArray[np.float64],
) -> None:
    """Beam k from (``gx[k]``, ``gy[k]``), or from the one start, along (``dx[k]``, ``dy[k]``),
    in grid cells: its range (m) into ``out[k]``, ``max_range`` where nothing is hit.

    Three beams move in turn: each move waits on the last (a cell's clearance decides the
    next), and a core works on one beam while another's read is on its way."""
    n = dx.shape[0]
    single = gx.shape[0] == 1
    for k in range(0, n, 3):
        ka, kb, kc = k, min(k + 1, n - 1), min(k + 2, n - 1)
        oa, ob, oc = (0, 0, 0) if single else (ka, kb, kc)
        ray_a = _ray(gx[oa], gy[oa], dx[ka], dy[ka], limit)
        ray_b = _ray(gx[ob], gy[ob], dx[kb], dy[kb], limit)
        ray_c = _ray(gx[oc], gy[oc], dx[kc], dy[kc], limit)
        a = b = c = _START
        while a[0] == _GOING or b[0] == _GOING or c[0] == _GOING:
            if a[0] == _GOING:
                a = _step(clearance, ray_a, a)
            if b[0] == _GOING:
                b = _step(clearance, ray_b, b)
            if c[0] == _GOING:
                c = _step(clearance, ray_c, c)
        out[ka] = max_range if a[0] == _MISSED else min(a[2] * resolution, max_range)
        out[kb] = max_range if b[0] == _MISSED else min(b[2] * resolution, max_range)
        out[kc] = max_range if c[0] == _MISSED else min(c[2] * resolution, max_range)


@numba.njit(cache=True, nogil=True)
def cast_beams_from(
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
    """Each beam from (``xs[k]``, ``ys[k]``), or from the one start point, at world-frame
    ``angles[k]``: its range, ``max_range`` where nothing is hit (compiled callers; against
    the grid's :func:`clearance_of`, grid origin ``ox``, ``oy``)."""
    n = angles.shape[0]
    gx = np.empty(xs.shape[0])
    gy = np.empty(xs.shape[0])
    for k in range(xs.shape[0]):
        gx[k] = (xs[k] - ox) / resolution
        gy[k] = (ys[k] - oy) / resolution
    dx = np.empty(n)
    dy = np.empty(n)
    for k in range(n):
        dx[k] = math.cos(angles[k])
        dy[k] = math.sin(angles[k])
    _trace(clearance, gx, gy, dx, dy, max_range / resolution, resolution, max_range, out)


@numba.njit(cache=True, nogil=True)
def cast_beams(
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
    """:func:`cast_rays` for compiled callers: the beams from one start point at world-frame
    ``angles``, against the grid's :func:`clearance_of` (grid origin ``ox``, ``oy``)."""
    xs = np.empty(1)
    ys = np.empty(1)
    xs[0] = x
    ys[0] = y
    cast_beams_from(clearance, ox, oy, resolution, xs, ys, angles, max_range, out)


def unit_vectors(angles: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The rows (cos, sin) of ``angles``: a fixed fan's beams as :func:`cast_fan` takes them,
    worked out once (the fan turns with the robot, its beams never turn in it)."""
    units: npt.NDArray[np.float64] = np.column_stack((np.cos(angles), np.sin(angles)))
    return units


@numba.njit(cache=True, nogil=True)
def cast_fan(
    clearance: npt.NDArray[np.float32],
    world: tuple[float, float, float],
    pose: tuple[float, float, float],
    units: npt.NDArray[np.float64],
    max_range: float,
    out: npt.NDArray[np.float64],
) -> None:
    """:func:`cast_beams` for a sensor's fixed fan at ``pose`` (x, y, heading) in the grid
    ``world`` (origin x, y, resolution): each beam's unit vector in the sensor's frame
    (``units[k]``: cos, sin of its angle, worked out once) turned by the heading, not a
    cosine and sine per beam. At heading 0 the ranges are :func:`cast_beams`' to the bit."""
    ox, oy, resolution = world
    x, y, heading = pose
    c = math.cos(heading)
    s = math.sin(heading)
    n = units.shape[0]
    gx = np.empty(1)
    gy = np.empty(1)
    gx[0] = (x - ox) / resolution
    gy[0] = (y - oy) / resolution
    dx = np.empty(n)
    dy = np.empty(n)
    for k in range(n):
        dx[k] = units[k, 0] * c - units[k, 1] * s
        dy[k] = units[k, 1] * c + units[k, 0] * s
    _trace(clearance, gx, gy, dx, dy, max_range / resolution, resolution, max_range, out)


def clearance_map(grid: npt.NDArray[np.bool_]) -> npt.NDArray[np.float32]:
    """How far (cells) a beam may go from anywhere in each free cell without touching an
    obstacle cell: the distance between the two cells' squares, which is the distance from the
    cell's centre to the nearest centre of the obstacles grown by a cell each way. -1 on an
    obstacle cell."""
    if not grid.any():
        return np.full(grid.shape, 1e9, dtype=np.float32)
    clearance = distance_to_background(~grow(grid)).astype(np.float32)
    clearance[grid] = -1.0
    return clearance


def grid_key(grid: npt.NDArray[np.bool_]) -> tuple[tuple[int, ...], bytes]:
    """A key equal for grids of equal shape and cells: tables computed from one serve all
    (the same map loaded twice, by the simulator and the robot, or by one trial after
    another)."""
    cells = np.ascontiguousarray(grid)
    return cells.shape, hashlib.blake2b(cells.view(np.uint8).data, digest_size=16).digest()


@numba.njit(cache=True, nogil=True)
def _open_to_edge(grid: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """The free cells joined to the grid's edge through free cells, corners included."""
    rows, cols = grid.shape
    reached = np.zeros((rows, cols), dtype=np.bool_)
    stack = np.empty(rows * cols, dtype=np.int64)  # each cell is pushed at most once
    top = 0
    for i in range(rows):
        for j in range(cols):
            edge = i == 0 or j == 0 or i == rows - 1 or j == cols - 1
            if edge and not grid[i, j]:
                reached[i, j] = True
                stack[top] = i * cols + j
                top += 1
    while top > 0:
        top -= 1
        i, j = divmod(stack[top], cols)
        for ni in range(max(i - 1, 0), min(i + 2, rows)):
            for nj in range(max(j - 1, 0), min(j + 2, cols)):
                if not grid[ni, nj] and not reached[ni, nj]:
                    reached[ni, nj] = True
                    stack[top] = ni * cols + nj
                    top += 1
    return reached


def enclosed_map(grid: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """The cells from which every beam hits an obstacle cell before it leaves the grid: the
    obstacle cells, and the free cells walled off from the grid's edge.

    A beam's cells run from one to a neighbour (corners included); had a beam from a free cell
    met no obstacle cell before the edge, its cells would join that cell to the edge."""
    enclosed: npt.NDArray[np.bool_] = ~_open_to_edge(np.ascontiguousarray(grid, dtype=np.bool_))
    return enclosed


_V = TypeVar("_V")
_GridKey = tuple[tuple[int, ...], bytes]
_CLEARANCE_BY_ID: dict[int, tuple[npt.NDArray[np.bool_], npt.NDArray[np.float32]]] = {}
_CLEARANCE: dict[_GridKey, npt.NDArray[np.float32]] = {}
_ENCLOSED_BY_ID: dict[int, tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]] = {}
_ENCLOSED: dict[_GridKey, npt.NDArray[np.bool_]] = {}


def clearance_of(grid: npt.NDArray[np.bool_]) -> npt.NDArray[np.float32]:
    """:func:`clearance_map` of ``grid``, computed once per map (the grid object is looked up
    first: a cast should not hash its grid)."""
    return _per_grid(grid, clearance_map, _CLEARANCE_BY_ID, _CLEARANCE)


def enclosed_of(grid: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """:func:`enclosed_map` of ``grid``, computed once per map, as :func:`clearance_of`."""
    return _per_grid(grid, enclosed_map, _ENCLOSED_BY_ID, _ENCLOSED)


def _per_grid(
    grid: npt.NDArray[np.bool_],
    compute: Callable[[npt.NDArray[np.bool_]], _V],
    by_id: dict[int, tuple[npt.NDArray[np.bool_], _V]],
    by_key: dict[_GridKey, _V],
) -> _V:
    """``compute(grid)``, kept for the grid object and for any grid of the same cells."""
    cached = by_id.get(id(grid))
    if cached is not None and cached[0] is grid:
        return cached[1]
    key = grid_key(grid)
    if key in by_key:
        value = by_key[key]
    else:
        value = compute(grid)
        remember(by_key, key, value)
    remember(by_id, id(grid), (grid, value))
    return value


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
    cast_beams_from(
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
