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


@numba.njit(cache=True, nogil=True)
def render_frame(
    out: npt.NDArray[np.uint8],
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
    objects: npt.NDArray[np.float64],
) -> None:
    """Render into ``out`` (H×W×3). ``objects`` rows: kind (0 box, 1 cylinder), x, y, size_x,
    size_y, yaw, radius, height, r, g, b."""
    height, width = out.shape[0], out.shape[1]
    focal = (width / 2.0) / math.tan(fov / 2.0)
    horizon = height / 2.0 + focal * math.tan(tilt)
    gx = (cam_x - origin_x) / resolution
    gy = (cam_y - origin_y) / resolution
    limit = 60.0 / resolution
    n_obj = objects.shape[0]
    hits_t = np.empty(n_obj)
    hits_shade = np.empty(n_obj)
    order = np.empty(n_obj, dtype=np.int64)
    for u in range(width):
        offset = math.atan((width / 2.0 - u - 0.5) / focal)
        angle = heading + offset
        dx = math.cos(angle)
        dy = math.sin(angle)
        cos_off = math.cos(offset)
        t_cells, face, along = _wall_hit(grid, gx, gy, dx, dy, limit)
        wall_dist = t_cells * resolution
        perp = max(wall_dist * cos_off, 1e-3)
        top = horizon - focal * (wall_height - cam_z) / perp
        bottom = horizon + focal * cam_z / perp
        # wall shade: face, distance fade, metre lines along the wall and at mid height
        shade = (1.0 if face == 0 else 0.78) / (1.0 + 0.03 * wall_dist)
        frac = (along * resolution) % 1.0
        line_along = frac < 0.015 or frac > 0.985
        for v in range(height):
            fv = v + 0.5
            if fv < top:
                # ceiling: gradient toward the horizon
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
            else:
                # floor: where this pixel's ray meets z = 0, with a metre grid
                below = fv - horizon
                if below <= 0.0:
                    below = 1e-3
                dist = focal * cam_z / below / cos_off
                fx = cam_x + dx * dist
                fy = cam_y + dy * dist
                ax = fx % 1.0
                ay = fy % 1.0
                w = 0.012 * (1.0 + dist)
                fade = 1.0 / (1.0 + 0.02 * dist)
                if ax < w or ax > 1.0 - w or ay < w or ay > 1.0 - w:
                    out[v, u, 0] = int(_FLOOR_LINE[0] * fade)
                    out[v, u, 1] = int(_FLOOR_LINE[1] * fade)
                    out[v, u, 2] = int(_FLOOR_LINE[2] * fade)
                else:
                    out[v, u, 0] = int(_FLOOR[0] * fade)
                    out[v, u, 1] = int(_FLOOR[1] * fade)
                    out[v, u, 2] = int(_FLOOR[2] * fade)
        # objects: analytic ray intersections, drawn far to near over the walls
        count = 0
        for k in range(n_obj):
            ox = objects[k, 1] - cam_x
            oy = objects[k, 2] - cam_y
            t_hit = -1.0
            lit = 1.0
            if objects[k, 0] == 1.0:
                r = objects[k, 6]
                b = ox * dx + oy * dy
                c = ox * ox + oy * oy - r * r
                disc = b * b - c
                if disc >= 0.0 and c > 0.0:
                    t_hit = b - math.sqrt(disc)
                    nx = (dx * t_hit - ox) / r
                    ny = (dy * t_hit - oy) / r
                    lit = 0.45 + 0.55 * max(0.0, -(nx * dx + ny * dy))
            else:
                cy = math.cos(objects[k, 5])
                sy = math.sin(objects[k, 5])
                # ray in the box frame
                px = -(cy * ox + sy * oy)
                py = -(-sy * ox + cy * oy)
                rx = cy * dx + sy * dy
                ry = -sy * dx + cy * dy
                hx = objects[k, 3] / 2.0
                hy = objects[k, 4] / 2.0
                t0 = -1e30
                t1 = 1e30
                hit_face = 0
                ok = True
                if abs(rx) < 1e-12:
                    if abs(px) > hx:
                        ok = False
                else:
                    a0 = (-hx - px) / rx
                    a1 = (hx - px) / rx
                    if a0 > a1:
                        a0, a1 = a1, a0
                    if a0 > t0:
                        t0 = a0
                        hit_face = 0
                    t1 = min(t1, a1)
                if ok:
                    if abs(ry) < 1e-12:
                        if abs(py) > hy:
                            ok = False
                    else:
                        b0 = (-hy - py) / ry
                        b1 = (hy - py) / ry
                        if b0 > b1:
                            b0, b1 = b1, b0
                        if b0 > t0:
                            t0 = b0
                            hit_face = 1
                        t1 = min(t1, b1)
                if ok and t0 <= t1 and t0 > 0.0:
                    t_hit = t0
                    lit = abs(rx) if hit_face == 0 else abs(ry)
                    lit = 0.45 + 0.55 * lit
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
        for a in range(count):
            k = order[a]
            perp_o = max(hits_t[a] * cos_off, 1e-3)
            o_top = horizon - focal * (objects[k, 7] - cam_z) / perp_o
            o_bottom = horizon + focal * cam_z / perp_o
            v0 = max(0, math.ceil(o_top - 0.5))
            v1 = min(height, math.ceil(o_bottom - 0.5))
            s = hits_shade[a] / (1.0 + 0.02 * hits_t[a])
            for v in range(v0, v1):
                out[v, u, 0] = int(min(255.0, objects[k, 8] * s))
                out[v, u, 1] = int(min(255.0, objects[k, 9] * s))
                out[v, u, 2] = int(min(255.0, objects[k, 10] * s))
