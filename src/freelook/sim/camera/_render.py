"""A first-person software renderer: one ray per image column through the wall grid.

Walls have a height and a shade per face, with faint metre lines so that motion is visible;
the floor carries a metre grid and the ceiling a gradient; boxes and cylinders are intersected
analytically per column and drawn with correct occlusion. Tilt shifts the horizon (y-shearing).
The kernel is compiled and writes into a preallocated frame.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import numpy.typing as npt

__all__ = ["render_frame"]

_FLOOR = (118.0, 112.0, 104.0)
_FLOOR_LINE = (88.0, 84.0, 78.0)
_CEILING_TOP = (150.0, 160.0, 175.0)
_CEILING_HORIZON = (205.0, 208.0, 212.0)
_WALL = (200.0, 196.0, 186.0)


@numba.njit(cache=True, nogil=True)
def _wall_hit(
    grid: npt.NDArray[np.bool_], gx: float, gy: float, dx: float, dy: float, limit: float
) -> tuple[float, int, float]:
    """(distance in cells, face 0 = x / 1 = y, position along the face in cells)."""
    rows, cols = grid.shape
    i = math.floor(gy)
    j = math.floor(gx)
    step_j = 1 if dx > 0 else -1
    step_i = 1 if dy > 0 else -1
    t_dx = abs(1.0 / dx) if dx != 0.0 else 1e30
    t_dy = abs(1.0 / dy) if dy != 0.0 else 1e30
    t_mx = ((j + 1 - gx) if dx > 0 else (gx - j)) * t_dx if dx != 0.0 else 1e30
    t_my = ((i + 1 - gy) if dy > 0 else (gy - i)) * t_dy if dy != 0.0 else 1e30
    t = 0.0
    face = 0
    while t < limit:
        if t_mx < t_my:
            t = t_mx
            t_mx += t_dx
            j += step_j
            face = 0
        else:
            t = t_my
            t_my += t_dy
            i += step_i
            face = 1
        if i < 0 or j < 0 or i >= rows or j >= cols:
            return limit, face, 0.0
        if grid[i, j]:
            along = gy + dy * t if face == 0 else gx + dx * t
            return t, face, along
    return limit, face, 0.0


_Image = npt.NDArray[np.uint8]
_Objects = npt.NDArray[np.float64]
#: what every column shares: focal length (pixels), the horizon's row, the camera's x, y, z
_View = tuple[float, float, float, float, float]
#: a column's ray: its direction (dx, dy) and the cosine of its angle off the optical axis
_Ray = tuple[float, float, float]


@numba.njit(cache=True, nogil=True)
def _background(
    out: _Image, u: int, view: _View, ray: _Ray, wall: tuple[float, int, float], wall_height: float
) -> None:
    """Column ``u``'s ceiling (a gradient), wall (``wall``: distance in metres, face, position
    along it; shaded by face and distance, with metre lines) and floor (a metre grid)."""
    height = out.shape[0]
    focal, horizon, _, _, cam_z = view
    wall_dist, face, along = wall
    perp = max(wall_dist * ray[2], 1e-3)
    top = horizon - focal * (wall_height - cam_z) / perp
    bottom = horizon + focal * cam_z / perp
    # the wall's shade: its face, a fade with distance, metre lines along it and at mid height
    shade = (1.0 if face == 0 else 0.78) / (1.0 + 0.03 * wall_dist)
    frac = along % 1.0
    line_along = frac < 0.015 or frac > 0.985
    dx, dy, cos_off = ray
    cam_x, cam_y = view[2], view[3]
    for v in range(height):
        fv = v + 0.5
        if fv < top:  # the ceiling: a gradient toward the horizon
            k = min(1.0, max(0.0, (fv - (horizon - height)) / height))
            out[v, u, 0] = int(_CEILING_TOP[0] + (_CEILING_HORIZON[0] - _CEILING_TOP[0]) * k)
            out[v, u, 1] = int(_CEILING_TOP[1] + (_CEILING_HORIZON[1] - _CEILING_TOP[1]) * k)
            out[v, u, 2] = int(_CEILING_TOP[2] + (_CEILING_HORIZON[2] - _CEILING_TOP[2]) * k)
        elif fv < bottom and wall_dist < 59.0:
            z = cam_z + (horizon - fv) * perp / focal
            s = shade
            if line_along or abs(z - 1.0) < 0.012 * (1.0 + 0.2 * wall_dist):
                s *= 0.8
            if z < 0.1:
                s *= 0.6  # skirting board
            out[v, u, 0] = int(_WALL[0] * s)
            out[v, u, 1] = int(_WALL[1] * s)
            out[v, u, 2] = int(_WALL[2] * s)
        else:  # the floor where this pixel's ray meets z = 0, with a metre grid
            below = fv - horizon
            if below <= 0.0:
                below = 1e-3
            dist = focal * cam_z / below / cos_off
            ax = (cam_x + dx * dist) % 1.0
            ay = (cam_y + dy * dist) % 1.0
            w = 0.012 * (1.0 + dist)
            fade = 1.0 / (1.0 + 0.02 * dist)
            line = ax < w or ax > 1.0 - w or ay < w or ay > 1.0 - w
            colour = _FLOOR_LINE if line else _FLOOR
            out[v, u, 0] = int(colour[0] * fade)
            out[v, u, 1] = int(colour[1] * fade)
            out[v, u, 2] = int(colour[2] * fade)


@numba.njit(cache=True, nogil=True, inline="always")
def _slab(
    p: float, r: float, half: float, t0: float, t1: float, face: int, axis: int
) -> tuple[bool, float, float, int]:
    """The ray p + t·r (one axis of a box's frame) within ±``half``: whether it can be, and
    [t0, t1] narrowed to it; ``face`` becomes ``axis`` when this axis is entered last."""
    if abs(r) < 1e-12:
        return not abs(p) > half, t0, t1, face
    a0 = (-half - p) / r
    a1 = (half - p) / r
    if a0 > a1:
        a0, a1 = a1, a0
    if a0 > t0:
        t0 = a0
        face = axis
    return True, t0, min(t1, a1), face


@numba.njit(cache=True, nogil=True, inline="always")
def _box_hit(
    objects: _Objects, k: int, ox: float, oy: float, dx: float, dy: float
) -> tuple[float, float]:
    """Where the ray (dx, dy) from the camera enters box ``k`` (centre ``ox, oy`` from the
    camera), and the face's light; −1 where it misses."""
    cy = math.cos(objects[k, 5])
    sy = math.sin(objects[k, 5])
    # the ray in the box frame
    px = -(cy * ox + sy * oy)
    py = -(-sy * ox + cy * oy)
    rx = cy * dx + sy * dy
    ry = -sy * dx + cy * dy
    ok, t0, t1, face = _slab(px, rx, objects[k, 3] / 2.0, -1e30, 1e30, 0, 0)
    if ok:
        ok, t0, t1, face = _slab(py, ry, objects[k, 4] / 2.0, t0, t1, face, 1)
    if ok and t0 <= t1 and t0 > 0.0:
        return t0, 0.45 + 0.55 * (abs(rx) if face == 0 else abs(ry))
    return -1.0, 1.0


@numba.njit(cache=True, nogil=True, inline="always")
def _cylinder_hit(
    objects: _Objects, k: int, ox: float, oy: float, dx: float, dy: float
) -> tuple[float, float]:
    """:func:`_box_hit` of cylinder ``k``."""
    r = objects[k, 6]
    b = ox * dx + oy * dy
    c = ox * ox + oy * oy - r * r
    disc = b * b - c
    if not (disc >= 0.0 and c > 0.0):
        return -1.0, 1.0
    t_hit = b - math.sqrt(disc)
    nx = (dx * t_hit - ox) / r
    ny = (dy * t_hit - oy) / r
    return t_hit, 0.45 + 0.55 * max(0.0, -(nx * dx + ny * dy))


@numba.njit(cache=True, nogil=True)
def _objects_hit(
    objects: _Objects,
    view: _View,
    ray: _Ray,
    wall_dist: float,
    hits: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int64]],
) -> int:
    """The objects the ray meets before the wall, far first: writes their distances, light and
    indices into ``hits``; returns how many."""
    hits_t, hits_shade, order = hits
    cam_x, cam_y = view[2], view[3]
    dx, dy = ray[0], ray[1]
    count = 0
    for k in range(objects.shape[0]):
        ox = objects[k, 1] - cam_x
        oy = objects[k, 2] - cam_y
        if objects[k, 0] == 1.0:
            t_hit, lit = _cylinder_hit(objects, k, ox, oy, dx, dy)
        else:
            t_hit, lit = _box_hit(objects, k, ox, oy, dx, dy)
        if t_hit > 0.0 and t_hit < wall_dist:
            hits_t[count] = t_hit
            hits_shade[count] = lit
            order[count] = k
            count += 1
    # insertion sort, far first
    for a in range(1, count):
        b = a
        while b > 0 and hits_t[b - 1] < hits_t[b]:
            hits_t[b - 1], hits_t[b] = hits_t[b], hits_t[b - 1]
            hits_shade[b - 1], hits_shade[b] = hits_shade[b], hits_shade[b - 1]
            order[b - 1], order[b] = order[b], order[b - 1]
            b -= 1
    return count


@numba.njit(cache=True, nogil=True)
def _draw_objects(
    out: _Image,
    u: int,
    objects: _Objects,
    view: _View,
    cos_off: float,
    hits: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int64]],
    count: int,
) -> None:
    """The first ``count`` of :func:`_objects_hit`'s hits drawn into column ``u``, far to
    near."""
    hits_t, hits_shade, order = hits
    focal, horizon, _, _, cam_z = view
    for a in range(count):
        k = order[a]
        perp = max(hits_t[a] * cos_off, 1e-3)
        top = horizon - focal * (objects[k, 7] - cam_z) / perp
        bottom = horizon + focal * cam_z / perp
        v0 = max(0, math.ceil(top - 0.5))
        v1 = min(out.shape[0], math.ceil(bottom - 0.5))
        s = hits_shade[a] / (1.0 + 0.02 * hits_t[a])
        for v in range(v0, v1):
            out[v, u, 0] = int(min(255.0, objects[k, 8] * s))
            out[v, u, 1] = int(min(255.0, objects[k, 9] * s))
            out[v, u, 2] = int(min(255.0, objects[k, 10] * s))


@numba.njit(cache=True, nogil=True)
def render_frame(
    out: _Image,
    grid: npt.NDArray[np.bool_],
    origin_x: float,
    origin_y: float,
    resolution: float,
    wall_height: float,
    cam_x: float,
    cam_y: float,
    cam_z: float,
    heading: float,
    tilt: float,
    fov: float,
    objects: _Objects,
) -> None:
    """Render into ``out`` (H×W×3). ``objects`` rows: kind (0 box, 1 cylinder), x, y, size_x,
    size_y, yaw, radius, height, r, g, b."""
    height, width = out.shape[0], out.shape[1]
    focal = (width / 2.0) / math.tan(fov / 2.0)
    view = (focal, height / 2.0 + focal * math.tan(tilt), cam_x, cam_y, cam_z)
    gx = (cam_x - origin_x) / resolution
    gy = (cam_y - origin_y) / resolution
    limit = 60.0 / resolution
    n_obj = objects.shape[0]
    hits = (np.empty(n_obj), np.empty(n_obj), np.empty(n_obj, dtype=np.int64))
    for u in range(width):
        offset = math.atan((width / 2.0 - u - 0.5) / focal)
        angle = heading + offset
        ray = (math.cos(angle), math.sin(angle), math.cos(offset))
        t_cells, face, along = _wall_hit(grid, gx, gy, ray[0], ray[1], limit)
        wall_dist = t_cells * resolution
        _background(out, u, view, ray, (wall_dist, face, along * resolution), wall_height)
        # objects: analytic ray intersections, drawn far to near over the walls
        count = _objects_hit(objects, view, ray, wall_dist, hits)
        _draw_objects(out, u, objects, view, ray[2], hits, count)
